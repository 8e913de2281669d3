package scrape

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

// errNoAfterRead: the window never ended (Finish without WindowEnded).
var errNoAfterRead = errors.New("not read")

// WindowSpec is what a capture needs of its point: the target's metrics
// and profile, the addresses its URLs name, and the window.
type WindowSpec struct {
	Metrics *result.MetricsSpec // the target's "metrics"; nil: no reads
	Profile *target.ProfileSpec // the target's "profile"
	// AllowUnpinnedURL is the target's: the generator may count a
	// server the booted one's metrics do not hold, so no count is checked.
	AllowUnpinnedURL bool
	Scenario         string      // picks the count series (metrics.counts)
	Addr             target.Addr // the URLs' placeholders
	// Marker is the generator's measure marker: its time opens the window.
	Marker string
	Window time.Duration
	// ProfilePath is where --profile saves the point's profile; "": none
	// is fetched.
	ProfilePath string
	// Now stamps each read's response, the interval the rates are over;
	// nil: the wall clock, as the marker's time that the count's overlap
	// is measured against. A test's clock decides the interval instead of
	// a sleep.
	Now func() time.Time
}

// Captured is what a Window found: the fields of the point's
// verdict.Outcome of the same names.
type Captured struct {
	ServerMetrics             *result.ServerMetrics
	ProfileFile, ProfileError string
	CountSeries, CountSkip    string
	CountOverlapS             float64
	CountWindowS              float64
}

// Window is what the harness takes from the server itself around a
// point's measured window, besides CPU: its metrics read before and after
// (WindowSpec.Metrics) and a profile fetched over the window (with
// --profile). The harness starts it with the CPU samplers, tells it when
// the window ended, and has it Finish; every request runs in its own
// goroutine, so a slow endpoint delays neither the sampling nor the end of
// the window.
type Window struct {
	wg sync.WaitGroup

	metrics    *result.MetricsSpec
	metricsURL string
	before     chan Reading // the before read, once done
	after      Reading
	afterOK    bool      // the after read ran
	windowEnd  time.Time // the generator's: its marker's time plus the window
	window     time.Duration
	now        func() time.Time
	// countSeries is the target's counter for this scenario
	// (metrics.counts), checked against the generator's count.
	countSeries string
	countSkip   string // why no count can be checked, though a series is named

	profileFile, profileErr string
}

// StartWindow starts the before read and the profile fetch, at the
// window's start.
func StartWindow(ctx context.Context, s WindowSpec) *Window {
	c := &Window{metrics: s.Metrics, window: s.Window, now: s.Now}
	if c.now == nil {
		c.now = time.Now
	}
	if c.metrics != nil {
		c.countSeries = c.metrics.Counts[s.Scenario]
		if s.AllowUnpinnedURL {
			c.countSkip = "the target allows an unpinned URL (allow_unpinned_url), so the generator may count a server whose count the booted server's metrics do not hold"
		}
		// The generator created the marker as its window opened, and
		// sends nothing after the window (it only awaits what is in
		// flight): the load's own end, not the harness's timer, which
		// starts when it saw the marker.
		if fi, err := os.Stat(s.Marker); err == nil {
			c.windowEnd = fi.ModTime().Add(s.Window)
		}
		c.metricsURL = target.Expand(c.metrics.URL, s.Addr)
		c.before = make(chan Reading, 1)
		client := NewClient(MetricsTimeout)
		go func() { c.before <- Read(ctx, client, c.metricsURL, c.metrics.Format, c.now) }()
	}
	if path := s.ProfilePath; path != "" {
		if s.Profile == nil || s.Profile.URL == "" {
			c.profileErr = `the target has no "profile" url`
			return c
		}
		rawURL := target.ExpandProfile(s.Profile.URL, s.Addr, s.Window)
		client := NewClient(s.Window + ProfileSlack)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := FetchProfile(ctx, client, rawURL, path); err != nil {
				c.profileErr = err.Error()
				return
			}
			c.profileFile = path
		}()
	}
	return c
}

// WindowEnded starts the after read, once the before read is done (so the
// two never overlap and always come in order).
func (c *Window) WindowEnded(ctx context.Context) {
	if c.metrics == nil {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		before := <-c.before
		c.before <- before
		c.after, c.afterOK = Read(ctx, NewClient(MetricsTimeout), c.metricsURL, c.metrics.Format, c.now), true
	}()
}

// Finish waits for every request (each bounded by its client's timeout)
// and returns what they found.
func (c *Window) Finish() (out Captured) {
	c.wg.Wait()
	out.ProfileFile, out.ProfileError = c.profileFile, c.profileErr
	if c.metrics == nil {
		return out
	}
	before := <-c.before
	after := c.after
	if !c.afterOK {
		after = Failed(errNoAfterRead)
	}
	format := c.metrics.Format
	if format == "" {
		format = target.MetricsPrometheus
	}
	out.ServerMetrics = Diff(format, before, after)
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
	return out
}
