package site

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/chromedp/chromedp"
)

// profiledRun is the real two-arm run with a profile diff whose folded
// stacks are in files: spin new in the head, a hostile function name.
func profiledRun(t testing.TB) Run {
	t.Helper()
	r := readRun(t, "two_arm_real.json")
	res := *r.Result
	cmp := *res.Comparison
	cmp.Headline.ProfileDiff = &result.ProfileDiff{Tool: "perf", Alpha: 0.05, Tested: 40,
		Base: &result.ProfileArm{Points: []int{1, 4, 5}, Samples: 1500, Messages: 150000, CPUNsPerMessage: 10000, NsPerSample: 1e6, FoldedFile: "profile/base.folded"},
		Head: &result.ProfileArm{Points: []int{2, 3, 6}, Samples: 1800, Messages: 150000, CPUNsPerMessage: 12000, NsPerSample: 1e6, FoldedFile: "profile/head.folded"},
		Frames: []result.ProfileFrame{
			{Function: "github.com/ceiling-bench/ceiling/refserver.spin", HeadNs: 2000, ChangeNs: 2000, Verdict: result.FrameGrew},
			{Function: `<img src=x onerror=alert(1)>`, BaseNs: 900, HeadNs: 600, ChangeNs: -300, Verdict: result.FrameShrank},
		},
		FlamegraphFile: "profile/flamegraph.svg"}
	res.Comparison = &cmp
	r.Result = &res
	r.Files = fstest.MapFS{
		"profile/base.folded": {Data: []byte("runtime.goexit;net/http.(*conn).serve;serveEcho;write 1200\nruntime.goexit;net/http.(*conn).serve;serveEcho;<img src=x onerror=alert(1)> 300\n")},
		"profile/head.folded": {Data: []byte("runtime.goexit;net/http.(*conn).serve;serveEcho;write 1200\nruntime.goexit;net/http.(*conn).serve;serveEcho;<img src=x onerror=alert(1)> 200\nruntime.goexit;net/http.(*conn).serve;serveEcho;github.com/ceiling-bench/ceiling/refserver.spin 400\n")},
	}
	return r
}

// TestRunPageLinksTheFlameGraph: the run page of a profiled two-arm run
// lists the frames that grew and shrank, escaped, and links a flame graph
// the site drew itself from the folded stacks; a diff whose files are not
// beside the result, or climb out of its directory, gets none.
func TestRunPageLinksTheFlameGraph(t *testing.T) {
	r := profiledRun(t)
	files, err := Build([]Run{r}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	page := string(files[pageName(r.Result)])
	svgName := strings.TrimSuffix(pageName(r.Result), ".html") + "-flamegraph.svg"
	svg, ok := files[svgName]
	if !ok {
		t.Fatalf("no %s among %d files", svgName, len(files))
	}
	for _, want := range []string{`<a id="flamegraph-link" href="` + svgName + `">`, "refserver.spin</td>", "&lt;img src=x onerror=alert(1)&gt;</td>", "Why: CPU per message"} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	if strings.Contains(page, "<img src=x") || strings.Contains(string(svg), "<img") || strings.Contains(string(svg), "<script") {
		t.Error("a function name reached a page or the SVG as markup")
	}
	for name, fsys := range map[string]fstest.MapFS{"missing": {}, "outside": {"../base.folded": {Data: []byte("a 1\n")}}} {
		bad := profiledRun(t)
		bad.Files = fsys
		if name == "outside" {
			bad.Result.Comparison.Headline.ProfileDiff.Base.FoldedFile = "../base.folded"
		}
		files, err := Build([]Run{bad}, Options{Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := files[svgName]; ok || !strings.Contains(string(files[pageName(bad.Result)]), "No flame graph on this page") {
			t.Errorf("%s folded stacks: a flame graph was drawn, or the page does not say why not", name)
		}
	}
}

const flameJS = `(() => {
  const img = document.querySelector('figure.flamegraph img');
  return {scrollWidth: document.documentElement.scrollWidth,
    imgWidth: img ? img.getBoundingClientRect().width : 0, natural: img ? img.naturalWidth : 0,
    link: (document.querySelector('#flamegraph-link') || {}).href || ''};
})()`

const svgJS = `(() => {
  const texts = [...document.querySelectorAll('text')].map(t => t.getBoundingClientRect().height).filter(h => h > 0);
  return {scripts: document.querySelectorAll('script, foreignObject, a').length, texts: texts.length,
    minText: texts.length ? Math.min(...texts) : 0, width: document.documentElement.getBoundingClientRect().width};
})()`

// TestFlameGraphInChromium: at 1280 and 390 px the run page stays within
// the screen (the flame graph scrolls in its own box, at its own width),
// the graph loads, and opened by its link it is drawn at its own width
// with its text at least 10 px high and nothing active in it.
func TestFlameGraphInChromium(t *testing.T) {
	ctx := browser(t)
	r := profiledRun(t)
	dir := t.TempDir()
	if _, err := Write(dir, []Run{r}, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(pageName(r.Result), ".html")+"-flamegraph.svg")); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	for _, w := range []int64{1280, 390} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 844)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+pageName(r.Result))); err != nil {
			t.Fatal(err)
		}
		type pageFacts struct {
			ScrollWidth float64 `json:"scrollWidth"`
			ImgWidth    float64 `json:"imgWidth"`
			Natural     float64 `json:"natural"`
			Link        string  `json:"link"`
		}
		f, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](flameJS))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d px: %+v", w, f)
		if f.ScrollWidth > float64(w) || f.Natural != 1200 || f.ImgWidth != 1200 || f.Link == "" {
			t.Errorf("%d px: page %v px wide, the flame graph %v px drawn of %v, link %q", w, f.ScrollWidth, f.ImgWidth, f.Natural, f.Link)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(f.Link)); err != nil {
			t.Fatal(err)
		}
		type svgFacts struct {
			Scripts int     `json:"scripts"`
			Texts   int     `json:"texts"`
			MinText float64 `json:"minText"`
			Width   float64 `json:"width"`
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[svgFacts](svgJS))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d px, the SVG: %+v", w, s)
		if s.Scripts != 0 || s.Texts < 5 || s.MinText < 10 || s.Width != 1200 {
			t.Errorf("%d px: the SVG has %d active elements, %d texts, the smallest %.1f px high, %v px wide", w, s.Scripts, s.Texts, s.MinText, s.Width)
		}
	}
}
