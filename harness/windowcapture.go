package harness

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// errNoAfterRead: the window never ended (finish without windowEnded).
var errNoAfterRead = errors.New("not read")

// windowCapture is what the harness takes from the server itself around a
// point's measured window, besides CPU: its metrics read before and after
// (MetricsSpec) and a profile fetched over the window (ProfileSpec, with
// --profile). measure starts it with the CPU samplers, tells it when the
// window ended, and has it fill the verdict.Outcome; every request runs in its own
// goroutine, so a slow endpoint delays neither the sampling nor the end of
// the window.
type windowCapture struct {
	wg sync.WaitGroup

	metrics    *result.MetricsSpec
	metricsURL string
	before     chan scrape.Reading // the before read, once done
	after      scrape.Reading
	afterOK    bool      // the after read ran
	windowEnd  time.Time // the generator's: its marker's time plus the window
	window     time.Duration
	// countSeries is the target's counter for this scenario
	// (metrics.counts), checked against the generator's count.
	countSeries string
	countSkip   string // why no count can be checked, though a series is named

	profileFile, profileErr string
}

// startCapture starts the before read and the profile fetch, at the
// window's start.
func (p *pointRun) startCapture(ctx context.Context) *windowCapture {
	c := &windowCapture{metrics: p.target.Metrics, window: p.window}
	if c.metrics != nil {
		c.countSeries = c.metrics.Counts[p.pr.o.Point.Scenario]
		if p.target.AllowUnpinnedURL {
			c.countSkip = "the target allows an unpinned URL (allow_unpinned_url), so the generator may count a server whose count the booted server's metrics do not hold"
		}
		// The generator created the marker as its window opened, and
		// sends nothing after the window (it only awaits what is in
		// flight): the load's own end, not the harness's timer, which
		// starts when it saw the marker.
		if fi, err := os.Stat(p.f.marker); err == nil {
			c.windowEnd = fi.ModTime().Add(p.window)
		}
		c.metricsURL = target.Expand(c.metrics.URL, p.addr)
		c.before = make(chan scrape.Reading, 1)
		client := scrape.NewClient(scrape.MetricsTimeout)
		go func() { c.before <- scrape.Read(ctx, client, c.metricsURL, c.metrics.Format) }()
	}
	if dir := p.pr.o.Point.ProfileDir; dir != "" {
		if p.target.Profile == nil || p.target.Profile.URL == "" {
			c.profileErr = `the target has no "profile" url`
			return c
		}
		path := ProfilePath(dir, p.spec)
		rawURL := target.ExpandProfile(p.target.Profile.URL, p.addr, p.window)
		client := scrape.NewClient(p.window + scrape.ProfileSlack)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := scrape.FetchProfile(ctx, client, rawURL, path); err != nil {
				c.profileErr = err.Error()
				return
			}
			c.profileFile = path
		}()
	}
	return c
}

// windowEnded starts the after read, once the before read is done (so the
// two never overlap and always come in order).
func (c *windowCapture) windowEnded(ctx context.Context) {
	if c.metrics == nil {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		before := <-c.before
		c.before <- before
		c.after, c.afterOK = scrape.Read(ctx, scrape.NewClient(scrape.MetricsTimeout), c.metricsURL, c.metrics.Format), true
	}()
}

// finish waits for every request (each bounded by its client's timeout)
// and records what they found on out.
func (c *windowCapture) finish(out *verdict.Outcome) {
	c.wg.Wait()
	out.ProfileFile, out.ProfileError = c.profileFile, c.profileErr
	if c.metrics == nil {
		return
	}
	before := <-c.before
	after := c.after
	if !c.afterOK {
		after = scrape.Failed(errNoAfterRead)
	}
	format := c.metrics.Format
	if format == "" {
		format = target.MetricsPrometheus
	}
	out.ServerMetrics = scrape.Diff(format, before, after)
	if c.countSeries != "" {
		// The load ran from before the window to its end: the counter's
		// delta is the server's count from the before read's response to
		// the window's end (the after read only adds what was in flight).
		// Without the marker's time the overlap is unknown (0: unchecked).
		out.CountSeries, out.CountSkip = c.countSeries, c.countSkip
		if b := before.At(); !b.IsZero() && !c.windowEnd.IsZero() {
			end := c.windowEnd
			if a := after.At(); !a.IsZero() && a.Before(end) {
				end = a
			}
			out.CountOverlapS = end.Sub(b).Seconds()
			out.CountWindowS = c.window.Seconds()
		}
	}
}
