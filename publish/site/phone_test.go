package site

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/chromedp/chromedp"
)

// aaRun is a real 41-block A/A run (benchmark/comparesim's aa-5s-calm:
// 84 points, one of them contended), its comparison derived again by
// this code. Its run page was 61,515 px tall at 390 px: every row 596 px,
// the "why" column squeezed to 86 px.
func aaRun(t testing.TB) Run {
	t.Helper()
	b, err := os.ReadFile("../../benchmark/comparesim/testdata/aa-5s-calm.json")
	if err != nil {
		t.Fatal(err)
	}
	var r result.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r.Summarize()
	if r.Comparison == nil || r.Comparison.Headline.Blocks < 39 {
		t.Fatalf("the A/A run has %v", r.Comparison)
	}
	return Run{Name: "aa-5s-calm.json", Result: &r}
}

// layoutJS is what a page looks like as laid out: its height, whether
// any table scrolls sideways in its box, the History cell of the latest
// change point and the visible trend's change point marker and chart
// edges (their left and right, in viewport pixels), and the visible
// trend's x labels as boxes, left to right.
const layoutJS = `(() => {
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.right]; };
  const shown = el => el.getBoundingClientRect().width > 0;
  const tables = [...document.querySelectorAll('table')].filter(shown);
  const cells = [...document.querySelectorAll('table.trend td.changepoint .cp-mark')];
  const trends = [...document.querySelectorAll('svg.chart[data-kind="trend"]')].filter(shown);
  const t = trends[0];
  const marks = t ? [...t.querySelectorAll('g.changepoint line')] : [];
  return {height: document.documentElement.scrollHeight,
    sidewaysTables: tables.filter(tb => tb.scrollWidth > tb.clientWidth + 1).map(tb => tb.className || tb.parentElement.id),
    cell: cells.length ? box(cells[cells.length - 1]) : [],
    marker: marks.length ? box(marks[marks.length - 1]) : [],
    chart: t ? box(t) : [], figure: t ? box(t.closest('figure')) : [],
    ticks: t ? [...t.querySelectorAll('text.xtick')].map(box).sort((a, b) => a[0] - b[0]) : []};
})()`

type layoutFacts struct {
	Height         float64      `json:"height"`
	SidewaysTables []string     `json:"sidewaysTables"`
	Cell           []float64    `json:"cell"`
	Marker         []float64    `json:"marker"`
	Chart          []float64    `json:"chart"`
	Figure         []float64    `json:"figure"`
	Ticks          [][2]float64 `json:"ticks"`
}

// TestSiteLayoutInBrowser is issue 51's site on a phone and a desktop,
// laid out in Chromium. The index of the 24-entry history with one change
// point: at 1280 and at 390 px the trend's commit labels do not touch
// (they once ran together into one string), and at 390 px the latest
// change point's History cell and its marker on the trend are on the
// screen without a swipe (no table scrolls sideways, the trend fits its
// figure). The page of a real 41-block A/A run at 390 px is at most 10
// screens tall, and so is a real slower run of 37 blocks, half of its
// points contended; no table on either scrolls sideways.
func TestSiteLayoutInBrowser(t *testing.T) {
	ctx := browser(t)
	h := readHistoryFile(t, changeFixture)
	aa := aaRun(t)
	dir := t.TempDir()
	if _, err := Write(dir, []Run{changeRun(t, h, len(h)-1), slowerRun(t), aa}, Options{History: h, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	look := func(width, height int64, page string) layoutFacts {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+page)); err != nil {
			t.Fatal(err)
		}
		f, err := chromedp.Run(ctx, chromedp.Evaluate[layoutFacts](layoutJS))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s at %d px: %+v", page, width, f)
		return f
	}
	labelsApart := func(what string, f layoutFacts) {
		t.Helper()
		if len(f.Ticks) < 2 {
			t.Errorf("%s: %d commit labels, want a readable few", what, len(f.Ticks))
		}
		for i := 1; i < len(f.Ticks); i++ {
			if f.Ticks[i][0] < f.Ticks[i-1][1]+2 {
				t.Errorf("%s: commit labels %d and %d touch: %v", what, i-1, i, f.Ticks)
			}
		}
		if len(f.Chart) == 2 && len(f.Ticks) > 0 && (f.Ticks[0][0] < f.Chart[0] || f.Ticks[len(f.Ticks)-1][1] > f.Chart[1]+1) {
			t.Errorf("%s: a commit label runs past the chart: %v in %v", what, f.Ticks, f.Chart)
		}
	}
	labelsApart("1280 px", look(1280, 900, IndexFile))

	const w, screen = 390, 844
	phone := look(w, screen, IndexFile)
	labelsApart("390 px", phone)
	if len(phone.SidewaysTables) > 0 {
		t.Errorf("at %d px these tables scroll sideways: %v", w, phone.SidewaysTables)
	}
	if len(phone.Cell) != 2 || phone.Cell[0] < 0 || phone.Cell[1] > w {
		t.Errorf("at %d px the change point's History cell spans %v: off the screen", w, phone.Cell)
	}
	if len(phone.Chart) != 2 || len(phone.Figure) != 2 || phone.Chart[1] > phone.Figure[1]+1 || phone.Chart[1] > w {
		t.Errorf("at %d px the trend spans %v in its figure %v: it scrolls", w, phone.Chart, phone.Figure)
	}
	if len(phone.Marker) != 2 || phone.Marker[0] < 0 || phone.Marker[1] > w {
		t.Errorf("at %d px the trend's change point marker is at %v: off the screen", w, phone.Marker)
	}

	// The calm A/A run, and the slower run of 37 blocks whose contended
	// points each have a reason, and whose warnings are long.
	for _, r := range []Run{aa, slowerRun(t)} {
		run := look(w, screen, pageName(r.Result))
		if run.Height > 10*screen {
			t.Errorf("%s: the %d-block run's page is %.0f px tall at %d px: %.1f screens, want at most 10", r.Name, r.Result.Comparison.Headline.Blocks, run.Height, w, run.Height/screen)
		}
		if len(run.SidewaysTables) > 0 {
			t.Errorf("%s at %d px: these tables scroll sideways: %v", r.Name, w, strings.Join(run.SidewaysTables, ", "))
		}
	}
}
