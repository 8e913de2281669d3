package harness

import (
	"context"

	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/verdict"
)

// startCapture starts what the point takes from the server itself over
// its window (scrape.Window): the metrics read before and after, and the
// profile with --profile.
func (p *pointRun) startCapture(ctx context.Context) *scrape.Window {
	s := scrape.WindowSpec{Metrics: p.target.Metrics, Profile: p.target.Profile, AllowUnpinnedURL: p.target.AllowUnpinnedURL,
		Scenario: p.pr.o.Point.Scenario, Addr: p.addr, Marker: p.f.marker, Window: p.window}
	if dir := p.pr.o.Point.ProfileDir; dir != "" {
		s.ProfilePath = scrape.ProfilePath(dir, p.spec.Index, p.spec.Key)
	}
	return scrape.StartWindow(ctx, s)
}

// recordCapture waits for the capture's requests and records what they
// found on out.
func recordCapture(capture *scrape.Window, out *verdict.Outcome) {
	c := capture.Finish()
	out.ServerMetrics, out.ProfileFile, out.ProfileError = c.ServerMetrics, c.ProfileFile, c.ProfileError
	out.CountSeries, out.CountSkip, out.CountOverlapS, out.CountWindowS = c.CountSeries, c.CountSkip, c.CountOverlapS, c.CountWindowS
}
