package site

import (
	"fmt"
	"strings"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// Change points (publish.Changes) where people look: the trend marks the
// first entry after each, the History table marks that entry's row, and
// a run page inside the segment one began says so in a line that links
// that row. A per-entry move (publish.RowChange) says one commit differs
// from the one before; a change point says the level moved and stayed,
// which a slope of small moves never shows entry by entry.

// placed is a change point on its series' rows (oldest first): At is the
// row of its After entry, End the row where the segment it began ends
// (exclusive): the next change point of the same measure, the next regime
// change (Changes never compares across one), or the end.
type placed struct {
	publish.Change
	At, End int
}

// placeChanges places those of cs that belong to rows, one series as
// publish.TrendSeries gives it. A change point whose After entry is not
// among rows is left out: there is nothing to mark.
func placeChanges(rows []publish.TrendRow, cs []publish.Change) []placed {
	var out []placed
	for _, c := range cs {
		if at := entryRow(rows, c.After); at >= 0 {
			out = append(out, placed{Change: c, At: at, End: regimeEnd(rows, at)})
		}
	}
	for i := range out {
		for _, o := range out {
			if o.Measure == out[i].Measure && o.At > out[i].At && o.At < out[i].End {
				out[i].End = o.At
			}
		}
	}
	return out
}

// entryRow is the row of rows that is e (series, commit and finish time:
// a commit can be measured twice), or -1.
func entryRow(rows []publish.TrendRow, e publish.HistoryEntry) int {
	for i, r := range rows {
		if r.GitRef == e.GitRef && r.FinishedAt.Equal(e.FinishedAt) && r.Series() == e.Series() {
			return i
		}
	}
	return -1
}

// regimeEnd is the first row after at whose regime changed, or len(rows).
func regimeEnd(rows []publish.TrendRow, at int) int {
	for i := at + 1; i < len(rows); i++ {
		if rows[i].RegimeChanged {
			return i
		}
	}
	return len(rows)
}

// rowChange is what one row of the whole trend shows of the headline's
// change points: the one it is the first entry after (Starts), and the
// one whose segment holds it (In), From being the row of In's After
// entry and Ago how many of the series' entries this row comes after it.
type rowChange struct {
	Starts *publish.Change
	In     *publish.Change
	From   int
	Ago    int
}

// rowChanges maps the headline change points of cs onto rows (the whole
// trend, every series, oldest first, as the History table lists it).
// Only the headline: the table's change column is the headline's.
func rowChanges(rows []publish.TrendRow, cs []publish.Change) []rowChange {
	out := make([]rowChange, len(rows))
	at := map[string][]int{} // series -> its rows' indices in rows
	for i, r := range rows {
		at[r.Series()] = append(at[r.Series()], i)
	}
	for _, series := range publish.TrendSeries(rows) {
		idx := at[series[0].Series()]
		for _, p := range placeChanges(series, cs) {
			if p.Measure != "headline" {
				continue
			}
			c := p.Change
			out[idx[p.At]].Starts = &c
			for j := p.At; j < p.End; j++ {
				out[idx[j]] = rowChange{Starts: out[idx[j]].Starts, In: &c, From: idx[p.At], Ago: j - p.At}
			}
		}
	}
	return out
}

// rowIDs are the History rows' anchors, "e-" and the short commit (a
// slug: the ref comes from the history file), "-2", "-3" after it when a
// commit has rows in more than one series.
func rowIDs(rows []publish.TrendRow) []string {
	ids := make([]string, len(rows))
	seen := map[string]int{}
	for i, r := range rows {
		id := "e-" + slug(shortRef(r.GitRef))
		seen[id]++
		if n := seen[id]; n > 1 {
			id = fmt.Sprintf("%s-%d", id, n)
		}
		ids[i] = id
	}
	return ids
}

// changeMark is a change point on the trend: a dotted vertical line
// through the panel at the first entry after it, a triangle at its top
// pointing the way the level went, and its change as a label.
type changeMark struct {
	X              float64
	Tri            string // the triangle's path
	LabelX, LabelY float64
	Anchor         string // the label's text-anchor: start, or end near the right edge
	Label          string // "change point −12.6%", "batch 100 change point −12.6%"
	Title          string
	Measure        string
	Down           bool
}

// changeMarks are the trend's change point markers on panel p, x giving
// the x of a row. Labels of several change points stack down from the
// panel's top so that two at one commit (the headline and a batch) do
// not overlap.
func changeMarks(p *panel, x func(row int) float64, ps []placed) []changeMark {
	var out []changeMark
	for k, c := range ps {
		cx, down := x(c.At), c.ChangePct < 0
		// Named, not a bare figure: the entry at the same x may carry
		// its own move against the entry before ("−13.8% vs prev").
		label := "change point " + signedPct(c.ChangePct)
		if c.Measure != "headline" {
			label = c.Measure + " " + label
		}
		m := changeMark{X: cx, Tri: triangle(cx, p.Y, down), LabelX: cx + 9, LabelY: p.Y + 11 + 14*float64(k%4),
			Anchor: "start", Label: label, Title: changeTitle(c.Change), Measure: c.Measure, Down: down}
		// About 7 units a character at 11 px bold: keep it in the panel.
		if m.LabelX+7*float64(len([]rune(label))) > p.X+p.W {
			m.LabelX, m.Anchor = cx-9, "end"
		}
		out = append(out, m)
	}
	return out
}

// triangle is a small triangle under the panel's top edge at x, its
// point down for a fall and up for a rise.
func triangle(x, top float64, down bool) string {
	if down {
		return fmt.Sprintf("M%.1f,%.1fh12l-6,9z", x-6, top+1)
	}
	return fmt.Sprintf("M%.1f,%.1fh12l-6,-9z", x-6, top+10)
}

// changeTitle is a change point's hover text: the measure, the change,
// the commits it lies between, both sides' means and p.
func changeTitle(c publish.Change) string {
	return fmt.Sprintf("change point: the %s changed %s between %s and %s (%s msg/s over %d entries before, %s over %d after; %s; the least change it had to show: %.1f%%)",
		c.Measure, signedPct(c.ChangePct), shortRef(c.Before.GitRef), shortRef(c.After.GitRef),
		rate(c.MeanBefore), c.NBefore, rate(c.MeanAfter), c.NAfter, result.FormatP(&c.P), c.MinChangePct)
}

// signedPct is a change with its sign, a real minus for a fall: "−12.6%".
func signedPct(v float64) string {
	return strings.Replace(fmt.Sprintf("%+.1f%%", v), "-", "−", 1)
}

// changeCell is the History table's mark on the first entry after a
// headline change point.
type changeCell struct {
	Text  string // "▼ −12.6% change point"
	Title string
	Down  bool
}

func newChangeCell(c publish.Change) *changeCell {
	arrow := "▲"
	if c.ChangePct < 0 {
		arrow = "▼"
	}
	return &changeCell{Text: arrow + " " + signedPct(c.ChangePct) + " change point", Title: changeTitle(c), Down: c.ChangePct < 0}
}

// runChange is a run page's line about the change point whose segment
// its entry is in. Every field is text for html/template to escape.
type runChange struct {
	Pct    string // "−12.6%"
	Commit string // the first commit after it, short
	Anchor string // its History row's id
	Ago    string // "4 entries ago", "this run is the first after it"
	Title  string
	Down   bool
}

func newRunChange(c publish.Change, ago int, anchor string) *runChange {
	when := fmt.Sprintf("%d entries ago", ago)
	switch ago {
	case 0:
		when = "this run is the first after it"
	case 1:
		when = "1 entry ago"
	}
	return &runChange{Pct: signedPct(c.ChangePct), Commit: shortRef(c.After.GitRef), Anchor: anchor, Ago: when,
		Title: changeTitle(c), Down: c.ChangePct < 0}
}

// changeLegend is the legend's entry for the change point markers: none
// without one, one per direction drawn, named apart when both are.
func changeLegend(ms []changeMark) []legendItem {
	var down, up bool
	for _, m := range ms {
		down, up = down || m.Down, up || !m.Down
	}
	var out []legendItem
	if down {
		out = append(out, legendItem{Name: "change point", ChangePoint: true, Down: true})
	}
	if up {
		out = append(out, legendItem{Name: "change point", ChangePoint: true})
	}
	if down && up {
		out[0].Name, out[1].Name = "change point, a fall", "change point, a rise"
	}
	return out
}
