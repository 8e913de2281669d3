package site

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

const fixtures = "../testdata/"

// siteFixtures are the real sweeps the site is tested with: a single-arm
// sweep with lower bounds and an A-A band, a two-arm sweep, and a rooms
// sweep with an objective.
var siteFixtures = []string{"sweep_real.json", "two_arm_real.json", "rooms_real.json"}

func readRun(t testing.TB, name string) Run {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := publish.Read(data, name)
	if err != nil {
		t.Fatal(err)
	}
	return Run{Name: name, Result: r}
}

func readHistory(t testing.TB) []publish.HistoryEntry {
	t.Helper()
	data, err := os.ReadFile(fixtures + "history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h, err := publish.ParseHistory(data, "history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// expectCurve is what the curve chart of a batch must hold, derived from
// the document independently of the chart code: a throughput and a p99
// series per arm, and a lower-bound marker per lower-bound sample.
func expectCurve(r *result.Result, batch int) (series, lowerBounds int) {
	arms := 1
	if r.Comparison != nil || r.Meta.BaseTarget != nil {
		arms = 2
	}
	for _, p := range r.Curve {
		if p.Batch == batch && p.Status == "ok" && p.LowerBound &&
			(p.Role == result.RoleSweep || p.Role == result.RoleAARepeat || p.Role == result.RoleCompare) {
			lowerBounds++
		}
	}
	return 2 * arms, lowerBounds
}

// expectTrend: the headline and one series per batch size; a lower-bound
// marker per lower-bound headline and per lower-bound ceiling.
func expectTrend(h []publish.HistoryEntry) (series, lowerBounds int) {
	batches := map[int]bool{}
	for _, e := range h {
		if e.LowerBound {
			lowerBounds++
		}
		for _, c := range e.CeilingsOf() {
			batches[c.Batch] = true
			if c.Found && c.LowerBound {
				lowerBounds++
			}
		}
	}
	return 1 + len(batches), lowerBounds
}

// historyWith is the history the index is built from: the file, plus
// the runs given (as Build merges them).
func historyWith(h []publish.HistoryEntry, runs []Run) []publish.HistoryEntry {
	var entries []publish.HistoryEntry
	for _, r := range runs {
		entries = append(entries, publish.EntryOf(r.Result))
	}
	return publish.MergeHistory(h, entries)
}

// expectTrends is expectTrend for each series' chart, in the index's
// order.
func expectTrends(h []publish.HistoryEntry) (series, lowerBounds []int) {
	for _, rows := range publish.TrendSeries(publish.Trend(h)) {
		var entries []publish.HistoryEntry
		for _, r := range rows {
			entries = append(entries, r.HistoryEntry)
		}
		s, lb := expectTrend(entries)
		series, lowerBounds = append(series, s), append(lowerBounds, lb)
	}
	return series, lowerBounds
}

var svgRE = regexp.MustCompile(`(?s)<svg class="chart"[^>]*data-kind="(\w+)"(?: data-batch="(\d+)")?.*?</svg>`)

func TestSiteChartsHoldTheDocuments(t *testing.T) {
	t.Parallel()
	var runs []Run
	for _, f := range siteFixtures {
		runs = append(runs, readRun(t, f))
	}
	hist := readHistory(t)
	files, err := Build(runs, Options{History: hist, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(runs)+1 {
		t.Fatalf("%d files, want index and %d run pages", len(files), len(runs))
	}
	index := string(files[IndexFile])
	wantSeries, wantLB := expectTrends(historyWith(hist, runs))
	// Each trend is drawn twice: for a wide screen and, hidden there, for
	// a phone (data-layout="narrow"); both hold the same series.
	var trend, narrow [][]string
	for _, m := range svgRE.FindAllStringSubmatch(index, -1) {
		if strings.Contains(m[0][:strings.Index(m[0], ">")], `data-layout="narrow"`) {
			narrow = append(narrow, m)
		} else {
			trend = append(trend, m)
		}
	}
	for i, n := range narrow {
		if i < len(trend) && strings.Count(n[0], `<g class="series"`) != strings.Count(trend[i][0], `<g class="series"`) {
			t.Errorf("trend %d: the phone's chart has other series than the wide one", i)
		}
	}
	if len(trend) != len(wantSeries) || len(trend) < 3 || len(narrow) != len(trend) {
		t.Fatalf("index: %d trend charts, want one per series: %d (a sweep's, a two-arm run's and a rooms run's)", len(trend), len(wantSeries))
	}
	allLB, regimes := 0, 0
	for i, tr := range trend {
		if tr[1] != "trend" {
			t.Errorf("index chart %d is %q, want a trend", i, tr[1])
		}
		if got := strings.Count(tr[0], `<g class="series"`); got != wantSeries[i] {
			t.Errorf("trend %d: %d series, want %d", i, got, wantSeries[i])
		}
		if got := strings.Count(tr[0], `class="point lower-bound"`); got != wantLB[i] {
			t.Errorf("trend %d: %d lower-bound markers, want %d", i, got, wantLB[i])
		}
		allLB += wantLB[i]
		regimes += strings.Count(tr[0], `class="regime-change"`)
	}
	if allLB == 0 {
		t.Error("no lower-bound marker in any trend: the fixtures no longer exercise them")
	}
	if regimes < 2 {
		t.Errorf("trends: %d regime-change marks, want the two of the fixture history (and the legend's)", regimes)
	}
	for _, r := range runs {
		page := pageName(r.Result)
		if !strings.Contains(index, fmt.Sprintf(`<a class="run-link" href="%s">`, page)) {
			t.Errorf("index does not link %s", page)
		}
		html := string(files[page])
		charts := svgRE.FindAllStringSubmatch(html, -1)
		if len(charts) != len(r.Result.Config.BatchLadder) {
			t.Errorf("%s: %d charts, want one per batch size (%d)", r.Name, len(charts), len(r.Result.Config.BatchLadder))
		}
		for _, c := range charts {
			var batch int
			fmt.Sscan(c[2], &batch)
			ws, wlb := expectCurve(r.Result, batch)
			if got := strings.Count(c[0], `<g class="series"`); got != ws {
				t.Errorf("%s batch %d: %d series, want %d", r.Name, batch, got, ws)
			}
			if got := strings.Count(c[0], `class="point lower-bound"`); got != wlb {
				t.Errorf("%s batch %d: %d lower-bound markers, want %d", r.Name, batch, got, wlb)
			}
			band := strings.Contains(c[0], `class="noise-band" x=`)
			if wantBand := r.Result.NoiseFloorPct != nil && batch == r.Result.Headline.Batch; band != wantBand {
				t.Errorf("%s batch %d: noise band drawn %v, want %v", r.Name, batch, band, wantBand)
			}
			// Every marker carries its verdict on hover.
			if n, titled := strings.Count(c[0], `<circle class="point`), strings.Count(c[0], "verdict: "); titled < n {
				t.Errorf("%s batch %d: %d markers, %d with a verdict title", r.Name, batch, n, titled)
			}
		}
	}
}

func TestSiteFailedPointIsACross(t *testing.T) {
	t.Parallel()
	run := readRun(t, "sweep_real.json")
	run.Result.Curve[1].Status = "failed"
	run.Result.Curve[1].FailReason = "server exited"
	files, err := Build([]Run{run}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	html := string(files[pageName(run.Result)])
	// One cross in the throughput panel and one in the p99 panel.
	if got := strings.Count(html, `<path class="failed"`); got != 2 {
		t.Errorf("%d failed crosses, want 2", got)
	}
	if !strings.Contains(html, "failed: server exited") {
		t.Error("the failed point's reason is not in its title")
	}
}

// TestSiteHostile renders a result whose strings are hostile: everything
// from the document must arrive as text, never as markup or a link.
func TestSiteHostile(t *testing.T) {
	t.Parallel()
	run := readRun(t, "head_hostile.json")
	run.Result.Meta.GitRef = `../../x"><script>alert(2)</script>`
	run.Result.Meta.Generator = `javascript:alert(3)`
	run.Result.Curve[0].VerdictReason = `</title><script>alert(4)</script><a href="javascript:alert(5)">x</a>`
	run.Result.Meta.Target.Name = `<img src=x onerror=alert(6)>`
	files, err := Build([]Run{run}, Options{History: []publish.HistoryEntry{publish.EntryOf(run.Result)}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if strings.ContainsAny(name, `/\"<>`) || strings.HasPrefix(name, ".") {
			t.Errorf("page name %q is not a plain file name", name)
		}
		html := strings.ToLower(string(b))
		for _, bad := range []string{"<script", "<img", `href="javascript:`, "<a href=\"javascript"} {
			if strings.Contains(html, bad) {
				t.Errorf("%s holds %q: a document's text became markup", name, bad)
			}
		}
		if !strings.Contains(html, "&lt;script&gt;") {
			t.Errorf("%s: the hostile text is not shown escaped", name)
		}
	}
}

func TestPageNames(t *testing.T) {
	t.Parallel()
	a, b := readRun(t, "sweep_real.json"), readRun(t, "sweep_real.json")
	files, err := Build([]Run{a, b}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	// Two runs of one commit get two pages; the history keeps one entry.
	if len(files) != 3 {
		t.Errorf("%d files, want index and two pages", len(files))
	}
	if got := slug("a/b c\x00..d"); got != "a_b_c_..d" {
		t.Errorf("slug = %q", got)
	}
}

// The trend's lines start afresh after a regime change: values on either
// side are not comparable, so no segment joins them.
func TestTrendBreaksAtRegimeChange(t *testing.T) {
	h := []publish.HistoryEntry{
		{GitRef: "a", Regime: "echo, batch 10, 256 B, 3 server cores, 1 generator core", Batch: 10, ThroughputPerS: 100},
		{GitRef: "b", Regime: "echo, batch 10, 256 B, 3 server cores, 1 generator core", Batch: 10, ThroughputPerS: 110},
		{GitRef: "c", Regime: "echo, batch 10, 256 B, 1 server core, 1 generator core", Batch: 10, ThroughputPerS: 40},
		{GitRef: "d", Regime: "echo, batch 10, 256 B, 1 server core, 1 generator core", Batch: 10, ThroughputPerS: 45},
	}
	c := trendChart(publish.Trend(h), nil)
	head := c.Panels[0].Series[0]
	if got := strings.Count(head.Points, ",") + strings.Count(strings.Join(head.Breaks, " "), ","); got != 4 {
		t.Fatalf("headline marks in lines: %d, want 4", got)
	}
	if len(head.Breaks) != 1 || strings.Count(head.Points, ",") != 2 || len(c.Panels[0].VLines) != 1 {
		t.Errorf("headline line %q breaks %q vlines %d: want two segments of two, split at the regime change", head.Points, head.Breaks, len(c.Panels[0].VLines))
	}
}

// A run without a clean headline says so, and a p99 that was not
// measured is a dash: never "0 msg/s ... p99 0 ()".
func TestSiteFailedRunSaysNone(t *testing.T) {
	t.Parallel()
	r := readRun(t, "sweep_real.json")
	res := *r.Result
	res.Headline = result.Headline{Batch: 10}
	files, err := Build([]Run{{Name: "failed.json", Result: &res}}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	page := string(files[pageName(&res)])
	if !strings.Contains(page, "<strong>none</strong>: batch 10 has no clean point") || strings.Contains(page, "0 msg/s at batch") || strings.Contains(page, "p99 0 (") {
		t.Errorf("a run without a headline: the page does not say none:\n%s", page[:min(len(page), 2000)])
	}
	index := string(files[IndexFile])
	if !strings.Contains(index, `<span title="no clean headline">—</span>`) {
		t.Error("the history row of a run without a headline does not show a dash")
	}
}

// TestRegimeIsNotATargetName: two local compare runs of one setup, whose
// arms ceiling compare names by their commits (HEAD@061cb02,
// HEAD@5d6e7f8), are one regime: the trend draws no regime line between
// them and the History table marks no change. The same run on another
// machine is another regime.
func TestRegimeIsNotATargetName(t *testing.T) {
	base := readRun(t, "two_arm_real.json")
	var runs []Run
	for i, name := range []string{"HEAD@061cb02", "HEAD@5d6e7f8"} {
		r := *base.Result
		r.Meta.GitRef = fmt.Sprintf("%040d", i+1)
		r.Meta.FinishedAt = base.Result.Meta.FinishedAt.Add(time.Duration(i) * time.Hour)
		r.Meta.Target.Name = name
		runs = append(runs, Run{Name: name + ".json", Result: &r})
	}
	files, err := Build(runs, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	index := string(files[IndexFile])
	if strings.Contains(index, `class="regime-change"`) || strings.Contains(index, `class="regime"`) {
		t.Errorf("two target names on one machine drew a regime change")
	}
	other := *runs[1].Result
	other.Meta.Hardware.CPUModel = "another CPU"
	files, err = Build([]Run{runs[0], {Name: "other.json", Result: &other}}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files[IndexFile]), `<line class="regime-change"`) {
		t.Errorf("another machine drew no regime change")
	}
}
