package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const staleSHA = "89abcdef0123456789abcdef0123456789abcdef"

func TestPublishStaleBadInput(t *testing.T) {
	ok := []string{"publish", "stale", "--repo", "o/r", "--pr", "3", "--commit", staleSHA, "--api-url", "http://127.0.0.1:1"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"publish", "stale", "--repo", "justname", "--pr", "3", "--commit", staleSHA}, "--repo"},
		{[]string{"publish", "stale", "--repo", "o/r", "--commit", staleSHA}, "--pr"},
		{[]string{"publish", "stale", "--repo", "o/r", "--pr", "-1", "--commit", staleSHA}, "--pr"},
		{[]string{"publish", "stale", "--repo", "o/r", "--pr", "3"}, "--commit"},
		{[]string{"publish", "stale", "--repo", "o/r", "--pr", "3", "--commit", "main"}, "--commit"},
		{append(ok[:len(ok):len(ok)], "--run-url", "javascript:x"), "--run-url"},
		{append(ok[:len(ok):len(ok)], "--marker", "x --> y"), "--marker"},
		{append(ok[:len(ok):len(ok)], "--api-url", "ftp://x"), "--api-url"},
		{append(ok[:len(ok):len(ok)], "extra"), `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, "", tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("ceiling %s: status %d, stderr %q; want 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
}

// The command edits the bot's marked comment through the API, and the
// token appears in no output.
func TestPublishStaleMarks(t *testing.T) {
	t.Setenv("CEILING_TEST_TOKEN", cliToken)
	var requests []string
	var patched string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.Method+" "+r.URL.Path)
		if got := r.Header.Get("Authorization"); got != "Bearer "+cliToken {
			t.Errorf("%s %s: Authorization %q", r.Method, r.URL.Path, got)
		}
		b, _ := io.ReadAll(r.Body)
		switch r.Method + " " + r.URL.Path {
		case "GET /api/v3/repos/o/r/issues/3/comments":
			fmt.Fprint(w, `[{"id": 9, "user": {"login": "github-actions[bot]"}, "body": "<!-- ceiling:comment generator=ceiling-load -->\nold comparison"}]`)
		case "PATCH /api/v3/repos/o/r/issues/comments/9":
			var c struct{ Body string }
			if err := json.Unmarshal(b, &c); err != nil {
				t.Error(err)
			}
			patched = c.Body
			fmt.Fprint(w, `{"id": 9, "html_url": "https://example/c/9"}`)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	stdout, stderr, code := runCLI(t, "", "publish", "stale", "--repo", "o/r", "--pr", "3", "--commit", staleSHA,
		"--run-url", "https://github.com/o/r/actions/runs/5", "--comment-author", "github-actions[bot]",
		"--token-env", "CEILING_TEST_TOKEN", "--api-url", srv.URL+"/api/v3")
	if code != 0 {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	if want := "[GET /api/v3/repos/o/r/issues/3/comments PATCH /api/v3/repos/o/r/issues/comments/9]"; fmt.Sprint(requests) != want {
		t.Errorf("requests %v, want %s", requests, want)
	}
	if !strings.HasPrefix(patched, "<!-- ceiling:comment generator=ceiling-load -->\n<!-- ceiling:stale -->\n> [!WARNING]\n") ||
		!strings.Contains(patched, "The benchmark of 89abcdef0123 did not produce a result") ||
		!strings.HasSuffix(patched, "\n\nold comparison") {
		t.Errorf("patched body:\n%s", patched)
	}
	if !strings.Contains(stdout, "marked comment 9 on o/r#3 stale") {
		t.Errorf("stdout %q", stdout)
	}
	if strings.Contains(stdout+stderr+patched, cliToken) {
		t.Error("the token leaked")
	}
}

// No token: nothing is called, and the step does not fail.
func TestPublishStaleNoToken(t *testing.T) {
	t.Setenv("CEILING_TEST_TOKEN", "")
	_, stderr, code := runCLI(t, "", "publish", "stale", "--repo", "o/r", "--pr", "3", "--commit", staleSHA,
		"--token-env", "CEILING_TEST_TOKEN", "--api-url", "http://127.0.0.1:1")
	if code != 0 || !strings.Contains(stderr, "$CEILING_TEST_TOKEN is empty") {
		t.Errorf("status %d, stderr %q", code, stderr)
	}
}
