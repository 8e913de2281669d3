package harness

import (
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/verdict"
)

// captureSpec is what a point takes from the server itself over its
// window (scrape.Window): the metrics read before and after, and the
// profile with --profile (profileDir, "" for none).
func captureSpec(s pointSetup, set *serverSet, f pointFiles, profileDir string) scrape.WindowSpec {
	t := s.target
	w := scrape.WindowSpec{Metrics: t.Metrics, Profile: t.Profile, AllowUnpinnedURL: t.AllowUnpinnedURL,
		Scenario: s.scenario, Addr: set.addr, Marker: f.marker, Window: s.window}
	if profileDir != "" {
		w.ProfilePath = scrape.ProfilePath(profileDir, s.spec.Index, s.spec.Key)
	}
	return w
}

// recordCapture waits for the capture's requests and records what they
// found on out.
func recordCapture(capture *scrape.Window, out *verdict.Outcome) {
	c := capture.Finish()
	out.ServerMetrics, out.ProfileFile, out.ProfileError = c.ServerMetrics, c.ProfileFile, c.ProfileError
	out.CountSeries, out.CountSkip, out.CountOverlapS, out.CountWindowS = c.CountSeries, c.CountSkip, c.CountOverlapS, c.CountWindowS
}
