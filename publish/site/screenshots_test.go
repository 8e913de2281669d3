package site

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// screenshotDir, when set, is where TestScreenshots writes the report's
// pictures: `make screenshots` (docs/report.md) sets it to docs/images.
var screenshotDir = flag.String("screenshots", "", "write docs/report.md's screenshots (index and a slower two-arm run page, at 1280 and 390 px) into this directory")

// screenshotSite is the site docs/report.md shows: the 24-entry history
// with one change point (history_change.jsonl), its newest entry's run,
// and a slower two-arm run.
func screenshotSite(t *testing.T) (dir string, runs []Run) {
	t.Helper()
	h := readHistoryFile(t, changeFixture)
	runs = []Run{changeRun(t, h, len(h)-1), slowerRun(t)}
	dir = t.TempDir()
	if _, err := Write(dir, runs, Options{History: h, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	return dir, runs
}

// slowerRun is the slower two-arm run of the pictures and the phone
// tests.
func slowerRun(t testing.TB) Run { return readRun(t, slowerFixture) }

// slowerFixture is a real two-arm result whose head is slower: `ceiling
// compare --base main~1` on 2026-12-06 of examples/echo-server, whose
// head spends 500 rounds of SHA-256 on each message (-84.0%, p < 0.001;
// 49 of its 90 points contended by the tests beside it).
const slowerFixture = "compare_slower_real.json"

// TestScreenshots writes the screenshot set of docs/report.md: the index
// and the slower run's page, each at 1280 and at 390 px wide, as Chromium
// lays them out, from the top: at most 2,200 px of a wide page and three
// screens (2,532 px) of a phone's, what a reader sees first (the slower
// run's whole page is 14,000 px tall at 1280 px, its contended points'
// reasons in the why column). It runs only when asked (-screenshots DIR).
func TestScreenshots(t *testing.T) {
	if *screenshotDir == "" {
		t.Skip("-screenshots DIR not given (make screenshots)")
	}
	ctx := browser(t)
	dir, runs := screenshotSite(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	if err := os.MkdirAll(*screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{"index": IndexFile, "run-slower": pageName(runs[1].Result)}
	for _, width := range []int64{1280, 390} {
		height, most := int64(900), 2200
		if width == 390 {
			height, most = 844, 3*844
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
			t.Fatal(err)
		}
		for name, page := range pages {
			if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+page)); err != nil {
				t.Fatal(err)
			}
			shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			shot = topOf(t, shot, most)
			file := filepath.Join(*screenshotDir, "report-"+name+"-"+strconv.FormatInt(width, 10)+".png")
			if err := os.WriteFile(file, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", file)
		}
	}
}

// topOf is the PNG b cut to its top most pixels.
func topOf(t *testing.T, b []byte, most int) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	if r.Dy() <= most {
		return b
	}
	r.Max.Y = r.Min.Y + most
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		t.Fatalf("a %T cannot be cut", img)
	}
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, sub.SubImage(r)); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
