package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/publish"
)

// TestPublishCommitPostsChangePointOnce publishes, into a real bare
// repository, the entry that completes a change point of the history
// already on the branch, with --change-comment commit against a fake
// GitHub API on loopback that checks every request. The job summary
// leads with the change point, the comment goes on the first commit
// after the change, and publishing the same result again (a re-run job)
// posts nothing more.
func TestPublishCommitPostsChangePointOnce(t *testing.T) {
	root := t.TempDir()
	gitCmd(t, root, "init", "--quiet", "--bare", "remote.git")
	gitCmd(t, root, "clone", "--quiet", "remote.git", "work")
	work := filepath.Join(root, "work")
	gitCmd(t, work, "commit", "--quiet", "--allow-empty", "-m", "first")
	head := gitCmd(t, work, "rev-parse", "HEAD")

	raw, err := os.ReadFile(publishFixtures + "base.json")
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte("1111111111111111111111111111111111111111"), []byte(head))
	r, err := publish.Read(raw, "base.json")
	if err != nil {
		t.Fatal(err)
	}
	// The branch's history: 12 entries at the result's level / 0.88, then
	// 2 at its level (±1% each): the result is the third entry after a
	// -12% step, the one that makes it a change point.
	level := r.Headline.ThroughputPerS
	floor := 3.0
	var hist []publish.HistoryEntry
	for i := range 14 {
		e := publish.EntryOf(r)
		e.GitRef = fmt.Sprintf("%040x", 0xc0ffee00+i)
		e.FinishedAt = r.Meta.FinishedAt.Add(-time.Duration(15-i) * time.Hour).UTC()
		e.ThroughputPerS = level * (1 + 0.01*float64(i%3-1))
		if i < 12 {
			e.ThroughputPerS /= 0.88
		}
		e.NoiseFloorPct = &floor
		e.Ceilings = nil
		hist = append(hist, e)
	}
	after := hist[12].GitRef
	histPath := filepath.Join(work, "benchmark", "published", "ceiling-load.history.jsonl")
	if err := os.MkdirAll(filepath.Dir(histPath), 0o755); err != nil {
		t.Fatal(err)
	}
	// A truncated line among them: skipped, said, and kept as it is.
	data := publish.FormatHistory(hist)
	data = append(data, []byte("{\"git_ref\":\"truncated\n")...)
	if err := os.WriteFile(histPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, work, "add", ".")
	gitCmd(t, work, "commit", "--quiet", "-m", "history so far")
	gitCmd(t, work, "push", "--quiet", "origin", "HEAD:main")

	var mu sync.Mutex
	var posted []string
	var unexpected []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if got := req.Header.Get("Authorization"); got != "Bearer "+cliToken {
			unexpected = append(unexpected, "Authorization "+got)
		}
		if req.URL.Path != "/repos/o/r/commits/"+after+"/comments" {
			unexpected = append(unexpected, req.Method+" "+req.URL.String())
			http.Error(w, "unexpected", http.StatusNotFound)
			return
		}
		switch req.Method {
		case http.MethodGet:
			var out []map[string]any
			for i, b := range posted {
				out = append(out, map[string]any{"id": 900 + i, "body": b, "html_url": "https://example.com/c", "user": map[string]any{"login": "github-actions[bot]"}})
			}
			_ = json.NewEncoder(w).Encode(out)
		case http.MethodPost:
			var body struct{ Body string }
			if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
				unexpected = append(unexpected, "body: "+err.Error())
			}
			posted = append(posted, body.Body)
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"id":%d,"html_url":"https://example.com/c"}`, 899+len(posted))
		default:
			unexpected = append(unexpected, req.Method+" "+req.URL.String())
		}
	}))
	defer api.Close()
	t.Setenv("CEILING_TEST_TOKEN", cliToken)
	t.Setenv("GITHUB_ACTIONS", "true") // its comments are github-actions[bot]'s

	summary := filepath.Join(root, "summary.md")
	args := []string{"publish", "commit", "--repo", work, "--branch", "main", "--summary-file", summary,
		"--change-comment", "commit", "--github-repo", "o/r", "--api-url", api.URL + "/", "--token-env", "CEILING_TEST_TOKEN", "-"}
	for run := range 2 {
		stdout, stderr, code := runCLI(t, string(raw), args...)
		if code != 0 {
			t.Fatalf("run %d: status %d\n%s%s", run, code, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, cliToken) {
			t.Errorf("run %d: the token is in the output", run)
		}
		if !strings.Contains(stdout, "change point: the headline of ceiling-load") || !strings.Contains(stdout, "-12.") {
			t.Errorf("run %d: stdout does not name the change point:\n%s", run, stdout)
		}
		want := []string{"posted the change point as comment 900", "the change point was posted before (comment 900)"}[run]
		if !strings.Contains(stdout, want) {
			t.Errorf("run %d: stdout has no %q:\n%s", run, want, stdout)
		}
		if !strings.Contains(stderr, "skipped a line of the history on main that is not an entry") {
			t.Errorf("run %d: the truncated line was not said:\n%s", run, stderr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(unexpected) > 0 {
		t.Errorf("unexpected requests: %q", unexpected)
	}
	if len(posted) != 1 || !strings.HasPrefix(posted[0], "<!-- ceiling:change key=") || !strings.Contains(posted[0], "−12.") {
		t.Errorf("posted %q, want one change-point comment", posted)
	}
	md, err := os.ReadFile(summary)
	if err != nil || !strings.HasPrefix(string(md), "> [!WARNING]\n> **This push completes a change point**") {
		t.Errorf("the job summary does not lead with the change point: %v\n%.300s", err, md)
	}
	// The branch's history holds 15 entries, the truncated line kept as
	// it was.
	got := gitCmd(t, filepath.Join(root, "remote.git"), "show", "main:benchmark/published/ceiling-load.history.jsonl")
	if n := strings.Count(got, "\n") + 1; n != 16 || !strings.Contains(got, "\n{\"git_ref\":\"truncated\n") {
		t.Errorf("history on the branch: %d lines, want 15 entries and the truncated line:\n%s", n, got)
	}
}

// TestPublishCommitChangeCommentFlags: a bad --change-comment, or one
// with no repository to comment on, exits 2 before anything is published.
func TestPublishCommitChangeCommentFlags(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GITHUB_REPOSITORY", "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--change-comment", "pr"}, `--change-comment: "pr", want none, commit or issue`},
		{[]string{"--change-comment", "commit"}, `--github-repo: "", want owner/name`},
		{[]string{"--change-comment", "issue", "--github-repo", "o/r", "--api-url", "ftp://x/"}, "api"},
	} {
		args := append(append([]string{"publish", "commit", "--repo", dir}, tt.args...), publishFixtures+"base.json")
		_, stderr, code := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: status %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
