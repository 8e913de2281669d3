package site

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// changeJS is what the index shows of the change points, as laid out:
// the trend's markers (where the line is drawn, against where the first
// entry after the change has its headline point), the legend, and the
// History cells that mark one, with their rows.
const changeJS = `((after) => {
  const svg = document.querySelector('svg.chart[data-kind="trend"]');
  const marks = [...svg.querySelectorAll('g.changepoint.down')];
  const mid = el => { const r = el.getBoundingClientRect(); return r.x + r.width / 2; };
  const point = [...svg.querySelectorAll('g.series[data-series="headline"] circle.point')]
    .find(c => c.querySelector('title').textContent.startsWith(after + ', '));
  const m = marks[0];
  const cells = [...document.querySelectorAll('table.trend td.changepoint')];
  return {markers: marks.length, allMarkers: svg.querySelectorAll('g.panel g.changepoint').length,
    markerX: m ? mid(m.querySelector('line')) : -1, pointX: point ? mid(point) : -1,
    label: m ? m.querySelector('text').textContent : '', title: m ? m.querySelector('title').textContent : '',
    lineStroke: m ? getComputedStyle(m.querySelector('line')).stroke : '',
    legend: [...svg.querySelectorAll('g.legend text')].map(t => t.textContent),
    cells: cells.map(td => [td.closest('tr').id, td.querySelector('.cp-mark').textContent, getComputedStyle(td.querySelector('.cp-mark')).backgroundColor])};
})(AFTER)`

type changeFacts struct {
	Markers    int         `json:"markers"`
	AllMarkers int         `json:"allMarkers"`
	MarkerX    float64     `json:"markerX"`
	PointX     float64     `json:"pointX"`
	Label      string      `json:"label"`
	Title      string      `json:"title"`
	LineStroke string      `json:"lineStroke"`
	Legend     []string    `json:"legend"`
	Cells      [][3]string `json:"cells"`
}

// runChangeJS is a run page's change point line and where it links.
const runChangeJS = `(() => {
  const p = document.getElementById('changepoint');
  const a = p && p.querySelector('a.changepoint-link');
  return {text: p ? p.textContent : '', href: a ? a.getAttribute('href') : '', inHeader: !!(p && p.closest('header'))};
})()`

type runChangeFacts struct {
	Text     string `json:"text"`
	Href     string `json:"href"`
	InHeader bool   `json:"inHeader"`
}

// targetJS is where a followed link landed: the fragment and whether the
// row it names marks the change point.
const targetJS = `(() => {
  const t = document.querySelector(':target');
  return {hash: location.hash, marked: !!(t && t.matches('table.trend tr') && t.querySelector('td.changepoint .cp-mark.down'))};
})()`

type targetFacts struct {
	Hash   string `json:"hash"`
	Marked bool   `json:"marked"`
}

// TestSiteChangePointInBrowser is issue 34 on the site: the fixture
// history with one change point (the headline −12.6%), and run pages of
// an entry four after it and of one before it. In Chromium the trend has
// exactly one falling change point marker, drawn at the x of the first
// entry after the change's headline point, labelled and in the legend;
// the History table marks exactly that entry's row; the later run page
// opens with a line whose link lands on that row, the earlier one has
// none; and at 390 px nothing scrolls sideways and the chart text stays
// at least 10 px high.
func TestSiteChangePointInBrowser(t *testing.T) {
	ctx := browser(t)
	h := readHistoryFile(t, changeFixture)
	after, before := changeRun(t, h, changeAfter+4), changeRun(t, h, 8)
	dir := t.TempDir()
	if _, err := Write(dir, []Run{after, before}, Options{History: h, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	var errs consoleErrors
	errs.listen(t, ctx)
	load := func(page string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+page)); err != nil {
			t.Fatalf("load %s: %v", page, err)
		}
		if e := errs.take(); len(e) > 0 {
			t.Errorf("%s: console errors:\n%s", page, strings.Join(e, "\n"))
		}
	}

	load(IndexFile)
	js := strings.Replace(changeJS, "AFTER", "'"+shortRef(h[changeAfter].GitRef)+"'", 1)
	idx, err := chromedp.Run(ctx, chromedp.Evaluate[changeFacts](js))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("index: %+v", idx)
	if idx.Markers != 1 || idx.AllMarkers != 1 {
		t.Fatalf("trend: %d falling change point markers of %d, want exactly one", idx.Markers, idx.AllMarkers)
	}
	if idx.PointX <= 0 || math.Abs(idx.MarkerX-idx.PointX) > 0.5 {
		t.Errorf("the marker is drawn at x %.1f, the headline point of %s at %.1f: want the same", idx.MarkerX, shortRef(h[changeAfter].GitRef), idx.PointX)
	}
	if idx.Label != "change point −12.6%" || !strings.Contains(idx.Title, "between 9e8adf58ef5b and 2e5f2917a754") || idx.LineStroke != "rgb(164, 14, 38)" {
		t.Errorf("marker: label %q, title %q, stroke %s; want change point −12.6%%, the commits, drawn red", idx.Label, idx.Title, idx.LineStroke)
	}
	if !strings.Contains(strings.Join(idx.Legend, "|"), "change point") {
		t.Errorf("legend %q has no change point entry", idx.Legend)
	}
	if len(idx.Cells) != 1 || idx.Cells[0][0] != changeAnchor || idx.Cells[0][1] != "▼ −12.6% change point" || idx.Cells[0][2] != "rgb(255, 235, 233)" {
		t.Errorf("History: change point cells %q, want one, on row %s, ▼ −12.6%% change point, coloured as a fall", idx.Cells, changeAnchor)
	}

	load(pageName(after.Result))
	run, err := chromedp.Run(ctx, chromedp.Evaluate[runChangeFacts](runChangeJS))
	if err != nil {
		t.Fatal(err)
	}
	if want := "main changed −12.6% at 2e5f2917a754 (change point, 4 entries ago)"; run.Text != want || run.Href != "index.html#"+changeAnchor || !run.InHeader {
		t.Errorf("the run page after the change: %+v; want %q in its header, linking #%s", run, want, changeAnchor)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("a.changepoint-link")), chromedp.WaitReady(chromedp.CSS("table.trend"))); err != nil {
		t.Fatal(err)
	}
	landed, err := chromedp.Run(ctx, chromedp.Evaluate[targetFacts](targetJS))
	if err != nil {
		t.Fatal(err)
	}
	if landed.Hash != "#"+changeAnchor || !landed.Marked {
		t.Errorf("following the link lands on %q (its row marks the change point: %v), want #%s", landed.Hash, landed.Marked, changeAnchor)
	}

	load(pageName(before.Result))
	if run, err := chromedp.Run(ctx, chromedp.Evaluate[runChangeFacts](runChangeJS)); err != nil || run.Text != "" {
		t.Errorf("the run page before the change says %q (%v), want nothing", run.Text, err)
	}

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{IndexFile, pageName(after.Result)} {
		load(page)
		f, err := chromedp.Run(ctx, chromedp.Evaluate[phoneFacts](phoneJS))
		if err != nil {
			t.Fatal(err)
		}
		if f.ScrollWidth > 390 || f.MinText < 10 {
			t.Errorf("%s at 390 px: %v px wide, chart text %.1f px high; want no sideways scroll and at least 10 px", page, f.ScrollWidth, f.MinText)
		}
	}
}
