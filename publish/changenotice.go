package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ceiling-bench/ceiling/result"
)

// Change points where people look: a push to main that completes one
// leads its job summary with it (and, asked for, posts it once as a
// commit comment or on an issue), and a pull request whose base sits in
// a segment that began with a recent one says so in one line. The
// detector is Changes; this file decides which of its change points are
// news, and words them.

// key names a change point for deduplication: its series, its measure
// and the first entry after it.
func (c Change) key() string { return c.Series + "\x00" + c.Measure + "\x00" + c.After.GitRef }

// ChangeMarker is the hidden marker of c's comment: a digest of its key,
// so that no string from the history reaches the HTML comment and a
// comment already posted for c is found again whatever its text.
func ChangeMarker(c Change) string {
	sum := sha256.Sum256([]byte(c.key()))
	return "ceiling:change key=" + hex.EncodeToString(sum[:8])
}

// NewChanges are the change points of h that its entry e completes: found
// in h and not in h without e, on e's series. A change point is only
// found once MinSegment entries follow it, so it is news at the push
// whose entry is the last of those; a later push that moves it by an
// entry names it at another commit, and is news again (said so in
// docs/report.md). Nil when e is not in h (the branch already held a
// newer history) or completes nothing.
func NewChanges(h []HistoryEntry, e HistoryEntry) []Change {
	i := lastEntry(h, e)
	if i < 0 {
		return nil
	}
	without := append(append([]HistoryEntry(nil), h[:i]...), h[i+1:]...)
	seen := map[string]bool{}
	for _, c := range Changes(without) {
		seen[c.key()] = true
	}
	var out []Change
	for _, c := range Changes(h) {
		if c.Series == e.Series() && !seen[c.key()] {
			out = append(out, c)
		}
	}
	return out
}

// lastEntry is the index of the last entry of h that is e (the same
// commit, series and finish time), or -1.
func lastEntry(h []HistoryEntry, e HistoryEntry) int {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].GitRef == e.GitRef && h[i].Series() == e.Series() && h[i].FinishedAt.Equal(e.FinishedAt) {
			return i
		}
	}
	return -1
}

// changeArrow is ▼ for a fall in throughput, ▲ for a rise.
func changeArrow(c Change) string {
	if c.ChangePct < 0 {
		return "▼"
	}
	return "▲"
}

// ChangeHeadline is one change point as one line of Markdown: which
// measure of which series moved how much, between which commits. Every
// string from the history is escaped.
func ChangeHeadline(c Change) string {
	return fmt.Sprintf("%s the %s of %s changed **%s** between %s and %s (%s → %s msg/s, %s)",
		changeArrow(c), text(c.Measure), text(c.Series), signedPct(&c.ChangePct), text(shortRef(c.Before.GitRef)),
		text(shortRef(c.After.GitRef)), rate(c.MeanBefore), rate(c.MeanAfter), pvalue(&c.P))
}

// ChangeLine is one change point as one line for a terminal.
func ChangeLine(c Change) string {
	return fmt.Sprintf("change point: the %s of %s changed %+.1f%% between %s and %s (%s -> %s msg/s, %s)",
		c.Measure, termText(c.Series), c.ChangePct, termText(shortRef(c.Before.GitRef)), termText(shortRef(c.After.GitRef)),
		rate(c.MeanBefore), rate(c.MeanAfter), result.FormatP(&c.P))
}

// ChangeSummary leads a push's job summary with the change points its
// entry completed; "" for none.
func ChangeSummary(cs []Change) string {
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("> [!WARNING]\n")
	if len(cs) == 1 {
		b.WriteString("> **This push completes a change point** on the published history:\n")
	} else {
		fmt.Fprintf(&b, "> **This push completes %d change points** on the published history:\n", len(cs))
	}
	for _, c := range cs {
		b.WriteString(">\n> " + ChangeHeadline(c) + "\n")
	}
	b.WriteString(">\n> " + changeMethod + "\n\n")
	return b.String()
}

// changeMethod says what a change point is, and what it is not.
const changeMethod = "A change point is where the level of the published history changed " +
	"(E-divisive means, Welch's t-test, at least the entries' A-A noise floor; " +
	"`ceiling history --changes` lists them). A slope of small changes over several merges " +
	"shows as one: the commit named is where the level moved, not necessarily its one cause."

// RenderChangeComment is the comment posted for c (on the first commit
// after it, or on the performance issue): its hidden marker first.
func RenderChangeComment(c Change) string {
	var b strings.Builder
	b.WriteString(HiddenMarker(ChangeMarker(c)) + "\n")
	fmt.Fprintf(&b, "### %s Change point: %s %s\n\n", changeArrow(c), text(c.Measure), signedPct(&c.ChangePct))
	b.WriteString(ChangeHeadline(c) + ".\n\n")
	fmt.Fprintf(&b, "Before: %s msg/s over %d entries; after: %s msg/s over %d entries; the least change it had to show: %s (the A-A noise floors).\n\n",
		rate(c.MeanBefore), c.NBefore, rate(c.MeanAfter), c.NAfter, pctAbs(c.MinChangePct))
	b.WriteString(changeMethod + "\n")
	return b.String()
}

// MainChangeNote is the pull request comment's one line about main: when
// the entry at base (its merge-base's, else the newest of the series)
// sits in the segment that began with the series' last headline change
// point, and that one is at most RecentChangeEntries entries old. ok is
// false otherwise.
func MainChangeNote(h []HistoryEntry, series, base string) (n Note, ok bool) {
	var rows []HistoryEntry
	for _, e := range h {
		if e.Series() == series {
			rows = append(rows, e)
		}
	}
	var last *Change
	for _, c := range Changes(rows) {
		if c.Measure == "headline" {
			last = &c
		}
	}
	if last == nil {
		return Note{}, false
	}
	after, at := -1, len(rows)-1
	for i, e := range rows {
		if e.GitRef == last.After.GitRef && after < 0 {
			after = i
		}
		if base != "" && e.GitRef == base {
			at = i
		}
	}
	ago := len(rows) - 1 - after
	if after < 0 || at < after || ago >= RecentChangeEntries {
		return Note{}, false
	}
	when := fmt.Sprintf("%d merges ago", ago)
	switch ago {
	case 0:
		when = "at the latest published merge"
	case 1:
		when = "1 merge ago"
	}
	return note("main changed %s at %s, %s (a change point on the published history, %s): this pull request's base was measured after it.",
		signedPct(&last.ChangePct), shortRef(last.After.GitRef), when, pvalue(&last.P)), true
}

// RecentChangeEntries bounds how old (in the series' entries since) a
// change point may be for a pull request's comment to mention it.
const RecentChangeEntries = 10
