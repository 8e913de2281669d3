package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestInitBadFlags: every bad flag exits 2 naming it, and nothing is
// written.
func TestInitBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--server-cmd: required"},
		{[]string{"--server-cmd", "bin/server --listen 127.0.0.1:8080"}, "has no {addr} or {port}"},
		{[]string{"--server-cmd", "bin/server {addr}", "--build", "make ${{ github.token }}"}, "--build: \"make ${{ github.token }}\" holds ${{"},
		{[]string{"--server-cmd", "bin/server {addr}", "--scenario", "fanout"}, "needs --app-id, --key and --secret"},
		{[]string{"--server-cmd", "bin/server {addr}", "--scenario", "nats"}, `--scenario: "nats"`},
		{[]string{"--server-cmd", "bin/server {addr}", "--ready", "udp:{addr}"}, "ready"},
		{[]string{"--server-cmd", "bin/server {addr}", "--action-ref", "v1; rm"}, "--action-ref"},
		{[]string{"--server-cmd", "bin/server {addr}", "--dir", filepath.Join(dir, "nope")}, "--dir"},
		{[]string{"--server-cmd", "bin/server {addr}", "--check=perhaps"}, "check"},
	} {
		args := append([]string{"init", "--dir", dir}, c.args...)
		_, stderr, code := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, stderr, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a refused init wrote %v", ents)
	}
}

// TestInitWrites: the target loads as the sweep loads it, the workflows
// use the action at the ref and with the build; a second init refuses to
// overwrite without --force, and with it rewrites.
func TestInitWrites(t *testing.T) {
	dir := t.TempDir()
	args := []string{"init", "--dir", dir, "--server-cmd", "bin/server --listen {addr}", "--build", `make "server"`, "--check=false", "--branch", "trunk", "--action-ref", "v1.2.3"}
	stdout, stderr, code := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range initFiles {
		if !strings.Contains(stdout, "wrote "+f) {
			t.Errorf("stdout does not list %s:\n%s", f, stdout)
		}
	}
	var tgt map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "bench/target.json"))
	if err := json.Unmarshal(b, &tgt); err != nil || tgt["echo_url"] != "ws://{addr}/echo" || tgt["ready"] != "tcp:{addr}" || tgt["build"] != `make "server"` {
		t.Errorf("target %s (%v)", b, err)
	}
	wf, _ := os.ReadFile(filepath.Join(dir, ".github/workflows/ceiling.yml"))
	for _, want := range []string{"branches: [\"trunk\"]", "uses: ceiling-bench/ceiling@v1.2.3", `with: {build: "make \"server\""}`, "fetch-depth: 0", "pull_request:"} {
		if !strings.Contains(string(wf), want) {
			t.Errorf("ceiling.yml has no %q:\n%s", want, wf)
		}
	}
	if strings.Contains(string(wf), "pull_request_target") {
		t.Error("pull_request_target in the workflow")
	}
	_, stderr, code = runCLI(t, "", args...)
	if code != 2 || !strings.Contains(stderr, "bench/target.json exists") {
		t.Errorf("second init: exit %d, %q; want 2, refusing to overwrite", code, stderr)
	}
	if _, stderr, code = runCLI(t, "", append(args, "--force", "--scenario", "fanout", "--app-id", "1", "--key", "k", "--secret", "s3cret-value")...); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "bench/target.json"))
	if !strings.Contains(string(b), `"secrets": [`) || !strings.Contains(string(b), `"fanout": {`) {
		t.Errorf("fanout target: %s", b)
	}
}

// defaultActionRef pins the release this binary is, else the commit it
// was built from (saying when it had local changes), and main only when
// it knows neither, saying so.
func TestDefaultActionRef(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	built := func(kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	tests := []struct {
		version, commit string
		bi              *debug.BuildInfo
		ref             string
		why             string
	}{
		{"v1.4.2", "", built("vcs.revision", sha), "v1.4.2", "release"},
		{"v0.0.0-20261203120000-0123456789ab", "", built("vcs.revision", sha, "vcs.modified", "false"), sha, "the commit this ceiling was built from"},
		{"dev (0123456789ab-dirty)", "", built("vcs.revision", sha, "vcs.modified", "true"), sha, "had local changes"},
		{"v1.4.2-3-gabcdef0", "", built("vcs.revision", "abcdef0"), "main", "knows neither"}, // not a full SHA
		{"dev", "", nil, "main", "pin a release tag or a commit SHA"},
		// make build with -buildvcs=false: no revision in the build
		// info, the full commit the Makefile embeds.
		{"0123456", sha, built("-buildvcs", "false"), sha, "the commit this ceiling was built from"},
		{"0123456-dirty", sha, built("-buildvcs", "false"), sha, "had local changes"},
		{"0123456", "0123456", nil, "main", "knows neither"}, // a short commit is not a pin
	}
	for _, tt := range tests {
		ref, why := defaultActionRef(tt.version, tt.commit, tt.bi)
		if ref != tt.ref || !strings.Contains(why, tt.why) {
			t.Errorf("defaultActionRef(%q) = %q (%s), want %q (%s)", tt.version, ref, why, tt.ref, tt.why)
		}
	}
}

// TestInitFailedCheckSaysForce: a check that fails after init wrote its
// files (here the build) says how to run init again, which without
// --force refuses to overwrite them; and what init prints keeps within
// 100 columns.
func TestInitFailedCheckSaysForce(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := runCLI(t, "", "init", "--dir", dir, "--server-cmd", "bin/server --listen {addr}", "--build", "exit 3", "--action-ref", "v1.2.3")
	if code != 1 || !strings.Contains(stderr, "--build \"exit 3\" failed") || !strings.Contains(stderr, "run ceiling init again with --force") {
		t.Errorf("exit %d, stderr %q; want 1, the build named and --force", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench/target.json")); err != nil {
		t.Errorf("the target was not written: %v", err)
	}
	stdout2, stderr2, _ := runCLI(t, "", "init", "--dir", t.TempDir(), "--server-cmd", "bin/server --listen {addr}", "--check=false")
	if !strings.Contains(stdout2, "\n  git add bench/target.json .github/workflows/ceiling.yml .github/workflows/ceiling-comment.yml\n") {
		t.Errorf("init's next step is not one whole command on a line:\n%s", stdout2)
	}
	for _, out := range []string{stdout, stdout2, stderr2} {
		for _, line := range strings.Split(out, "\n") {
			if n := len([]rune(line)); n > 100 {
				t.Errorf("a line of %d columns: %q", n, line)
			}
		}
	}
}
