package publish

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

// TestCommitRefusesRefsThatNameNoCommit: meta.git_ref must be a full hex
// SHA of a commit the checkout has. Anything else is refused with a
// *RefError (exit status 1) before it reaches git's command line, and
// nothing is pushed.
func TestCommitRefusesRefsThatNameNoCommit(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	head := gitT(t, checkout, "rev-parse", "HEAD")
	blob := gitT(t, checkout, "rev-parse", "HEAD:README.md")
	for _, tt := range []struct {
		ref, want string
	}{
		{"HEAD", "want a full hex commit SHA"},
		{"main", "want a full hex commit SHA"},
		{"not-a-commit", "want a full hex commit SHA"},
		{"--help", "want a full hex commit SHA"},
		{"--upload-pack=touch /tmp/x", "want a full hex commit SHA"},
		{head[:12], "want a full hex commit SHA"},
		{strings.ToUpper(head), "want a full hex commit SHA"},
		{head + "-DIRTY", "uncommitted changes"},
		{head + "-dirty", "uncommitted changes"},
		{head + "^{tree}", "want a full hex commit SHA"},
		{"0123456789abcdef0123456789abcdef01234567", "no such commit in"},
		{blob, "no such commit in"}, // an object, but not a commit
	} {
		t.Run(tt.ref, func(t *testing.T) {
			r, raw := resultAt(t, head, 1)
			r.Meta.GitRef = tt.ref
			var trace strings.Builder
			_, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout, Trace: &trace})
			var re *RefError
			if !errors.As(err, &re) || !errors.Is(err, ErrNotPublishable) || re.Ref != tt.ref || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Commit = %v, want a *RefError for %q saying %q", err, tt.ref, tt.want)
			}
			if IsFullSHA(tt.ref) {
				return // looked up with cat-file, as it should be
			}
			if strings.Contains(trace.String(), tt.ref) {
				t.Errorf("the ref reached git:\n%s", trace.String())
			}
		})
	}
	if got := gitT(t, remote, "rev-list", "--count", "main"); got != "1" {
		t.Errorf("main has %s commits, want the 1 it started with", got)
	}
}

// A published result whose git_ref is hostile (someone pushed it by hand)
// is compared by ancestry; the ref must not reach git as an option.
func TestCommitHostilePublishedRef(t *testing.T) {
	t.Parallel()
	remote, checkout := newRemote(t)
	first := refT(t, checkout, "first")
	r, raw := resultAt(t, first, 1)
	old, oldRaw := resultAt(t, first, 2)
	old.Meta.GitRef = "--help"
	oldRaw = []byte(strings.Replace(string(oldRaw), `"git_ref": "`+first+`"`, `"git_ref": "--help"`, 1))
	if _, err := Read(oldRaw, "old"); err != nil {
		t.Fatal(err)
	}
	work := cloneT(t, remote)
	writeT(t, work, "benchmark/published/ceiling-load.json", oldRaw)
	gitT(t, work, "add", ".")
	gitT(t, work, "commit", "--quiet", "-m", "hand edit")
	gitT(t, work, "push", "--quiet", "origin", "main")
	var trace strings.Builder
	out, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout, Trace: &trace})
	if err != nil {
		t.Fatal(err)
	}
	if out.KeptNewer {
		t.Errorf("kept the hand-edited result as newer")
	}
	if strings.Contains(trace.String(), "--help") {
		t.Errorf("the published file's ref reached git:\n%s", trace.String())
	}
}

func TestCommitRefusesOptionLikeRemoteAndBranch(t *testing.T) {
	t.Parallel()
	_, checkout := newRemote(t)
	r, raw := resultAt(t, refT(t, checkout, "x"), 1)
	for _, o := range []CommitOptions{
		{Remote: "--upload-pack=touch /tmp/pwned"},
		{Branch: "--delete"},
		{Branch: "main:refs/heads/other"},
	} {
		o.Repo = checkout
		_, err := Commit(context.Background(), r, raw, o)
		if err == nil || !strings.HasPrefix(err.Error(), "--") {
			t.Errorf("Commit(%+v) = %v, want an error naming the flag", o, err)
		}
	}
}

// TestCommitConcurrentFromOneCheckout: twelve publishes at once from the
// same checkout (issue 8 item 11: 5 of 12 were lost to "cannot lock ref"
// on the shared private fetch ref). Every one must land: twelve commits on
// main, twelve history entries. --retries is 11 because each push that is
// rejected lost to one that landed, so 11 rejections is the worst case.
func TestCommitConcurrentFromOneCheckout(t *testing.T) {
	t.Parallel()
	const n = 12
	remote, checkout := newRemote(t)
	refs := make([]string, n)
	raws := make([][]byte, n)
	results := make([]*result.Result, n)
	for i := range n {
		refs[i] = refT(t, checkout, fmt.Sprintf("measured %d", i))
		results[i], raws[i] = resultAt(t, refs[i], float64(1000+i))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = Commit(context.Background(), results[i], raws[i], CommitOptions{Repo: checkout, Retries: n - 1})
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("publish %d: %v", i, err)
		}
	}
	got := map[string]bool{}
	for _, ref := range historyRefs(t, remote) {
		got[ref] = true
	}
	for i, ref := range refs {
		if !got[ref] {
			t.Errorf("publish %d (%s) is not in the history", i, ref)
		}
	}
	if c := gitT(t, remote, "rev-list", "--count", "main"); c != fmt.Sprint(n+1) {
		t.Errorf("main has %s commits, want %d", c, n+1)
	}
	// The private fetch refs are gone again.
	if left := gitT(t, checkout, "for-each-ref", "refs/ceiling-publish/"); left != "" {
		t.Errorf("private refs left behind:\n%s", left)
	}
}

func TestIsFullSHA(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string]bool{
		strings.Repeat("a", 40): true, strings.Repeat("0", 64): true,
		strings.Repeat("a", 39): false, strings.Repeat("a", 41): false, strings.Repeat("A", 40): false,
		strings.Repeat("g", 40): false, "": false, "HEAD": false, "-" + strings.Repeat("a", 39): false,
	} {
		if got := IsFullSHA(ref); got != want {
			t.Errorf("IsFullSHA(%q) = %v, want %v", ref, got, want)
		}
	}
}

func writeT(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
