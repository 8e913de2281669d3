package publish

// Stale marking. A pull request's comment is replaced on every push whose
// sweep wrote a result. A sweep that died before writing one (killed, timed
// out, the runner lost) would leave the previous push's comparison looking
// current, so the commenter marks it stale instead: it prepends an alert to
// the one marked comment and keeps the old body below it, as it was
// rendered (and escaped) then. Marking again replaces the alert instead of
// stacking a second one; the next result replaces the whole comment.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/google/go-github/v62/github"
)

// The stale alert sits between these two hidden lines, right under the
// marker, so that it can be found and replaced.
const (
	staleOpen  = "<!-- ceiling:stale -->"
	staleClose = "<!-- /ceiling:stale -->"
)

// DefaultStaleReason is shown when the caller gives none.
const DefaultStaleReason = "the sweep ended before writing its result"

// StaleNote says which push left the comment stale, and why.
type StaleNote struct {
	// Commit is the pushed commit whose sweep wrote no result: 7 to 40
	// lowercase hex digits. Required.
	Commit string
	// Reason is shown escaped, as one line; DefaultStaleReason when empty.
	Reason string
	// RunURL, when set, links the run that failed: an http(s) URL of
	// letters, digits and ./_:-~%?=& only (what a workflow builds from
	// github.server_url, the repository and the run id).
	RunURL string
}

// StaleNoteError is a StaleNote field the caller got wrong.
type StaleNoteError struct {
	Field string // "commit", "run URL"
	Value string
	Want  string
}

func (e *StaleNoteError) Error() string {
	return fmt.Sprintf("%s: %q, want %s", e.Field, e.Value, e.Want)
}

var (
	commitRE = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	runURLRE = regexp.MustCompile(`^https?://[A-Za-z0-9./_:~%?=&-]+$`)
)

// Check refuses a note that is not what its fields say.
func (n StaleNote) Check() error {
	if !commitRE.MatchString(n.Commit) {
		return &StaleNoteError{"commit", n.Commit, "7 to 40 lowercase hex digits"}
	}
	if n.RunURL != "" {
		u, err := url.Parse(n.RunURL)
		if err != nil || !runURLRE.MatchString(n.RunURL) || u.Host == "" {
			return &StaleNoteError{"run URL", n.RunURL, "an http(s) URL such as https://github.com/o/r/actions/runs/1"}
		}
	}
	return nil
}

// staleAlert is the alert block, hidden delimiters included.
func staleAlert(n StaleNote) string {
	reason := n.Reason
	if strings.TrimSpace(reason) == "" {
		reason = DefaultStaleReason
	}
	short := n.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	run := ""
	if n.RunURL != "" {
		run = " ([the run](" + n.RunURL + "))"
	}
	return staleOpen + "\n" +
		"> [!WARNING]\n" +
		"> **Stale: these numbers are not for the latest push.** The benchmark of " + short +
		" did not produce a result: " + text(reason) + run + ". The comparison below is from an earlier push; " +
		"the next run that finishes replaces it.\n" +
		staleClose + "\n"
}

// ErrNotMarked is an existing comment that does not start with its marker:
// StaleBody will not guess where the old body begins.
var ErrNotMarked = errors.New("the comment does not start with its marker")

// StaleBody is old (a comment that starts with the hidden marker) with the
// stale alert for n right under the marker. An alert already there is
// replaced, not stacked. The old body is kept as it is (it was escaped when
// it was rendered); when the result would exceed MaxCommentLen, its end is
// cut at a line break and a line says so.
func StaleBody(old, marker string, n StaleNote) (string, error) {
	if err := n.Check(); err != nil {
		return "", err
	}
	hidden := HiddenMarker(marker)
	rest, ok := strings.CutPrefix(strings.TrimLeft(old, " \t\r\n"), hidden)
	if !ok {
		return "", fmt.Errorf("%w %q", ErrNotMarked, hidden)
	}
	rest = strings.TrimLeft(rest, "\r\n")
	if strings.HasPrefix(rest, staleOpen) {
		if _, after, found := strings.Cut(rest, staleClose); found {
			rest = strings.TrimLeft(after, "\r\n")
		}
	}
	head := hidden + "\n" + staleAlert(n) + "\n"
	body := head + rest
	if runeLen(body) <= MaxCommentLen {
		return body, nil
	}
	const cut = "\n\n*(The rest of the earlier comparison did not fit in the comment with this alert; that run's job summary keeps it.)*\n"
	return head + keepLines(rest, MaxCommentLen-runeLen(head)-runeLen(cut)) + cut, nil
}

func runeLen(s string) int { return len([]rune(s)) }

// MarkStale finds the marked comment as Upsert does (same Author rule) and
// edits it to carry the stale alert for n. found is false when the pull
// request has no such comment: there is nothing stale to mark, and no
// request but the listing was made.
func (p *Poster) MarkStale(ctx context.Context, n StaleNote) (posted Posted, found bool, err error) {
	if err := n.Check(); err != nil {
		return Posted{}, false, err
	}
	hidden := HiddenMarker(p.Marker)
	old, err := p.findComment(ctx, hidden)
	if err != nil || old == nil {
		return Posted{}, false, err
	}
	body, err := StaleBody(old.GetBody(), p.Marker, n)
	if err != nil {
		return Posted{}, true, err
	}
	var c *github.IssueComment
	err = p.call(ctx, "edit comment", func() (*github.Response, error) {
		var resp *github.Response
		var err error
		c, resp, err = p.Client.Issues.EditComment(ctx, p.Owner, p.Repo, old.GetID(), &github.IssueComment{Body: github.String(body)})
		return resp, err
	})
	if err != nil {
		return Posted{}, true, err
	}
	return Posted{ID: c.GetID(), URL: c.GetHTMLURL()}, true, nil
}
