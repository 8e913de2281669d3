package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Distinctive secrets: one from the environment (as GITHUB_TOKEN would be),
// one marked secret in the target file the sweep ran.
const (
	envSecret    = "envSECRET_4f1d_must_never_be_published"
	targetSecret = "tgtSECRET_9a7c_must_never_be_published"
)

// secretDocument is base.json measured at ref, with envSecret on the
// server's command line (meta.command) and targetSecret in a failed
// point's log tail: the two routes of issue 8 item 1.
func secretDocument(t *testing.T, ref string) []byte {
	t.Helper()
	raw, err := os.ReadFile(publishFixtures + "base.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	meta := doc["meta"].(map[string]any)
	meta["git_ref"] = ref
	meta["command"] = []any{"bin/ceiling", "sweep", "--server-cmd", "bin/refserver --addr {addr} --secret " + envSecret}
	curve := doc["curve"].([]any)
	curve[1].(map[string]any)["log_tail"] = "config: secret=" + targetSecret + "\nlistening\n"
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func secretTarget(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../benchmark/targets/refserver.json")
	if err != nil {
		t.Fatal(err)
	}
	var target map[string]any
	if err := json.Unmarshal(raw, &target); err != nil {
		t.Fatal(err)
	}
	target["secrets"] = []string{targetSecret}
	b, _ := json.Marshal(target)
	p := filepath.Join(t.TempDir(), "target.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gitState is every ref and every object of a repository.
func gitState(t *testing.T, dir string) string {
	t.Helper()
	return gitCmd(t, dir, "for-each-ref") + "\n--\n" + gitCmd(t, dir, "cat-file", "--batch-all-objects", "--batch-check")
}

// Issue 8 item 1, publish side: a document holding a configured secret is
// refused (exit 2) naming the fields, nothing reaches the remote (not a
// ref, not an object), and no output carries the secret.
func TestPublishCommitRefusesSecrets(t *testing.T) {
	t.Setenv("CEILING_TEST_API_TOKEN", envSecret)
	root := t.TempDir()
	gitCmd(t, root, "init", "--quiet", "--bare", "remote.git")
	gitCmd(t, root, "clone", "--quiet", "remote.git", "work")
	work, remote := filepath.Join(root, "work"), filepath.Join(root, "remote.git")
	gitCmd(t, work, "commit", "--quiet", "--allow-empty", "-m", "first")
	gitCmd(t, work, "push", "--quiet", "origin", "HEAD:main")
	doc := secretDocument(t, gitCmd(t, work, "rev-parse", "HEAD"))
	target := secretTarget(t)
	remoteBefore, workBefore := gitState(t, remote), gitState(t, work)

	for _, tt := range []struct {
		name  string
		args  []string
		paths []string
	}{
		// The log tail that holds one is published only with --log-tails,
		// and only then refused for it.
		{"environment and target, log tails", []string{"--target", target, "--log-tails"}, []string{"curve[1].log_tail", "meta.command[3]"}},
		{"environment and target", []string{"--target", target}, []string{"meta.command[3]"}},
		{"environment only", nil, []string{"meta.command[3]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"publish", "commit", "--repo", work, "--verbose"}, tt.args...), "-")
			stdout, stderr, code := runCLI(t, string(doc), args...)
			if code != 2 {
				t.Errorf("status %d, want 2\n%s", code, stderr)
			}
			for _, p := range tt.paths {
				if !strings.Contains(stderr, p) {
					t.Errorf("stderr does not name %s: %s", p, stderr)
				}
			}
			for _, s := range []string{envSecret, targetSecret} {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("a secret is in the output:\nstdout %s\nstderr %s", stdout, stderr)
				}
			}
		})
	}
	if got := gitState(t, remote); got != remoteBefore {
		t.Errorf("the remote changed:\nbefore %s\nafter %s", remoteBefore, got)
	}
	if got := gitState(t, work); got != workBefore {
		t.Errorf("the checkout changed (objects written):\nbefore %s\nafter %s", workBefore, got)
	}
	out, err := runGit(remote, "grep", "-I", "-e", envSecret, "-e", targetSecret, "main")
	if err == nil || out != "" {
		t.Errorf("a secret is on the remote's main: %q", out)
	}

	// Without the secrets configured, the same document is published: the
	// refusal came from the check, not from something else in it.
	t.Setenv("CEILING_TEST_API_TOKEN", "")
	if _, stderr, code := runCLI(t, string(doc), "publish", "commit", "--repo", work, "-"); code != 0 {
		t.Errorf("unconfigured: status %d, want 0\n%s", code, stderr)
	}
}

// A pull request's result holding a secret is not rendered, written or
// posted: exit 2, no API request, no --out file.
func TestPublishCommentRefusesSecrets(t *testing.T) {
	t.Setenv("CEILING_TEST_TOKEN", "ghp_commentTOKEN_0123456789abcdef")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected API request %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	head := filepath.Join(dir, "head.json")
	if err := os.WriteFile(head, secretDocument(t, strings.Repeat("1", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "comment.md")
	stdout, stderr, code := runCLI(t, "", "publish", "comment", "--head", head, "--target", secretTarget(t),
		"--base", publishFixtures+"base.json", "--repo", "o/r", "--pr", "3", "--token-env", "CEILING_TEST_TOKEN",
		"--summary-file", "", "--out", out, "--api-url", srv.URL)
	if code != 2 || !strings.Contains(stderr, "curve[1].log_tail") {
		t.Errorf("status %d, stderr %q; want 2 naming curve[1].log_tail", code, stderr)
	}
	if strings.Contains(stdout+stderr, targetSecret) {
		t.Errorf("the secret is in the output: %s %s", stdout, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("--out was written")
	}
	// A target file that cannot be read is bad input, named.
	_, stderr, code = runCLI(t, "", "publish", "comment", "--head", head, "--dry-run", "--target", filepath.Join(dir, "none.json"))
	if code != 2 || !strings.Contains(stderr, "--target") {
		t.Errorf("missing target file: status %d, stderr %q; want 2 naming --target", code, stderr)
	}
	// The token itself counts as a secret even when its variable's name
	// does not say so.
	tokenDoc := bytes.ReplaceAll(secretDocument(t, strings.Repeat("1", 40)), []byte(envSecret), []byte("ghp_commentTOKEN_0123456789abcdef"))
	if err := os.WriteFile(head, tokenDoc, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CEILING_TEST_TOKEN", "")
	t.Setenv("CEILING_GH_AUTH", "ghp_commentTOKEN_0123456789abcdef")
	_, stderr, code = runCLI(t, "", "publish", "comment", "--head", head, "--dry-run", "--token-env", "CEILING_GH_AUTH")
	if code != 2 || !strings.Contains(stderr, "meta.command[3]") || strings.Contains(stderr, "ghp_commentTOKEN") {
		t.Errorf("status %d, stderr %q; want 2 naming meta.command[3], without the token", code, stderr)
	}
}

// runGit runs git in dir and returns its output and error (a status other
// than 0 included) without failing the test.
func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
