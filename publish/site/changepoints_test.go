package site

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// The fixture with one change point: the headline of "ceiling-load ·
// echo" falls between entries 11 and 12.
const (
	changeFixture = "history_change.jsonl"
	changeAfter   = 12 // the first entry after it
	changeAnchor  = "e-2e5f2917a754"
)

func readHistoryFile(t testing.TB, name string) []publish.HistoryEntry {
	t.Helper()
	data, err := os.ReadFile(fixtures + name)
	if err != nil {
		t.Fatal(err)
	}
	h, err := publish.ParseHistory(data, name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// changeRun is the real sweep dressed as entry i of h (its commit, finish
// time, headline and ceilings), so that merging it leaves the history's
// figures, and so its change points, as they were.
func changeRun(t testing.TB, h []publish.HistoryEntry, i int) Run {
	t.Helper()
	base := readRun(t, "sweep_real.json")
	r := *base.Result
	e := h[i]
	r.Meta.GitRef, r.Meta.FinishedAt = e.GitRef, e.FinishedAt
	r.Headline.ThroughputPerS, r.Headline.Connections, r.Headline.LowerBound, r.Headline.Verdict = e.ThroughputPerS, e.Connections, e.LowerBound, e.Verdict
	r.NoiseFloorPct = e.NoiseFloorPct
	r.Ceilings = nil
	for _, c := range e.Ceilings {
		bc := result.BatchCeiling{Batch: c.Batch, Found: c.Found, ThroughputPerS: c.ThroughputPerS,
			Connections: c.Connections, Verdict: c.Verdict, LowerBound: c.LowerBound}
		bc.LatencyNs.P99 = c.P99Ns
		r.Ceilings = append(r.Ceilings, bc)
	}
	if got := publish.EntryOf(&r); got.Series() != e.Series() || got.Regime != e.Regime {
		t.Fatalf("the sweep dressed as entry %d is %q, %q; want %q, %q", i, got.Series(), got.Regime, e.Series(), e.Regime)
	}
	return Run{Name: fmt.Sprintf("entry%d.json", i), Result: &r}
}

func entry(series, ref string, hour int, regime string) publish.HistoryEntry {
	return publish.HistoryEntry{GitRef: ref, Generator: series, Regime: regime, Batch: 10, ThroughputPerS: 100,
		FinishedAt: time.Date(2026, 1, 1, hour, 0, 0, 0, time.UTC)}
}

// Change points land on the row of their After entry, and the segment
// each begins runs to the next change point of its measure or the next
// regime change, whichever comes first; other series are untouched.
func TestRowChangesMapsSegments(t *testing.T) {
	t.Parallel()
	var h []publish.HistoryEntry
	for i := range 8 {
		regime := "r1"
		if i >= 6 {
			regime = "r2"
		}
		h = append(h, entry("a", fmt.Sprintf("a%d", i), 2*i, regime))
		if i < 3 {
			h = append(h, entry("b", fmt.Sprintf("b%d", i), 2*i+1, "r1"))
		}
	}
	rows := publish.Trend(h)
	a := publish.TrendSeries(rows)[0]
	at := func(ref string) publish.HistoryEntry { return a[int(ref[1]-'0')].HistoryEntry } // "a3": a's row 3
	cs := []publish.Change{
		{Series: "a · echo", Measure: "headline", Before: at("a1"), After: at("a2"), ChangePct: -20},
		{Series: "a · echo", Measure: "batch 100", Before: at("a2"), After: at("a3"), ChangePct: 15},
		{Series: "a · echo", Measure: "headline", Before: at("a3"), After: at("a4"), ChangePct: 10},
		{Series: "a · echo", Measure: "headline", After: publish.HistoryEntry{GitRef: "gone"}}, // not among the rows
	}
	ps := placeChanges(a, cs)
	got := ""
	for _, p := range ps {
		got += fmt.Sprintf("%s@%d-%d ", p.Measure, p.At, p.End)
	}
	if want := "headline@2-4 batch 100@3-6 headline@4-6 "; got != want {
		t.Errorf("placed: %q, want %q", got, want)
	}

	marks := rowChanges(rows, cs)
	got = ""
	for i, m := range marks {
		s := rows[i].GitRef
		if m.Starts != nil {
			s += fmt.Sprintf(" starts %+.0f", m.Starts.ChangePct)
		}
		if m.In != nil {
			s += fmt.Sprintf(" in %+.0f from %s ago %d", m.In.ChangePct, rows[m.From].GitRef, m.Ago)
		}
		got += s + "\n"
	}
	want := `a0
b0
a1
b1
a2 starts -20 in -20 from a2 ago 0
b2
a3 in -20 from a2 ago 1
a4 starts +10 in +10 from a4 ago 0
a5 in +10 from a4 ago 1
a6
a7
`
	if got != want {
		t.Errorf("rows (only the headline's change points, the batch's is the trend's):\n%s\nwant:\n%s", got, want)
	}
}

// Row anchors are unique and slugs, whatever the refs hold.
func TestRowIDs(t *testing.T) {
	t.Parallel()
	ref := "2e5f2917a7546d5f2c8ad0d9c3f1e4b7a6c5d4e3"
	h := []publish.HistoryEntry{entry("a", ref, 0, "r"), entry("b", ref, 1, "r"), entry("a", `x"><script>`, 2, "r")}
	got := strings.Join(rowIDs(publish.Trend(h)), " ")
	if want := "e-2e5f2917a754 e-2e5f2917a754-2 e-x___script_"; got != want {
		t.Errorf("ids %q, want %q", got, want)
	}
}

// The trend of the fixture has one marker, at the x of the change's
// first entry after (its headline point), labelled with the change, and
// a legend entry for it; a trend without a change point has neither.
func TestTrendMarksChangePoint(t *testing.T) {
	t.Parallel()
	h := readHistoryFile(t, changeFixture)
	cs := publish.Changes(h)
	if len(cs) != 1 {
		t.Fatalf("the fixture has %d change points, want 1", len(cs))
	}
	rows := publish.Trend(h)
	c := trendChart(rows, placeChanges(rows, cs))
	p := c.Panels[0]
	if len(p.ChangePoints) != 1 {
		t.Fatalf("%d change point markers, want 1", len(p.ChangePoints))
	}
	m, head := p.ChangePoints[0], p.Series[0].Marks[changeAfter]
	if m.X != head.X || !m.Down || m.Label != "change point −12.6%" || m.Measure != "headline" {
		t.Errorf("marker %+v; want at x %.1f (the headline point of %s), down, −12.6%%", m, head.X, shortRef(h[changeAfter].GitRef))
	}
	if !strings.Contains(m.Title, "between 9e8adf58ef5b and 2e5f2917a754") || !strings.Contains(m.Title, result.FormatP(&cs[0].P)+";") {
		t.Errorf("title %q does not name the commits and p", m.Title)
	}
	if n := countLegend(c, "change point"); n != 1 {
		t.Errorf("%d legend entries for change points, want 1", n)
	}
	plain := trendChart(rows, nil)
	if len(plain.Panels[0].ChangePoints) != 0 || countLegend(plain, "change point") != 0 {
		t.Error("a trend without change points draws a marker or its legend")
	}
}

func countLegend(c *chart, prefix string) int {
	n := 0
	for _, l := range c.Legend {
		if strings.HasPrefix(l.Name, prefix) {
			n++
		}
	}
	return n
}

// A label near the right edge turns left, to stay in the panel.
func TestChangeLabelStaysInPanel(t *testing.T) {
	t.Parallel()
	p := newPanel(0, "", "", "")
	ps := []placed{{Change: publish.Change{Measure: "batch 100", ChangePct: 8}, At: 9}}
	m := changeMarks(p, func(int) float64 { return p.X + p.W - 10 }, ps)[0]
	if m.Anchor != "end" || m.LabelX >= m.X || m.Down || m.Label != "batch 100 change point +8.0%" {
		t.Errorf("marker %+v: want its label left of the line, up, batch 100 +8.0%%", m)
	}
}

var (
	trendSVG     = regexp.MustCompile(`(?s)<svg class="chart"[^>]*data-kind="trend".*?</svg>`)
	changeCellRE = regexp.MustCompile(`<td class="change[^"]*changepoint"[^>]*>.*?</td>`)
	rowIDRE      = regexp.MustCompile(`^id="([^"]*)"`)
)

// changeCells are the History rows whose change cell marks a change
// point: the row's id and the cell.
func changeCells(index string) [][2]string {
	var out [][2]string
	for _, tr := range strings.Split(index, "<tr ")[1:] {
		if cell := changeCellRE.FindString(tr); cell != "" {
			id := ""
			if m := rowIDRE.FindStringSubmatch(tr); m != nil {
				id = m[1]
			}
			out = append(out, [2]string{id, cell})
		}
	}
	return out
}

// The site of the fixture: one marker in the trend, one marked History
// row (the change's first entry after), and the run page of an entry
// after it says so and links that row; one before it says nothing.
func TestSiteChangePoint(t *testing.T) {
	t.Parallel()
	h := readHistoryFile(t, changeFixture)
	after, before := changeRun(t, h, changeAfter+4), changeRun(t, h, 8)
	files, err := Build([]Run{after, before}, Options{History: h, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	index := string(files[IndexFile])
	trend := trendSVG.FindString(index)
	if n := strings.Count(trend, `<g class="changepoint down"`); n != 1 {
		t.Errorf("trend: %d change point markers, want 1", n)
	}
	cells := changeCells(index)
	if len(cells) != 1 || cells[0][0] != changeAnchor || !strings.Contains(cells[0][1], "▼ −12.6% change point") {
		t.Errorf("History: change point cells %q, want one on row %s, ▼ −12.6%% change point", cells, changeAnchor)
	}
	page := string(files[pageName(after.Result)])
	want := `main changed <strong>−12.6%</strong> at <a class="changepoint-link" href="index.html#` + changeAnchor + `">2e5f2917a754</a> (change point, 4 entries ago)`
	if !strings.Contains(page, want) {
		t.Errorf("the run page after the change does not say\n%s", want)
	}
	if strings.Contains(string(files[pageName(before.Result)]), `id="changepoint"`) {
		t.Error("the run page before the change mentions it")
	}
}

// A change point's commits come from the history file: they reach the
// pages as text, and the anchor as a slug.
func TestSiteChangePointHostile(t *testing.T) {
	t.Parallel()
	h := readHistoryFile(t, changeFixture)
	h[changeAfter].GitRef = `"><script>alert(1)</script>`
	h[changeAfter-1].GitRef = `javascript:alert(2)`
	if len(publish.Changes(h)) != 1 {
		t.Fatal("renaming the commits lost the change point")
	}
	run := changeRun(t, h, changeAfter)
	files, err := Build([]Run{run}, Options{History: h, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		html := strings.ToLower(string(b))
		if strings.Contains(html, "<script") || strings.Contains(html, `href="javascript`) {
			t.Errorf("%s: a ref from the history became markup", name)
		}
	}
	page := string(files[pageName(run.Result)])
	if !strings.Contains(page, `href="index.html#e-___script_alert_1___script_"`) || !strings.Contains(page, "this run is the first after it") {
		t.Errorf("the run page's change line: no slugged anchor or wrong distance:\n%s", page[:min(len(page), 3000)])
	}
}
