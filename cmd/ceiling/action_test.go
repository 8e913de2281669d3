package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestActionInputErrors: a bad input exits 2 before anything runs, naming
// the input (and its flag).
func TestActionInputErrors(t *testing.T) {
	for _, c := range []struct {
		event string
		args  []string
		want  string
	}{
		{"push", []string{"--mode", "deploy"}, `input mode (--mode): "deploy" is none of auto, sweep, compare, comment, publish`},
		{"pull_request_target", nil, "auto on pull_request_target: never"},
		// Explicit modes too (issue 35): each would run or read what the
		// pull request wrote, with the base repository's secrets.
		{"pull_request_target", []string{"--mode", "compare"}, "compare on pull_request_target: never"},
		{"pull_request_target", []string{"--mode", "sweep"}, "sweep on pull_request_target: never"},
		{"pull_request_target", []string{"--mode", "comment"}, "comment on pull_request_target: never"},
		{"pull_request_target", []string{"--mode", "publish"}, "publish on pull_request_target: never"},
		{"issue_comment", nil, `auto has no mode for the event "issue_comment"`},
		{"push", []string{"--name", "a b"}, `input name (--name): "a b"`},
		{"push", []string{"--fail-on", "faster"}, "input fail-on (--fail-on)"},
		{"push", []string{"--cpus", "1-3"}, `input cpus (--cpus): "1-3" is not SERVER/GENERATOR`},
		{"push", []string{"--cpus", "x/0"}, "input cpus (--cpus)"},
		{"pull_request", []string{"--target", ""}, "input target (--target): empty"},
		{"push", []string{"--quick=maybe"}, "quick"},
		{"pull_request", []string{"--server-user", "a;b"}, `input server-user (--server-user): "a;b" is not a user name or uid`},
	} {
		t.Setenv("GITHUB_EVENT_NAME", c.event)
		_, stderr, code := runCLI(t, "", append([]string{"action"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %v: exit %d, stderr %q; want 2 naming %q", c.event, c.args, code, stderr, c.want)
		}
	}
}

// TestActionPublishModeNeedsItsInputs: mode publish commits an earlier
// job's result and nothing else: without a token, or without the
// downloaded artifact, it exits 2 naming what is missing.
func TestActionPublishModeNeedsItsInputs(t *testing.T) {
	temp := t.TempDir()
	t.Setenv("GITHUB_EVENT_NAME", "push")
	t.Setenv("RUNNER_TEMP", temp)
	t.Setenv("GITHUB_WORKSPACE", t.TempDir())
	t.Setenv("GITHUB_OUTPUT", filepath.Join(temp, "output"))
	t.Setenv("GITHUB_TOKEN", "")
	_, stderr, code := runCLI(t, "", "action", "--mode", "publish", "--data-branch", "main")
	if code != 2 || !strings.Contains(stderr, "input github-token: empty, and publish mode pushes with it") {
		t.Errorf("without a token: exit %d, %q", code, stderr)
	}
	t.Setenv("GITHUB_TOKEN", "tok")
	_, stderr, code = runCLI(t, "", "action", "--mode", "publish", "--data-branch", "main", "--name", "node")
	if code != 2 || !strings.Contains(stderr, "the sweep job's artifact ceiling-node (mode sweep with publish: false) was not downloaded") {
		t.Errorf("without the artifact: exit %d, %q", code, stderr)
	}
}

func TestActionResolvesMode(t *testing.T) {
	for event, want := range map[string]string{"push": "sweep", "schedule": "sweep", "workflow_dispatch": "sweep", "pull_request": "compare", "workflow_run": "comment"} {
		t.Setenv("GITHUB_EVENT_NAME", event)
		stdout, stderr, code := runCLI(t, "", "action", "--resolve-mode")
		if code != 0 || stdout != "mode="+want+"\n" {
			t.Errorf("%s: %q (exit %d, %s), want mode=%s", event, stdout, code, stderr, want)
		}
	}
	t.Setenv("GITHUB_EVENT_NAME", "push")
	if stdout, _, _ := runCLI(t, "", "action", "--mode", "compare", "--resolve-mode"); stdout != "mode=compare\n" {
		t.Errorf("an explicit mode: %q", stdout)
	}
}

// TestCISplit is bench.yml's split, as it was in shell: 2 and 3 CPUs
// give the generator the first one or two; from 4, the server gets
// m*100/183 of m CPUs (m = all for a sweep, half for a comparison's duet).
func TestCISplit(t *testing.T) {
	seq := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	}
	for _, c := range []struct {
		n        int
		compare  bool
		srv, gen string
	}{
		{2, false, "1", "0"}, {2, true, "1", "0"}, {3, false, "2", "0,1"},
		{4, false, "2,3", "0,1"}, {4, true, "1", "0"},
		{8, false, "4,5,6,7", "0,1,2,3"}, {8, true, "2,3", "0,1"},
		{16, true, "4,5,6,7", "0,1,2,3"},
	} {
		srv, gen, how, err := ciSplit(seq(c.n), c.compare)
		if err != nil || srv != c.srv || gen != c.gen {
			t.Errorf("%d CPUs (compare %v): server %q generator %q (%s, %v); want %q and %q", c.n, c.compare, srv, gen, how, err, c.srv, c.gen)
		}
	}
	if _, _, _, err := ciSplit([]int{0}, false); err == nil || !strings.Contains(err.Error(), "1 CPU") {
		t.Errorf("1 CPU: %v", err)
	}
	// The CPUs granted, not 0..n-1.
	if srv, gen, _, _ := ciSplit([]int{2, 5}, false); srv != "5" || gen != "2" {
		t.Errorf("CPUs 2 and 5: server %s, generator %s", srv, gen)
	}
}

// TestWithDir: each arm's target file is the template with its dir under
// that arm's checkout, every other field kept; an absolute dir would run
// one build for both arms, and is refused.
func TestWithDir(t *testing.T) {
	d := t.TempDir()
	src, dst := filepath.Join(d, "t.json"), filepath.Join(d, "out.json")
	write := func(s string) {
		if err := os.WriteFile(src, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"name": "s", "command": ["bin/server", "{addr}"], "echo_url": "ws://{addr}/echo", "future_field": {"x": 1}}`)
	if err := withDir(src, dst, "/w/head", ""); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	b, _ := os.ReadFile(dst)
	_ = json.Unmarshal(b, &got)
	if got["dir"] != "/w/head" || got["echo_url"] != "ws://{addr}/echo" || got["future_field"] == nil || got["name"] != "s" {
		t.Errorf("got %s", b)
	}
	// An arm named by its ref: one repository's two arms would
	// otherwise both bear the target's name.
	if err := withDir(src, dst, "/w/head", "head@0123456"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(dst)
	if !strings.Contains(string(b), `"name": "head@0123456"`) {
		t.Errorf("named arm: %s", b)
	}
	write(`{"name": "s", "dir": "server", "command": ["bin/server", "{addr}"]}`)
	if err := withDir(src, dst, "/w/base", ""); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(dst)
	if !strings.Contains(string(b), `"dir": "/w/base/server"`) {
		t.Errorf("relative dir: %s", b)
	}
	write(`{"name": "s", "dir": "/opt/server", "command": ["bin/server", "{addr}"]}`)
	if err := withDir(src, dst, "/w/base", ""); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("absolute dir: %v", err)
	}
}

const actionHead = "0123456789abcdef0123456789abcdef01234567"

// fakeRepoAPI is the GitHub API of o/r as comment mode sees it: pull
// request 3 open with head (actionHead unless moved), its comments,
// and the open pull requests. It checks the token on every request and
// records each one; anything else is an error.
type fakeRepoAPI struct {
	mu       sync.Mutex
	requests []string
	posted   string
	moved    bool
}

func (f *fakeRepoAPI) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		if got := r.Header.Get("Authorization"); got != "Bearer "+cliToken {
			t.Errorf("%s %s: Authorization %q", r.Method, r.URL.Path, got)
		}
		head := actionHead
		if f.moved {
			head = strings.Repeat("f", 40)
		}
		b, _ := io.ReadAll(r.Body)
		switch r.Method + " " + r.URL.Path {
		case "GET /repos/o/r/pulls/3":
			fmt.Fprintf(w, `{"number": 3, "state": "open", "head": {"sha": %q}, "base": {"sha": %q}}`, head, strings.Repeat("b", 40))
		case "GET /repos/o/r/pulls":
			if r.URL.Query().Get("state") != "open" {
				t.Errorf("listed pull requests %q, want state=open", r.URL.RawQuery)
			}
			fmt.Fprintf(w, `[{"number": 3, "head": {"sha": %q}}, {"number": 4, "head": {"sha": %q}}]`, head, strings.Repeat("c", 40))
		case "GET /repos/o/r/issues/3/comments":
			fmt.Fprint(w, `[{"id": 9, "user": {"login": "github-actions[bot]"}, "body": "<!-- ceiling:comment generator=ceiling-load -->\nold"}]`)
		case "PATCH /repos/o/r/issues/comments/9":
			f.posted = string(b)
			fmt.Fprint(w, `{"id": 9, "html_url": "https://example/c/9"}`)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// commentEnv lays out a comment-mode job: the workflow_run event, the
// outputs, and each artifact (name -> file -> content).
func commentEnv(t *testing.T, api string, artifacts map[string]map[string]string) {
	d := t.TempDir()
	ev := filepath.Join(d, "event.json")
	b, _ := json.Marshal(map[string]any{"workflow_run": map[string]string{"event": "pull_request", "head_sha": actionHead, "conclusion": "success", "html_url": "https://github.com/o/r/actions/runs/5"}})
	if err := os.WriteFile(ev, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, files := range artifacts {
		dir := filepath.Join(d, "ceiling-action", "artifacts", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, content := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k, v := range map[string]string{
		"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": ev, "GITHUB_OUTPUT": filepath.Join(d, "output"),
		"GITHUB_STEP_SUMMARY": "", "GITHUB_WORKSPACE": d, "RUNNER_TEMP": d, "GITHUB_REPOSITORY": "o/r",
		"GITHUB_API_URL": api, "GITHUB_TOKEN": cliToken, "CEILING_TEST_AS_CEILING": "1", "GITHUB_RUN_ID": "6",
	} {
		t.Setenv(k, v)
	}
}

// TestActionCommentMode: the compare run's artifact, its pull request
// verified against the API, becomes the one comment (edited in place),
// and the step fails on the slower headline; the token shows nowhere.
func TestActionCommentMode(t *testing.T) {
	result, err := os.ReadFile(publishFixtures + "two_arm_slower.json")
	if err != nil {
		t.Fatal(err)
	}
	api := &fakeRepoAPI{}
	commentEnv(t, api.serve(t).URL, map[string]map[string]string{"ceiling-pr-ceiling-load": {"pr-number": "3\n", "result.json": string(result)}})
	stdout, stderr, code := runCLI(t, "", "action", "--data-branch", "")
	if code != 1 || !strings.Contains(api.posted, "**slower**") {
		t.Fatalf("exit %d (want 1: fail-on slower), posted %.200q\nstderr %s", code, api.posted, stderr)
	}
	want := "[GET /repos/o/r/pulls/3 GET /repos/o/r/issues/3/comments PATCH /repos/o/r/issues/comments/9]"
	if fmt.Sprint(api.requests) != want {
		t.Errorf("requests %v, want %s", api.requests, want)
	}
	if strings.Contains(stdout+stderr, cliToken) {
		t.Error("the token leaked")
	}
}

// TestActionCommentUntrusted: an artifact's pull request number that is
// not a number is refused before any request; one that names a pull
// request whose head moved on is left alone; a run with no artifact
// marks the comment of the pull request with its head stale.
func TestActionCommentUntrusted(t *testing.T) {
	api := &fakeRepoAPI{}
	commentEnv(t, api.serve(t).URL, map[string]map[string]string{"ceiling-pr-ceiling-load": {"pr-number": "3; curl evil"}})
	_, stderr, code := runCLI(t, "", "action", "--data-branch", "")
	if code != 1 || len(api.requests) != 0 || !strings.Contains(stderr, "not a positive integer") {
		t.Errorf("a hostile pr-number: exit %d, requests %v, stderr %q", code, api.requests, stderr)
	}

	api = &fakeRepoAPI{moved: true}
	commentEnv(t, api.serve(t).URL, map[string]map[string]string{"ceiling-pr-ceiling-load": {"pr-number": "3", "result.json": "{}"}})
	_, stderr, code = runCLI(t, "", "action", "--data-branch", "")
	if code != 0 || fmt.Sprint(api.requests) != "[GET /repos/o/r/pulls/3]" || !strings.Contains(stderr, "nothing to do") {
		t.Errorf("a pull request that moved on: exit %d, requests %v, stderr %q", code, api.requests, stderr)
	}

	api = &fakeRepoAPI{}
	commentEnv(t, api.serve(t).URL, nil)
	_, stderr, code = runCLI(t, "", "action", "--data-branch", "")
	if code != 0 || !strings.Contains(api.posted, "ceiling:stale") || fmt.Sprint(api.requests) != "[GET /repos/o/r/pulls GET /repos/o/r/issues/3/comments PATCH /repos/o/r/issues/comments/9]" {
		t.Errorf("no artifact: exit %d, requests %v, patched %.200q\n%s", code, api.requests, api.posted, stderr)
	}
}

// TestPushRemote: the token is the password of an http(s) remote only,
// and the repository must be owner/name.
func TestPushRemote(t *testing.T) {
	for _, c := range []struct{ server, repo, want, err string }{
		{"https://github.com", "o/r", "https://x-access-token:tok@github.com/o/r.git", ""},
		{"https://ghe.example/", "o/r", "https://x-access-token:tok@ghe.example/o/r.git", ""},
		{"file:///srv/git", "o/r", "file:///srv/git/o/r.git", ""},
		{"https://github.com", "o/../../r", "", "not owner/name"},
		{"https://github.com", "r", "", "not owner/name"},
		{"::", "o/r", "", "not a URL"},
	} {
		got, err := pushRemote(c.server, c.repo, "tok")
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("pushRemote(%q, %q) = %q, %v; want %q, %q", c.server, c.repo, got, err, c.want, c.err)
		}
	}
}

// TestIsolateHeadReachesTheCheckout: with input server-user, compare mode
// makes every directory above the head's checkout searchable by others
// (not readable), so that the pull request's server, run as that user,
// can exec its program; it logs each one, and puts each mode back when
// the sweep is over. Empty, it warns instead.
func TestIsolateHeadReachesTheCheckout(t *testing.T) {
	testenv.NeedRoot(t, "the directories made for the test belong to root and are made searchable by nobody")
	top := t.TempDir()
	head := filepath.Join(top, "work", "head")
	if err := os.MkdirAll(head, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{top, filepath.Join(top, "work")} {
		if err := os.Chmod(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	a := &actionRun{c: actionConfig{serverUser: "nobody"}, stderr: &log}
	prefix, restore, err := a.isolateHead(head)
	if err != nil || prefix != nil {
		t.Fatalf("isolateHead = %v, %v; want no prefix as root", prefix, err)
	}
	for _, d := range []string{top, filepath.Join(top, "work")} {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm() != 0o701 {
			t.Errorf("%s: mode %v, %v; want 0701 (searchable, not readable, by others)", d, st.Mode().Perm(), err)
		}
		if !strings.Contains(log.String(), d+" made searchable by others (mode 701) until the sweep ends") {
			t.Errorf("the log does not name %s: %q", d, log.String())
		}
	}
	probe := exec.Command("/bin/sh", "-c", `test -d "$0"`, head)
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	if out, err := probe.CombinedOutput(); err != nil {
		t.Errorf("nobody cannot reach %s: %v %s", head, err, out)
	}
	// When the sweep is over, each directory has its mode back.
	restore()
	for _, d := range []string{top, filepath.Join(top, "work")} {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s after restore: mode %v, %v; want 0700 again", d, st.Mode().Perm(), err)
		}
		if !strings.Contains(log.String(), d+" put back to mode 700") {
			t.Errorf("the log does not say %s was put back: %q", d, log.String())
		}
	}
	log.Reset()
	a.c.serverUser = ""
	if prefix, _, err := a.isolateHead(head); err != nil || prefix != nil || !strings.Contains(log.String(), "runs as the runner's user, and could rewrite the verdict") {
		t.Errorf("server-user empty: %v, %v, %q; want a warning", prefix, err, log.String())
	}
}

// TestTargetBuild: an empty build input is the target file's "build"
// (ceiling init writes it); none without one, or without a file.
func TestTargetBuild(t *testing.T) {
	dir := t.TempDir()
	with, without := filepath.Join(dir, "with.json"), filepath.Join(dir, "without.json")
	if err := os.WriteFile(with, []byte(`{"name":"s","command":["./s"],"url":"ws://{addr}","build":"go build -o s ."}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(without, []byte(`{"name":"s","command":["./s"],"url":"ws://{addr}"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{with: "go build -o s .", without: "", filepath.Join(dir, "absent.json"): ""} {
		if got := targetBuild(path); got != want {
			t.Errorf("targetBuild(%s) = %q, want %q", filepath.Base(path), got, want)
		}
	}
}
