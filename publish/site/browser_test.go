package site

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browserPath finds Chromium (Debian's chromium, which .ci/run installs).
// Without one the test skips, with the reason, unless CI is set: there a
// missing browser is a failure, so the check cannot silently vanish.
func browserPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CEILING_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI is set but no Chromium was found (chromium, chromium-browser, google-chrome on PATH, or CEILING_CHROMIUM): .ci/run installs Debian's chromium")
	}
	t.Skip("no Chromium found (chromium, chromium-browser, google-chrome on PATH, or CEILING_CHROMIUM) and CI is not set: the browser test needs one")
	return ""
}

// browser starts a headless Chromium with a fresh profile, a temp dir of
// its own and nothing that reaches the network by itself.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := browserPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium's own scratch (org.chromium.Chromium.*) goes where the
		// test's temp dir is removed, not into /tmp for good.
		chromedp.Env("TMPDIR="+t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil { // start the browser
		t.Fatalf("start %s: %v", exe, err)
	}
	return bctx
}

// consoleErrors collects the errors a tab reports: console.error calls,
// uncaught exceptions, and error entries of the browser log (a resource
// that failed to load, a blocked request).
type consoleErrors struct {
	mu   sync.Mutex
	errs []string
}

func (c *consoleErrors) listen(t *testing.T, ctx context.Context) {
	t.Helper()
	err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				msg = "console.error"
			}
		case *runtime.EventExceptionThrown:
			msg = "exception: " + ev.ExceptionDetails.Text
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				msg = fmt.Sprintf("log %s: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		}
		if msg != "" {
			c.mu.Lock()
			c.errs = append(c.errs, msg)
			c.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (c *consoleErrors) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.errs
	c.errs = nil
	return out
}

// pageFacts is what a page looks like in the browser, laid out.
type pageFacts struct {
	Title    string       `json:"title"`
	Charts   []chartFacts `json:"charts"`
	SVGs     [][2]float64 `json:"svgs"`
	RunLinks []string     `json:"runLinks"`
	Rows     int          `json:"rows"`
}

type chartFacts struct {
	Kind        string  `json:"kind"`
	Batch       int     `json:"batch"`
	W           float64 `json:"w"`
	H           float64 `json:"h"`
	Series      int     `json:"series"`
	LowerBounds int     `json:"lowerBounds"`
	Points      int     `json:"points"`
	Titled      int     `json:"titled"`
	// HiddenLowerBounds counts lower-bound markers drawn without a
	// dashed, non-white outline: in the DOM but not visible as such.
	HiddenLowerBounds int `json:"hiddenLowerBounds"`
	// Ticks are the x axis's labels, left to right as laid out.
	Ticks []string `json:"ticks"`
}

const factsJS = `(() => {
  const size = el => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  // What is laid out: a trend's phone chart is hidden on a wide screen,
  // its wide chart on a phone.
  const shown = el => el.getBoundingClientRect().width > 0;
  const charts = [...document.querySelectorAll('svg.chart')].filter(shown).map(s => {
    const [w, h] = size(s);
    const lbs = [...s.querySelectorAll('.point.lower-bound')];
    const hidden = lbs.filter(el => {
      const cs = getComputedStyle(el);
      return cs.strokeDasharray === 'none' || cs.stroke === 'rgb(255, 255, 255)' || cs.stroke === 'none' || el.getBoundingClientRect().width === 0;
    }).length;
    return {kind: s.dataset.kind, batch: Number(s.dataset.batch || 0), w, h,
      series: s.querySelectorAll('g.series').length, lowerBounds: lbs.length,
      points: s.querySelectorAll('.point').length, titled: s.querySelectorAll('.point > title').length,
      hiddenLowerBounds: hidden,
      ticks: [...s.querySelectorAll('text.xtick')].map(t => [t.textContent, t.getBoundingClientRect().x]).sort((a, b) => a[1] - b[1]).map(t => t[0])};
  });
  return {title: document.title, charts, svgs: [...document.querySelectorAll('svg')].filter(s => !s.closest('.narrow-only, .wide-only') || shown(s)).map(size),
    runLinks: [...document.querySelectorAll('a.run-link')].map(a => a.getAttribute('href')),
    rows: document.querySelectorAll('table.trend tbody tr').length};
})()`

// TestSiteInBrowser renders the site from the real sweeps and the fixture
// history, serves it on loopback and loads every page in Chromium: no
// console error, every SVG laid out with a size, the expected series and
// lower-bound markers (visibly dashed), and the index listing each run.
// With CEILING_SCREENSHOT_DIR set, each page is saved there as a PNG.
func TestSiteInBrowser(t *testing.T) {
	ctx := browser(t)
	var runs []Run
	for _, f := range siteFixtures {
		runs = append(runs, readRun(t, f))
	}
	hist := readHistory(t)
	dir := t.TempDir()
	names, err := Write(dir, runs, Options{History: hist, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	// The control: a page with a missing image must be reported, or the
	// "no console errors" check proves nothing.
	mux.HandleFunc("/broken-control", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body><img src="/missing.png"></body></html>`)
	})
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)

	var errs consoleErrors
	errs.listen(t, ctx)
	load := func(page string) pageFacts {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+page)); err != nil {
			t.Fatalf("load %s: %v", page, err)
		}
		facts, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](factsJS))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		if e := errs.take(); len(e) > 0 {
			t.Errorf("%s: console errors:\n%s", page, strings.Join(e, "\n"))
		}
		if shots := os.Getenv("CEILING_SCREENSHOT_DIR"); shots != "" {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot %s: %v", page, err)
			}
			if err := os.MkdirAll(shots, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(shots, strings.TrimSuffix(page, ".html")+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i, s := range facts.SVGs {
			if s[0] <= 0 || s[1] <= 0 {
				t.Errorf("%s: svg %d is %vx%v", page, i, s[0], s[1])
			}
		}
		for _, c := range facts.Charts {
			if c.HiddenLowerBounds > 0 {
				t.Errorf("%s: %s chart (batch %d): %d lower-bound markers are not drawn dashed and coloured", page, c.Kind, c.Batch, c.HiddenLowerBounds)
			}
			if c.Titled != c.Points {
				t.Errorf("%s: %s chart (batch %d): %d of %d markers have a hover title", page, c.Kind, c.Batch, c.Titled, c.Points)
			}
		}
		return facts
	}

	// The index: a trend chart per series (the sweep's, the two-arm
	// run's, the rooms run's: never one kind drawn as another's figure),
	// each running oldest left although the runs were given newest first,
	// a row per history entry (with the runs merged), and a link to each
	// run page.
	index := load(IndexFile)
	all := historyWith(hist, runs)
	wantSeries, wantLB := expectTrends(all)
	series := publish.TrendSeries(publish.Trend(all))
	if len(index.Charts) != len(series) || len(series) < 3 {
		t.Fatalf("index charts: %+v, want one trend per series (%d)", index.Charts, len(series))
	}
	for i, c := range index.Charts {
		if c.Kind != "trend" || c.Series != wantSeries[i] || c.LowerBounds != wantLB[i] {
			t.Errorf("trend %d: %s, %d series and %d lower-bound markers, want a trend with %d and %d", i, c.Kind, c.Series, c.LowerBounds, wantSeries[i], wantLB[i])
		}
		// Left to right on screen is the history's order, oldest first.
		var want []string
		for _, r := range series[i] {
			want = append(want, shortRef(r.GitRef))
		}
		if !inOrder(c.Ticks, want) || len(c.Ticks) == 0 {
			t.Errorf("trend %d (%s): x labels left to right %q, want them in commit order %q", i, series[i][0].Series(), c.Ticks, want)
		}
	}
	if index.Rows != len(all) {
		t.Errorf("trend table: %d rows, want %d", index.Rows, len(all))
	}
	if len(index.RunLinks) != len(runs) {
		t.Errorf("index lists %d runs %v, want %d", len(index.RunLinks), index.RunLinks, len(runs))
	}
	for i, r := range runs {
		page := pageName(r.Result)
		if i < len(index.RunLinks) && index.RunLinks[i] != page {
			t.Errorf("run link %d: %q, want %q", i, index.RunLinks[i], page)
		}
		facts := load(page)
		if len(facts.Charts) != len(r.Result.Config.BatchLadder) {
			t.Errorf("%s: %d charts, want one per batch size (%d)", page, len(facts.Charts), len(r.Result.Config.BatchLadder))
		}
		for _, c := range facts.Charts {
			ws, wlb := expectCurve(r.Result, c.Batch)
			if c.Series != ws || c.LowerBounds != wlb {
				t.Errorf("%s batch %d: %d series and %d lower-bound markers, want %d and %d", page, c.Batch, c.Series, c.LowerBounds, ws, wlb)
			}
		}
	}
	if len(names) != len(runs)+1 {
		t.Errorf("wrote %v", names)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/broken-control")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var got []string
	for len(got) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		got = errs.take()
	}
	if len(got) == 0 {
		t.Error("the control page's missing image was not reported: the console check is blind")
	}
}

// inOrder reports whether got is a subsequence of want (a label every
// few commits, when they are many).
func inOrder(got, want []string) bool {
	j := 0
	for _, g := range got {
		for j < len(want) && want[j] != g {
			j++
		}
		if j == len(want) {
			return false
		}
		j++
	}
	return true
}

// TestSiteTrendOrderInBrowser: three published results of one series,
// given newest first as .ci/site.sh reads them from git log, and no
// history file: on screen the trend runs oldest left, and a two-arm run
// of the newest commit is a trend of its own, its figure beside the
// sweep's rather than in its place. The trend once ran backwards, so a
// regression read as an improvement.
func TestSiteTrendOrderInBrowser(t *testing.T) {
	ctx := browser(t)
	base := readRun(t, "sweep_real.json")
	var runs []Run
	for i, ref := range []string{"cccccccccccc", "bbbbbbbbbbbb", "aaaaaaaaaaaa"} { // newest first
		r := *base.Result
		r.Meta.GitRef = ref
		r.Meta.FinishedAt = base.Result.Meta.FinishedAt.Add(-time.Duration(i) * time.Hour)
		r.Headline.ThroughputPerS = float64(300 - 100*i) // 300, 200, 100: rising, oldest to newest
		runs = append(runs, Run{Name: ref + ".json", Result: &r})
	}
	two := *readRun(t, "two_arm_real.json").Result
	two.Meta.GitRef, two.Meta.FinishedAt = "cccccccccccc", base.Result.Meta.FinishedAt.Add(time.Minute)
	runs = append(runs, Run{Name: "two.json", Result: &two})
	dir := t.TempDir()
	if _, err := Write(dir, runs, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+IndexFile)); err != nil {
		t.Fatal(err)
	}
	facts, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](factsJS))
	if err != nil {
		t.Fatal(err)
	}
	if len(facts.Charts) != 2 {
		t.Fatalf("%d trend charts, want the sweep's and the two-arm run's", len(facts.Charts))
	}
	if got := strings.Join(facts.Charts[0].Ticks, " "); got != "aaaaaaaaaaaa bbbbbbbbbbbb cccccccccccc" {
		t.Errorf("the sweep's trend, left to right: %s; want oldest left", got)
	}
	if got := strings.Join(facts.Charts[1].Ticks, " "); got != "cccccccccccc" {
		t.Errorf("the two-arm trend: %s, want its one commit", got)
	}
	// Both figures of commit ccc are in the table: the sweep's 300 and
	// the two-arm run's head.
	if facts.Rows != 4 {
		t.Errorf("%d history rows, want 4 (3 sweeps and the two-arm run)", facts.Rows)
	}
}

// phoneJS is what a 390-pixel-wide page must hold: how wide the document
// is, the smallest chart text as drawn, and what marks a change.
const phoneJS = `(() => {
  const texts = [...document.querySelectorAll('svg.chart text')].map(t => t.getBoundingClientRect().height).filter(h => h > 0);
  const first = document.querySelector('main > *');
  return {scrollWidth: document.documentElement.scrollWidth,
    minText: texts.length ? Math.min(...texts) : 0,
    movedDown: [...document.querySelectorAll('table.trend td.moved.down')].map(td => td.textContent),
    changeHeader: [...document.querySelectorAll('table.trend th')].some(th => th.textContent === 'change'),
    chartMoves: [...document.querySelectorAll('svg.chart g.panel g.move.down')].filter(g => g.getBoundingClientRect().width > 0).length,
    first: first ? first.id + '|' + first.className + '|' + first.textContent : ''};
})()`

type phoneFacts struct {
	ScrollWidth  float64  `json:"scrollWidth"`
	MinText      float64  `json:"minText"`
	MovedDown    []string `json:"movedDown"`
	ChangeHeader bool     `json:"changeHeader"`
	ChartMoves   int      `json:"chartMoves"`
	First        string   `json:"first"`
}

// TestSiteAtPhoneWidth is issue 33's site that hides no regression, at
// 390 px: three sweeps of one series, the last 83% below the one before
// (beyond both A-A floors), and a two-arm run. The History table has a
// change column with that entry coloured, the trend marks it, the
// compare run page opens with its verdict in the alert style, and no page
// scrolls sideways (tables and charts scroll in their own box) while the
// chart text stays at least 10 px high.
func TestSiteAtPhoneWidth(t *testing.T) {
	ctx := browser(t)
	base := readRun(t, "sweep_real.json")
	var runs []Run
	for i, thr := range []float64{200_000, 202_000, 34_000} {
		r := *base.Result
		r.Meta.GitRef = fmt.Sprintf("%012d", i+1)
		r.Meta.FinishedAt = base.Result.Meta.FinishedAt.Add(time.Duration(i) * time.Hour)
		r.Headline.ThroughputPerS = thr
		// A server's ceiling (not a lower bound, whose change says
		// nothing about the server).
		r.Headline.LowerBound, r.Headline.Verdict = false, result.VerdictServerSaturated
		floor := 2.0
		r.NoiseFloorPct = &floor
		runs = append(runs, Run{Name: r.Meta.GitRef + ".json", Result: &r})
	}
	two := readRun(t, "two_arm_real.json")
	runs = append(runs, two)
	dir := t.TempDir()
	if _, err := Write(dir, runs, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	look := func(page string) phoneFacts {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+page)); err != nil {
			t.Fatal(err)
		}
		f, err := chromedp.Run(ctx, chromedp.Evaluate[phoneFacts](phoneJS))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", page, f)
		if f.ScrollWidth > 390 {
			t.Errorf("%s: the page is %v px wide at a 390 px viewport: it scrolls sideways", page, f.ScrollWidth)
		}
		if f.MinText < 10 {
			t.Errorf("%s: chart text drawn %.1f px high, want at least 10", page, f.MinText)
		}
		return f
	}
	index := look(IndexFile)
	if !index.ChangeHeader || len(index.MovedDown) != 1 || !strings.HasPrefix(index.MovedDown[0], "-83.2%") {
		t.Errorf("History: change column %v, cells marked down %q; want one, -83.2%%", index.ChangeHeader, index.MovedDown)
	}
	if index.ChartMoves != 1 {
		t.Errorf("the trend marks %d changes, want the one the table marks", index.ChartMoves)
	}
	run := look(pageName(two.Result))
	v := two.Result.Comparison.Headline.Verdict
	class := map[string]string{"slower": "alert", "cannot_conclude": "warn", "faster": "ok", "within_noise": "note"}[v]
	if !strings.HasPrefix(run.First, "verdict|verdict "+class+"|Head against base: ") {
		t.Errorf("the compare run page opens with %q, want its verdict (%s) in the %s style", run.First, v, class)
	}
}
