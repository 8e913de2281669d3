package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const publishFixtures = "../../publish/testdata/"

func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	old := publishStdin
	publishStdin = strings.NewReader(stdin)
	t.Cleanup(func() { publishStdin = old })
	var o, e bytes.Buffer
	err := run(args, &o, &e)
	if err != nil {
		fmt.Fprintln(&e, "ceiling:", err) // main wraps it within 100 columns (TestErrorText)
		code = exitCode(err)
	}
	return o.String(), e.String(), code
}

func TestPublishExitStatus(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"publish"}, 2, "say commit or comment"},
		{[]string{"publish", "nope"}, 2, `unknown subcommand "nope"`},
		{[]string{"publish", "commit"}, 2, "want one RESULT.json"},
		{[]string{"publish", "commit", "--repo", dir, publishFixtures + "bad_missing_verdict.json"}, 2, "curve[3].verdict: missing"},
		{[]string{"publish", "commit", "--repo", dir, publishFixtures + "bad_version.json"}, 2, "schema_version: unsupported version 3"},
		{[]string{"publish", "commit", "--repo", dir, filepath.Join(dir, "absent.json")}, 2, "absent.json"},
		{[]string{"publish", "commit", "--repo", filepath.Join(dir, "nope"), publishFixtures + "base.json"}, 2, "--repo"},
		{[]string{"publish", "commit", "--history-max", "0", publishFixtures + "base.json"}, 2, "--history-max"},
		{[]string{"publish", "commit", "--repo", dir, "--path", "../x.json", publishFixtures + "base.json"}, 2, "--path"},
		{[]string{"publish", "commit", "--repo", dir, publishFixtures + "no_headline.json"}, 1, "no clean headline"},
		{[]string{"publish", "commit", "--repo", dir, publishFixtures + "base.json"}, 1, `meta.git_ref "1111111111111111111111111111111111111111" names no commit: no such commit`},
		{[]string{"publish", "comment"}, 2, "--head: required"},
		{[]string{"publish", "comment", "--head", publishFixtures + "base.json", "--repo", "justname", "--pr", "1"}, 2, "--repo"},
		{[]string{"publish", "comment", "--head", publishFixtures + "base.json", "--repo", "o/r"}, 2, "--pr"},
		{[]string{"publish", "comment", "--head", publishFixtures + "base.json", "--dry-run", "--marker", "x --> y"}, 2, "--marker"},
		{[]string{"publish", "comment", "--head", publishFixtures + "bad_headline_batch.json", "--dry-run"}, 2, "headline.batch: 50 is not in config.batch_ladder"},
		{[]string{"publish", "comment", "--head", "-", "--dry-run"}, 2, "stdin: document: empty"},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, "", tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("ceiling %s: status %d, stderr %q; want %d and %q", strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
		}
	}
}

func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestPublishCommitFromStdin publishes through the CLI into a real bare
// repository, reading the result from stdin.
func TestPublishCommitFromStdin(t *testing.T) {
	root := t.TempDir()
	gitCmd(t, root, "init", "--quiet", "--bare", "remote.git")
	gitCmd(t, root, "clone", "--quiet", "remote.git", "work")
	work := filepath.Join(root, "work")
	gitCmd(t, work, "commit", "--quiet", "--allow-empty", "-m", "first")
	gitCmd(t, work, "push", "--quiet", "origin", "HEAD:main")

	raw, err := os.ReadFile(publishFixtures + "base.json")
	if err != nil {
		t.Fatal(err)
	}
	// The measured commit must be one the checkout has.
	head := gitCmd(t, work, "rev-parse", "HEAD")
	raw = bytes.ReplaceAll(raw, []byte("1111111111111111111111111111111111111111"), []byte(head))
	summary := filepath.Join(root, "summary.md")
	stdout, stderr, code := runCLI(t, string(raw), "publish", "commit", "--repo", work, "--summary-file", summary, "-")
	if code != 0 {
		t.Fatalf("status %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "published ceiling-load measured at "+head) {
		t.Errorf("stdout = %q", stdout)
	}
	// The job summary: a heading, the run's table and its chart.
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### ceiling publish commit&#58; ceiling\\-load measured at " + head, "| 10 | 150,000", "```mermaid"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("job summary has no %q:\n%s", want, md)
		}
	}
	got := gitCmd(t, filepath.Join(root, "remote.git"), "show", "main:benchmark/published/ceiling-load.json")
	if got != strings.TrimSpace(string(raw)) {
		t.Errorf("published file differs from the input")
	}
	stdout, _, code = runCLI(t, string(raw), "publish", "commit", "--repo", work, "-")
	if code != 0 || !strings.Contains(stdout, "nothing to commit") {
		t.Errorf("second publish: status %d, stdout %q; want nothing to commit", code, stdout)
	}
}

const cliToken = "ghp_CLITOKEN_must_never_show_0123456789"

// TestPublishCommentNoToken: without a token the step succeeds and leaves
// the Markdown in the summary and the artifact file.
func TestPublishCommentNoToken(t *testing.T) {
	t.Setenv("CEILING_TEST_TOKEN", "")
	dir := t.TempDir()
	summary, out := filepath.Join(dir, "summary.md"), filepath.Join(dir, "comment.md")
	_, stderr, code := runCLI(t, "", "publish", "comment", "--head", publishFixtures+"head_same.json",
		"--base", publishFixtures+"base.json", "--repo", "o/r", "--pr", "3", "--token-env", "CEILING_TEST_TOKEN",
		"--summary-file", summary, "--out", out, "--api-url", "http://127.0.0.1:1/")
	if code != 0 || !strings.Contains(stderr, "$CEILING_TEST_TOKEN is empty") {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	// The artifact file is the comment; the job summary leads with the
	// gate's outcome (a cross-run comparison cannot conclude: no gate
	// asked for here passes it), then holds the comment once.
	b, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(b), "<!-- ceiling:comment generator=ceiling-load -->") {
		t.Errorf("%s: %v, %.60q", out, err, b)
	}
	sb, err := os.ReadFile(summary)
	if err != nil || !strings.HasPrefix(string(sb), "**The check passes** (`--fail-on ") || strings.Count(string(sb), "<!-- ceiling:comment") != 1 {
		t.Errorf("%s: %v, %.120q", summary, err, sb)
	}
}

// TestPublishCommentFork403 runs the whole command against a fake API that
// answers like a fork's read-only token, and echoes the Authorization
// header back: the step still succeeds, and the token appears nowhere.
func TestPublishCommentFork403(t *testing.T) {
	t.Setenv("CEILING_TEST_TOKEN", cliToken)
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.Method+" "+r.URL.Path)
		io.Copy(io.Discard, r.Body)
		if r.Method == "GET" && r.URL.Path == "/api/v3/repos/o/r/issues/3/comments" {
			fmt.Fprint(w, `[]`)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message": "Resource not accessible by integration (%s)"}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	out := filepath.Join(dir, "comment.md")
	stdout, stderr, code := runCLI(t, "", "publish", "comment", "--head", publishFixtures+"head_capped.json",
		"--base", filepath.Join(dir, "missing.json"), "--repo", "o/r", "--pr", "3", "--token-env", "CEILING_TEST_TOKEN",
		"--summary-file", "", "--out", out, "--api-url", srv.URL+"/api/v3")
	if code != 0 || !strings.Contains(stderr, "no comment posted") {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	if strings.Contains(stdout+stderr, cliToken) {
		t.Errorf("the token leaked:\nstdout %s\nstderr %s", stdout, stderr)
	}
	if want := []string{"GET /api/v3/repos/o/r/issues/3/comments", "POST /api/v3/repos/o/r/issues/3/comments"}; fmt.Sprint(requests) != fmt.Sprint(want) {
		t.Errorf("requests %v, want %v", requests, want)
	}
	md, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(md), `No baseline: missing\.json does not exist`) {
		t.Errorf("--out: %v\n%s", err, md)
	}
}

func TestPublishCommentPosts(t *testing.T) {
	t.Setenv("CEILING_TEST_TOKEN", cliToken)
	var posted string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.Method + " " + r.URL.Path {
		case "GET /repos/o/r/issues/3/comments":
			fmt.Fprint(w, `[]`)
		case "POST /repos/o/r/issues/3/comments":
			posted = string(b)
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"id": 77, "html_url": "https://example/c/77"}`)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	stdout, stderr, code := runCLI(t, "", "publish", "comment", "--head", publishFixtures+"head_mixed.json",
		"--base", publishFixtures+"base.json", "--repo", "o/r", "--pr", "3", "--token-env", "CEILING_TEST_TOKEN",
		"--summary-file", "", "--api-url", srv.URL)
	if code != 0 {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "created comment 77 on o/r#3") || !strings.Contains(posted, "[!CAUTION]") || !strings.Contains(posted, "cannot conclude") {
		t.Errorf("stdout %q, posted %.300q", stdout, posted)
	}
}

// fakeCommentAPI accepts exactly one listing and one new comment on o/r#3.
func fakeCommentAPI(t *testing.T, posted *string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.Method + " " + r.URL.Path {
		case "GET /repos/o/r/issues/3/comments":
			fmt.Fprint(w, `[]`)
		case "POST /repos/o/r/issues/3/comments":
			*posted = string(b)
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"id": 78, "html_url": "https://example/c/78"}`)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// --fail-on slower: a significant headline regression in a two-arm
// document exits 1, after the comment is posted, so the reviewer has the
// reason when the check goes red.
func TestPublishCommentFailOnSlower(t *testing.T) {
	t.Setenv("CEILING_TEST_TOKEN", cliToken)
	var posted string
	srv := fakeCommentAPI(t, &posted)
	stdout, stderr, code := runCLI(t, "", "publish", "comment", "--head", publishFixtures+"two_arm_slower.json",
		"--repo", "o/r", "--pr", "3", "--token-env", "CEILING_TEST_TOKEN", "--summary-file", "", "--api-url", srv.URL,
		"--fail-on", "slower")
	if code != 1 || !strings.Contains(stderr, "significantly slower") || !strings.Contains(stdout, "created comment 78") {
		t.Fatalf("status %d, stdout %q, stderr %q; want 1 after posting", code, stdout, stderr)
	}
	if !strings.Contains(posted, `**slower**`) {
		t.Errorf("posted %.300q", posted)
	}
}

func TestPublishCommentFailOnExitStatus(t *testing.T) {
	t.Setenv("CEILING_TEST_TOKEN", "")
	edited := filepath.Join(t.TempDir(), "edited.json")
	raw, err := os.ReadFile(publishFixtures + "two_arm_slower.json")
	if err != nil {
		t.Fatal(err)
	}
	// The same document claiming the headline is within noise.
	doc := strings.Replace(string(raw), `"verdict": "slower"`, `"verdict": "within_noise"`, 1)
	if doc == string(raw) {
		t.Fatal("fixture has no slower verdict to edit")
	}
	if err := os.WriteFile(edited, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string // in stdout+stderr
	}{
		{[]string{"--head", publishFixtures + "two_arm_slower.json", "--dry-run"}, 0, "**slower**"},
		{[]string{"--head", publishFixtures + "two_arm_slower.json", "--dry-run", "--fail-on", "never"}, 0, "**slower**"},
		{[]string{"--head", publishFixtures + "two_arm_slower.json", "--dry-run", "--fail-on", "slower"}, 1, "--fail-on slower"},
		{[]string{"--head", publishFixtures + "two_arm_slower.json", "--repo", "o/r", "--pr", "3", "--token-env", "CEILING_TEST_TOKEN", "--summary-file", "", "--fail-on", "slower"}, 1, "is empty, so no comment is posted"},
		{[]string{"--head", publishFixtures + "two_arm_same.json", "--dry-run", "--fail-on", "slower"}, 0, "within noise"},
		{[]string{"--head", publishFixtures + "head_mixed.json", "--base", publishFixtures + "base.json", "--dry-run", "--fail-on", "slower"}, 0, "cross-run fallback"},
		{[]string{"--head", publishFixtures + "two_arm_same.json", "--dry-run", "--fail-on", "sometimes"}, 2, `--fail-on: "sometimes"`},
		{[]string{"--head", edited, "--dry-run"}, 2, "comparison.headline.verdict: \"within_noise\"; the curve's compare repeats give \"slower\""},
	} {
		stdout, stderr, code := runCLI(t, "", append([]string{"publish", "comment"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
			t.Errorf("ceiling publish comment %s: status %d, want %d and %q in\n%.400s\n%s", strings.Join(tt.args, " "), code, tt.code, tt.want, stdout, stderr)
		}
	}
}
