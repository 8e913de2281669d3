package harness

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
)

// Starter starts a point's processes (its servers and its generator) and
// waits for a server's readiness probe. The real one is supervise's
// (Start, WaitReady); a unit test's fake scripts how each process exits,
// what it logs and whether it becomes ready, so that the pipeline's
// failure rules are tested with no process started (point_unit_test.go).
type Starter interface {
	Start(ctx context.Context, spec supervise.Spec) (supervise.Process, error)
	WaitReady(ctx context.Context, p supervise.Process, probe supervise.Probe, timeout time.Duration) error
}

// Clock is the time a run and its points' pipeline read: the wall clock
// by default. A unit test's clock moves only when the pipeline sleeps,
// and its timers fire only when it has moved past them, so that a
// deadline (a marker never written, a generator that does not exit)
// is reached without waiting for it.
type Clock interface {
	Now() time.Time
	// After delivers the time once d has passed.
	After(d time.Duration) <-chan time.Time
	Sleep(d time.Duration)
}

// procStarter is the real Starter.
type procStarter struct{}

func (procStarter) Start(ctx context.Context, spec supervise.Spec) (supervise.Process, error) {
	p, err := supervise.Start(ctx, spec)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return p, nil
}

func (procStarter) WaitReady(ctx context.Context, p supervise.Process, probe supervise.Probe, timeout time.Duration) error {
	return supervise.WaitReady(ctx, p, probe, timeout)
}

// wallClock is the real Clock.
type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (wallClock) Sleep(d time.Duration)                  { time.Sleep(d) }
