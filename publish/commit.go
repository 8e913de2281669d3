package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/result"
)

// Defaults of `ceiling publish commit`.
const (
	DefaultDir     = "benchmark/published"
	DefaultBranch  = "main"
	DefaultRemote  = "origin"
	DefaultRetries = 5
	DefaultAuthor  = "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"

	// pushBackoff times the attempt is the longest random pause before a
	// rejected push is fetched and re-applied.
	pushBackoff = 50 * time.Millisecond
)

// ErrNotPublishable is a valid result that must not become the published
// figure (exit status 1): see Publishable.
var ErrNotPublishable = errors.New("not publishing it")

// ErrNoCleanHeadline refuses a result whose headline batch has no clean
// point: there is no figure to publish.
var ErrNoCleanHeadline = fmt.Errorf("the result has no clean headline point; %w", ErrNotPublishable)

// RefError refuses a meta.git_ref that names no commit: the history is
// keyed by it, the commit message names it, and it is handed to git (so a
// ref such as "--help" must never reach git's command line). It wraps
// ErrNotPublishable (exit status 1).
type RefError struct {
	Ref    string
	Reason string
}

func (e *RefError) Error() string {
	return fmt.Sprintf("meta.git_ref %q names no commit: %s; %v", e.Ref, e.Reason, ErrNotPublishable)
}

func (e *RefError) Unwrap() error { return ErrNotPublishable }

// Publishable says why r may not be published, or nil: no clean headline,
// an interrupted (partial) sweep, or a git ref that is not a full hex
// commit SHA (a *RefError). Commit also checks that the SHA is a commit
// of the repository it publishes from.
func Publishable(r *result.Result) error {
	ref := r.Meta.GitRef
	switch {
	case !r.Headline.Clean:
		return ErrNoCleanHeadline
	case r.Partial:
		return fmt.Errorf("the sweep was interrupted (partial: %s); %w", oneLine(r.PartialReason), ErrNotPublishable)
	case ref == "unknown":
		return &RefError{ref, "measured outside a checkout"}
	case strings.HasSuffix(strings.ToLower(ref), "-dirty"):
		return &RefError{ref, "measured from a tree with uncommitted changes"}
	case !IsFullSHA(ref):
		return &RefError{ref, "want a full hex commit SHA (40 or 64 lower-case hex digits), as `git rev-parse HEAD` prints it"}
	}
	return nil
}

// CommitOptions configure Commit. Zero values take the defaults above.
type CommitOptions struct {
	Repo        string // the checkout to publish from
	Path        string // default benchmark/published/<generator>.json
	HistoryPath string // default benchmark/published/<generator>.history.jsonl
	HistoryMax  int    // default DefaultHistoryMax
	Branch      string
	Remote      string
	Message     string // default: names the generator and the measured commit
	Author      string // "Name <email>"
	Retries     int    // pushes retried after a rejection; <0 means none
	Trace       io.Writer

	// LogTails publishes the failed points' server log tails
	// (curve[].log_tail); left false, Commit cuts them from the published
	// file (StripLogTails).
	LogTails bool

	// Secrets that must not be published (see Secrets): a document that
	// holds one is refused with a *SecretError before git runs. nil: no
	// check.
	Secrets *redact.Set

	// Skipped, when set, is told of each line of the branch's history
	// that is not an entry: skipped, and kept in the file as it is.
	Skipped func(BadLine)

	// beforePush runs after the commit is built and before it is pushed;
	// tests use it to land a concurrent push in exactly that window.
	beforePush func(attempt int) error
}

// CommitOutcome says what Commit did.
type CommitOutcome struct {
	Commit    string // the pushed commit; "" when nothing changed
	Attempts  int    // pushes tried
	Unchanged bool   // the branch already held exactly this result
	// KeptNewer is true when the branch's published file measured a newer
	// commit than this result: only the history got this entry.
	KeptNewer   bool
	LogTailsCut int // log tails left out (CommitOptions.LogTails)
	Path        string
	HistoryPath string
	// History is the history as pushed (or as the branch already held
	// it), this result's entry last: what change points are found on
	// (NewChanges). Nil when Commit failed before reading it.
	History []HistoryEntry
}

func (o *CommitOptions) fill(r *result.Result) error {
	if o.Repo == "" {
		o.Repo = "."
	}
	if o.Path == "" {
		o.Path = DefaultDir + "/" + r.Meta.Generator + ".json"
	}
	if o.HistoryPath == "" {
		o.HistoryPath = strings.TrimSuffix(o.Path, ".json") + ".history.jsonl"
	}
	var err error
	if o.Path, err = cleanRepoPath("--path", o.Path); err != nil {
		return err
	}
	if o.HistoryPath, err = cleanRepoPath("--history", o.HistoryPath); err != nil {
		return err
	}
	if o.Path == o.HistoryPath {
		return fmt.Errorf("--history: %q is the same file as --path", o.HistoryPath)
	}
	if o.HistoryMax == 0 {
		o.HistoryMax = DefaultHistoryMax
	}
	if o.HistoryMax < 0 {
		return fmt.Errorf("--history-max: %d is negative", o.HistoryMax)
	}
	if o.Branch == "" {
		o.Branch = DefaultBranch
	}
	if o.Remote == "" {
		o.Remote = DefaultRemote
	}
	if strings.HasPrefix(o.Remote, "-") {
		return fmt.Errorf("--remote: %q starts with \"-\"; want a remote name or URL", o.Remote)
	}
	if strings.HasPrefix(o.Branch, "-") || strings.ContainsAny(o.Branch, " :^~?*[\\") {
		return fmt.Errorf("--branch: %q is not a branch name", o.Branch)
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Author == "" {
		o.Author = DefaultAuthor
	}
	if _, _, err := splitAuthor(o.Author); err != nil {
		return err
	}
	if o.Message == "" {
		o.Message = DefaultMessage(r)
	}
	return nil
}

// DefaultMessage names the measured commit. "[skip ci]" keeps a data-only
// commit from starting the benchmark (and everything else) again.
func DefaultMessage(r *result.Result) string {
	h := r.Headline
	rate := result.FormatRate(h.ThroughputPerS) + " msg/s"
	if h.LowerBound {
		rate = ">=" + rate + " (lower bound)"
	}
	return fmt.Sprintf("ceiling: publish %s ceiling measured at %s\n\n"+
		"%s: %s at %d connections (batch %d), p99 %s, verdict %s.\n\n[skip ci]\n",
		r.Meta.Generator, r.Meta.GitRef, oneLine(r.Regime), rate, h.Connections, h.Batch,
		formatNs(h.LatencyNs.P99), h.Verdict)
}

func splitAuthor(a string) (name, email string, err error) {
	i, j := strings.LastIndex(a, "<"), strings.LastIndex(a, ">")
	if i <= 0 || j != len(a)-1 || j < i+2 {
		return "", "", fmt.Errorf("--author: %q is not \"Name <email>\"", a)
	}
	return strings.TrimSpace(a[:i]), a[i+1 : j], nil
}

// Commit publishes r (whose bytes as read are raw) to opts.Branch of
// opts.Remote: the result at opts.Path, its headline appended to the
// history. See the package comment for how concurrent pushes are handled.
func Commit(ctx context.Context, r *result.Result, raw []byte, opts CommitOptions) (CommitOutcome, error) {
	var cut int
	if !opts.LogTails {
		var err error
		if raw, cut, err = StripLogTails(raw); err != nil {
			return CommitOutcome{}, fmt.Errorf("result: %w", err)
		}
		if cut > 0 {
			rc := *r
			rc.Curve = slices.Clone(r.Curve)
			for i := range rc.Curve {
				rc.Curve[i].LogTail = ""
			}
			r = &rc
		}
	}
	if err := CheckSecrets(raw, "result", opts.Secrets); err != nil {
		return CommitOutcome{}, err
	}
	if err := Publishable(r); err != nil {
		return CommitOutcome{}, err
	}
	if err := opts.fill(r); err != nil {
		return CommitOutcome{}, &OptionError{err}
	}
	name, email, _ := splitAuthor(opts.Author)
	author := []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email,
		"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email}
	g := &git{dir: opts.Repo, trace: opts.Trace}
	out := CommitOutcome{Path: opts.Path, HistoryPath: opts.HistoryPath, LogTailsCut: cut}
	switch ok, err := g.hasCommit(ctx, r.Meta.GitRef); {
	case err != nil:
		return out, fmt.Errorf("look up meta.git_ref: %w", err)
	case !ok:
		return out, &RefError{r.Meta.GitRef, "no such commit in " + opts.Repo}
	}

	for attempt := 1; ; attempt++ {
		out.Attempts = attempt
		tip, err := g.remoteTip(ctx, opts.Remote, opts.Branch)
		if err != nil {
			return out, fmt.Errorf("fetch %s %s: %w", RedactURLs(opts.Remote), opts.Branch, err)
		}
		files, hist, keptNewer, err := publishedFiles(ctx, g, tip, r, raw, opts)
		if err != nil {
			return out, err
		}
		out.KeptNewer, out.History = keptNewer, hist
		commit, err := g.commitFiles(ctx, tip, files, []string{opts.Path, opts.HistoryPath}, opts.Message, author)
		if err != nil {
			return out, fmt.Errorf("commit: %w", err)
		}
		if commit == "" {
			out.Unchanged = true
			return out, nil
		}
		if opts.beforePush != nil {
			if err := opts.beforePush(attempt); err != nil {
				return out, err
			}
		}
		_, err = g.run(ctx, nil, nil, "push", "--quiet", "--porcelain", "--", opts.Remote, commit+":refs/heads/"+opts.Branch)
		if err == nil {
			out.Commit = commit
			return out, nil
		}
		if !rejected(err) {
			return out, fmt.Errorf("push: %w", err)
		}
		if attempt > opts.Retries {
			return out, fmt.Errorf("push: %s moved on %d times in a row; giving up (--retries %d): %w", opts.Branch, attempt, opts.Retries, err)
		}
		// A short random pause, growing with the attempt, so that
		// publishers that keep colliding stop doing it in lock step.
		pause := time.Duration(rand.Int64N(int64(attempt) * int64(pushBackoff)))
		if opts.Trace != nil {
			fmt.Fprintf(opts.Trace, "push rejected (%s moved on); fetching and re-applying in %s, attempt %d of %d\n", opts.Branch, pause.Round(time.Millisecond), attempt+1, opts.Retries+1)
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// publishedFiles computes the two files' new content on top of tip, and
// the history it holds.
func publishedFiles(ctx context.Context, g *git, tip string, r *result.Result, raw []byte, opts CommitOptions) (map[string][]byte, []HistoryEntry, bool, error) {
	oldHist, _, err := g.show(ctx, tip, opts.HistoryPath)
	if err != nil {
		return nil, nil, false, fmt.Errorf("read %s: %w", opts.HistoryPath, err)
	}
	f, err := ReadHistory(oldHist, opts.HistoryPath)
	if err != nil {
		return nil, nil, false, fmt.Errorf("the history on %s is unreadable, not overwriting it: %w", opts.Branch, err)
	}
	for _, b := range f.Bad {
		if opts.Skipped != nil {
			opts.Skipped(b)
		}
	}
	hist := AppendHistory(f.Entries, EntryOf(r), opts.HistoryMax)
	files := map[string][]byte{opts.HistoryPath: f.Format(hist)}

	// Keep a published result of a newer commit: a slow run for an older
	// push must not replace it (pushes to main can finish out of order).
	content := raw
	keptNewer := false
	if cur, ok, err := g.show(ctx, tip, opts.Path); err == nil && ok {
		if old, err := Read(cur, opts.Path); err == nil && old.Meta.GitRef != r.Meta.GitRef {
			if newer, known := g.isAncestor(ctx, r.Meta.GitRef, old.Meta.GitRef); known && newer {
				content, keptNewer = cur, true
			}
		}
	}
	if len(content) == 0 || content[len(content)-1] != '\n' {
		content = append(append([]byte(nil), content...), '\n')
	}
	files[opts.Path] = content
	return files, hist, keptNewer, nil
}
