package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

// gitT runs git for a test's own setup, in dir.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com",
		"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRemote makes a bare repository with one commit on main and returns it
// with a clone of it (the workflow's checkout).
func newRemote(t *testing.T) (remote, checkout string) {
	t.Helper()
	root := t.TempDir()
	remote = filepath.Join(root, "remote.git")
	gitT(t, root, "init", "--quiet", "--bare", remote)
	seed := filepath.Join(root, "seed")
	gitT(t, root, "clone", "--quiet", remote, seed)
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, seed, "add", "README.md")
	gitT(t, seed, "commit", "--quiet", "-m", "first")
	gitT(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	return remote, cloneT(t, remote)
}

func cloneT(t *testing.T, remote string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gitT(t, filepath.Dir(dir), "clone", "--quiet", "--branch", "main", remote, dir)
	return dir
}

// resultAt is the base fixture measured at ref with the given headline.
func resultAt(t *testing.T, ref string, tput float64) (*result.Result, []byte) {
	t.Helper()
	r, err := Read(readFixture(t, "base.json"), "base.json")
	if err != nil {
		t.Fatal(err)
	}
	r.Meta.GitRef = ref
	// Scale the whole curve so that the headline is tput exactly: the
	// publisher refuses a headline that does not follow from the points.
	peak := r.Headline.ThroughputPerS
	for i := range r.Curve {
		if r.Curve[i].ThroughputPerS == peak {
			r.Curve[i].ThroughputPerS = tput
		} else {
			r.Curve[i].ThroughputPerS *= tput / peak
		}
	}
	r.Summarize()
	if r.Headline.ThroughputPerS != tput {
		t.Fatalf("headline %v after scaling, want %v", r.Headline.ThroughputPerS, tput)
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return r, raw
}

// refT makes a commit named name in repo without moving its HEAD or
// touching its tree (commit-tree on HEAD's tree) and returns its SHA: a
// measured commit the publisher can find, as in the workflow's checkout.
func refT(t *testing.T, repo, name string) string {
	t.Helper()
	return gitT(t, repo, "commit-tree", "-p", "HEAD", "-m", name, "HEAD^{tree}")
}

func remoteFile(t *testing.T, remote, path string) string {
	t.Helper()
	return gitT(t, remote, "show", "main:"+path)
}

func historyRefs(t *testing.T, remote string) []string {
	t.Helper()
	h, err := ParseHistory([]byte(remoteFile(t, remote, "benchmark/published/ceiling-load.history.jsonl")), "history")
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, e := range h {
		refs = append(refs, e.GitRef)
	}
	return refs
}

func TestCommitFirstPublish(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	headBefore := gitT(t, checkout, "rev-parse", "HEAD")
	aaaa := refT(t, checkout, "aaaa")
	r, raw := resultAt(t, aaaa, 123456)

	out, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout})
	if err != nil {
		t.Fatal(err)
	}
	if out.Commit == "" || out.Attempts != 1 || out.Unchanged {
		t.Errorf("outcome = %+v, want one pushed commit", out)
	}
	if got := remoteFile(t, remote, "benchmark/published/ceiling-load.json"); got != strings.TrimSpace(string(raw)) {
		t.Errorf("published file differs from the result")
	}
	if diff := cmp.Diff([]string{aaaa}, historyRefs(t, remote)); diff != "" {
		t.Errorf("history refs (-want +got):\n%s", diff)
	}
	msg := gitT(t, remote, "log", "-1", "--format=%B", "main")
	if !strings.Contains(msg, "measured at "+aaaa) || !strings.Contains(msg, "[skip ci]") {
		t.Errorf("commit message does not name the measured commit:\n%s", msg)
	}
	if got := gitT(t, remote, "log", "-1", "--format=%an <%ae>", "main"); got != DefaultAuthor {
		t.Errorf("author = %q, want %q", got, DefaultAuthor)
	}
	// The checkout itself is left as it was: same HEAD, clean tree.
	if got := gitT(t, checkout, "rev-parse", "HEAD"); got != headBefore {
		t.Errorf("HEAD moved from %s to %s", headBefore, got)
	}
	if st := gitT(t, checkout, "status", "--porcelain"); st != "" {
		t.Errorf("working tree touched:\n%s", st)
	}
}

// TestCommitConcurrentPush lands another publisher's push and an unrelated
// commit between our commit and our push: our push is rejected, we re-apply
// on the new tip, and every commit and every history entry survives once.
func TestCommitConcurrentPush(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	other := cloneT(t, remote)
	bbbb, cccc := refT(t, checkout, "bbbb"), refT(t, other, "cccc")
	r, raw := resultAt(t, bbbb, 200000)
	r2, raw2 := resultAt(t, cccc, 210000)

	opts := CommitOptions{Repo: checkout, beforePush: func(attempt int) error {
		if attempt != 1 {
			return nil
		}
		if _, err := Commit(context.Background(), r2, raw2, CommitOptions{Repo: other}); err != nil {
			return fmt.Errorf("concurrent publish: %w", err)
		}
		gitT(t, other, "pull", "--quiet", "--ff-only", "origin", "main")
		if err := os.WriteFile(filepath.Join(other, "code.go"), []byte("package x\n"), 0o644); err != nil {
			return err
		}
		gitT(t, other, "add", "code.go")
		gitT(t, other, "commit", "--quiet", "-m", "unrelated work")
		gitT(t, other, "push", "--quiet", "origin", "main")
		return nil
	}}
	out, err := Commit(context.Background(), r, raw, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Attempts != 2 {
		t.Errorf("attempts = %d, want 2 (one rejected push)", out.Attempts)
	}
	subjects := strings.Split(gitT(t, remote, "log", "--format=%s", "main"), "\n")
	want := []string{"ceiling: publish ceiling-load ceiling measured at " + bbbb, "unrelated work",
		"ceiling: publish ceiling-load ceiling measured at " + cccc, "first"}
	if diff := cmp.Diff(want, subjects); diff != "" {
		t.Errorf("main's log (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{cccc, bbbb}, historyRefs(t, remote)); diff != "" {
		t.Errorf("history refs (-want +got):\n%s", diff)
	}
	if got := remoteFile(t, remote, "code.go"); got != "package x" {
		t.Errorf("the concurrent commit's file was lost: %q", got)
	}
}

func TestCommitIdempotent(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	dddd := refT(t, checkout, "dddd")
	r, raw := resultAt(t, dddd, 100)
	ctx := context.Background()
	if _, err := Commit(ctx, r, raw, CommitOptions{Repo: checkout}); err != nil {
		t.Fatal(err)
	}
	out, err := Commit(ctx, r, raw, CommitOptions{Repo: checkout})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Unchanged || out.Commit != "" {
		t.Errorf("second identical publish: %+v, want Unchanged and no commit", out)
	}
	// The same measured commit published again with other numbers replaces
	// its entry instead of adding one.
	r2, raw2 := resultAt(t, dddd, 200)
	if _, err := Commit(ctx, r2, raw2, CommitOptions{Repo: checkout}); err != nil {
		t.Fatal(err)
	}
	h, err := ParseHistory([]byte(remoteFile(t, remote, "benchmark/published/ceiling-load.history.jsonl")), "h")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].ThroughputPerS != 200 {
		t.Errorf("history = %+v, want the one entry of dddd at 200", h)
	}
}

func TestCommitHistoryBounded(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	var refs []string
	for i := range 8 {
		refs = append(refs, refT(t, checkout, fmt.Sprintf("ref%02d", i)))
		r, raw := resultAt(t, refs[i], float64(1000+i))
		if _, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout, HistoryMax: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(refs[5:], historyRefs(t, remote)); diff != "" {
		t.Errorf("history refs (-want +got):\n%s", diff)
	}
}

func TestCommitGivesUp(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	other := cloneT(t, remote)
	r, raw := resultAt(t, refT(t, checkout, "eeee"), 1)
	n := 0
	opts := CommitOptions{Repo: checkout, Retries: 2, beforePush: func(int) error {
		n++
		gitT(t, other, "commit", "--quiet", "--allow-empty", "-m", fmt.Sprintf("race %d", n))
		gitT(t, other, "push", "--quiet", "origin", "main")
		return nil
	}}
	out, err := Commit(context.Background(), r, raw, opts)
	if err == nil || !strings.Contains(err.Error(), "giving up (--retries 2)") {
		t.Fatalf("Commit = %v, want giving up after 3 attempts", err)
	}
	if out.Attempts != 3 {
		t.Errorf("attempts = %d, want 3", out.Attempts)
	}
	if got := gitT(t, remote, "log", "-1", "--format=%s", "main"); got != "race 3" {
		t.Errorf("remote tip = %q, want the racer's last commit", got)
	}
}

func TestCommitRefusesNoCleanHeadline(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	raw := readFixture(t, "no_headline.json")
	r, err := Read(raw, "no_headline.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout}); !errors.Is(err, ErrNoCleanHeadline) {
		t.Errorf("Commit = %v, want ErrNoCleanHeadline", err)
	}
	if got := gitT(t, remote, "rev-list", "--count", "main"); got != "1" {
		t.Errorf("main has %s commits, want the 1 it started with", got)
	}
}

// TestCommitKeepsNewerResult: a run for an older commit that finishes last
// adds its history entry but does not replace the newer published result.
func TestCommitKeepsNewerResult(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	older := gitT(t, checkout, "rev-parse", "HEAD")
	gitT(t, checkout, "commit", "--quiet", "--allow-empty", "-m", "newer code")
	gitT(t, checkout, "push", "--quiet", "origin", "main")
	newer := gitT(t, checkout, "rev-parse", "HEAD")

	rNew, rawNew := resultAt(t, newer, 500)
	rOld, rawOld := resultAt(t, older, 400)
	ctx := context.Background()
	if _, err := Commit(ctx, rNew, rawNew, CommitOptions{Repo: checkout}); err != nil {
		t.Fatal(err)
	}
	out, err := Commit(ctx, rOld, rawOld, CommitOptions{Repo: checkout})
	if err != nil {
		t.Fatal(err)
	}
	if !out.KeptNewer {
		t.Errorf("outcome = %+v, want KeptNewer", out)
	}
	if got := remoteFile(t, remote, "benchmark/published/ceiling-load.json"); got != strings.TrimSpace(string(rawNew)) {
		t.Errorf("the newer published result was replaced")
	}
	if diff := cmp.Diff([]string{newer, older}, historyRefs(t, remote)); diff != "" {
		t.Errorf("history refs (-want +got):\n%s", diff)
	}
}

func TestCommitDamagedHistory(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	work := cloneT(t, remote)
	p := filepath.Join(work, "benchmark/published/ceiling-load.history.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{\"git_ref\":\"x\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, work, "add", ".")
	gitT(t, work, "commit", "--quiet", "-m", "hand edit")
	gitT(t, work, "push", "--quiet", "origin", "main")
	ref := refT(t, checkout, "ffff")
	r, raw := resultAt(t, ref, 1)
	var skipped []string
	_, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout, Skipped: func(b BadLine) { skipped = append(skipped, b.Error()) }})
	if err != nil {
		t.Fatalf("Commit = %v: a damaged line is skipped, never fatal", err)
	}
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "benchmark/published/ceiling-load.history.jsonl:2:") {
		t.Errorf("skipped %q, want line 2 of the history named", skipped)
	}
	// The damaged line is kept as it was, the new entry after it.
	got := remoteFile(t, remote, "benchmark/published/ceiling-load.history.jsonl")
	lines := strings.Split(got, "\n")
	if len(lines) != 3 || lines[1] != "not json" || !strings.Contains(lines[2], ref) {
		t.Errorf("history after the publish:\n%s", got)
	}
}

func TestCommitOptionErrors(t *testing.T) {
	t.Parallel()
	r, raw := resultAt(t, strings.Repeat("ab", 20), 1)
	for _, tt := range []struct {
		opts CommitOptions
		want string
	}{
		{CommitOptions{Path: "../x.json"}, "--path"},
		{CommitOptions{Path: ".git/config"}, "--path"},
		{CommitOptions{HistoryPath: "/etc/passwd"}, "--history"},
		{CommitOptions{Path: "a.json", HistoryPath: "a.json"}, "same file"},
		{CommitOptions{Author: "nobody"}, "--author"},
		{CommitOptions{HistoryMax: -1}, "--history-max"},
	} {
		tt.opts.Repo = t.TempDir()
		if _, err := Commit(context.Background(), r, raw, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Commit(%+v) = %v, want an error naming %s", tt.opts, err, tt.want)
		}
	}
}

func TestCommitRefusesUnpublishable(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	for _, tt := range []struct {
		edit func(r *result.Result)
		want string
	}{
		{func(r *result.Result) { r.Partial, r.PartialReason = true, "SIGINT" }, "interrupted (partial: SIGINT)"},
		{func(r *result.Result) { r.Meta.GitRef = "unknown" }, `"unknown" names no commit`},
		{func(r *result.Result) { r.Meta.GitRef = "abc-dirty" }, `"abc-dirty" names no commit`},
	} {
		r, raw := resultAt(t, refT(t, checkout, "abc"), 1)
		tt.edit(r)
		_, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout})
		if !errors.Is(err, ErrNotPublishable) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Commit = %v, want ErrNotPublishable saying %q", err, tt.want)
		}
	}
	if got := gitT(t, remote, "rev-list", "--count", "main"); got != "1" {
		t.Errorf("main has %s commits, want the 1 it started with", got)
	}
}

// The workflow's checkout is shallow (actions/checkout fetches one commit).
func TestCommitFromShallowClone(t *testing.T) {
	t.Parallel()
	remote, _ := newRemote(t)
	other := cloneT(t, remote)
	gitT(t, other, "commit", "--quiet", "--allow-empty", "-m", "second")
	gitT(t, other, "push", "--quiet", "origin", "main")
	shallow := filepath.Join(t.TempDir(), "shallow")
	gitT(t, filepath.Dir(shallow), "clone", "--quiet", "--depth", "1", "file://"+remote, shallow)
	abab := refT(t, shallow, "abab")
	r, raw := resultAt(t, abab, 1)
	opts := CommitOptions{Repo: shallow, beforePush: func(attempt int) error {
		if attempt == 1 {
			gitT(t, other, "commit", "--quiet", "--allow-empty", "-m", "third")
			gitT(t, other, "push", "--quiet", "origin", "main")
		}
		return nil
	}}
	if _, err := Commit(context.Background(), r, raw, opts); err != nil {
		t.Fatal(err)
	}
	subjects := strings.Split(gitT(t, remote, "log", "--format=%s", "main"), "\n")
	want := []string{"ceiling: publish ceiling-load ceiling measured at " + abab, "third", "second", "first"}
	if diff := cmp.Diff(want, subjects); diff != "" {
		t.Errorf("main's log (-want +got):\n%s", diff)
	}
}

// A remote whose URL carries a token must not show it in an error. (git
// strips it itself today; RedactURLs is the second line, tested below.)
func TestCommitRedactsRemoteURL(t *testing.T) {
	t.Parallel()
	_, checkout := newRemote(t)
	const secret = "ghs_SECRETINURL123"
	gitT(t, checkout, "remote", "add", "tokened", "https://x-access-token:"+secret+"@127.0.0.1:1/o/r.git")
	r, raw := resultAt(t, refT(t, checkout, "cdcd"), 1)
	_, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout, Remote: "tokened"})
	if err == nil {
		t.Fatal("push to an unreachable remote succeeded")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the URL's token leaked: %v", err)
	}
}

// A remote given as a URL with a token must not show it in the trace
// (ceiling publish commit prints it to stderr) or in the error.
func TestCommitTraceRedactsRemoteURL(t *testing.T) {
	t.Parallel()
	_, checkout := newRemote(t)
	const secret = "ghs_SECRETINTRACE456"
	var trace strings.Builder
	r, raw := resultAt(t, refT(t, checkout, "cdce"), 1)
	_, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout,
		Remote: "https://x-access-token:" + secret + "@127.0.0.1:1/o/r.git", Trace: &trace})
	if err == nil {
		t.Fatal("push to an unreachable remote succeeded")
	}
	if !strings.Contains(trace.String(), "+ git ") {
		t.Fatalf("no trace written: %q", trace.String())
	}
	if strings.Contains(trace.String(), secret) || strings.Contains(err.Error(), secret) {
		t.Errorf("the URL's token leaked:\ntrace: %s\nerror: %v", trace.String(), err)
	}
}

func TestRedactURLs(t *testing.T) {
	t.Parallel()
	got := RedactURLs("fatal: unable to access 'https://x-access-token:abc123@github.com/o/r.git/': nope; ssh://git@host/x")
	want := "fatal: unable to access 'https://x-access-token:[redacted]@github.com/o/r.git/': nope; ssh://git@host/x"
	if got != want {
		t.Errorf("RedactURLs:\n got %s\nwant %s", got, want)
	}
}

// The commit message is the figure most people read: a generator-capped
// headline must carry its lower-bound mark there too.
func TestDefaultMessageMarksLowerBound(t *testing.T) {
	t.Parallel()
	r := &result.Result{Regime: "echo, batch 10", Headline: result.Headline{Clean: true, ThroughputPerS: 123456.7,
		Batch: 10, Connections: 64, LatencyNs: load.Latency{P99: 1_800_000}}}
	r.Meta.Generator, r.Meta.GitRef = "ceiling-load", "abc1234"
	for _, tt := range []struct {
		verdict string
		want    string
	}{
		{result.VerdictServerSaturated, "echo, batch 10: 123,457 msg/s at 64 connections (batch 10), p99 1.80ms, verdict server-saturated."},
		{result.VerdictGeneratorCapped, "echo, batch 10: >=123,457 msg/s (lower bound) at 64 connections (batch 10), p99 1.80ms, verdict generator-capped."},
	} {
		r.Headline.Verdict, r.Headline.LowerBound = tt.verdict, result.IsLowerBound(tt.verdict)
		if got := DefaultMessage(r); !strings.Contains(got, "\n\n"+tt.want+"\n\n") {
			t.Errorf("DefaultMessage:\n%s\nwant the line %q", got, tt.want)
		}
	}
}
