package harness

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/side"
)

// openWindow waits for a point's window to open (the ready stage): its
// generator side's marker, which the kernel reports (internal/notify),
// says every connection is open and the warm-up is over. It waits on
// events, never on time: the marker; the side's start gate ready (a duet's, which then opens once both halves did); a side,
// one of its processes or a server ending; the sweep's end; or the
// deadline, the warm-up and the side's bound (and a partner's
// connecting, in a duet). It returns the Clock's time the window opened
// at, or the point's failure.
func openWindow(ctx context.Context, s pointSetup, gen *generation, set *serverSet) (time.Time, error) {
	g, clock := gen.side, gen.clock
	wait := g.Bounds().Window
	if s.spec.Gate != nil {
		wait += connectTimeout // the partner's connecting too
	}
	deadline := clock.After(s.warmup + wait)
	ended := []<-chan struct{}{g.Done(), set.done(func(int) bool { return false })}
	for _, p := range g.Procs() {
		ended = append(ended, p.Done())
	}
	woke := firstDone(ended...)
	overdue := false
	for {
		select {
		case <-gen.ready.Window():
			return clock.Now(), nil
		case <-gen.ready.Gate():
			if s.spec.Gate == nil {
				continue
			}
			if err := s.spec.Gate.Poll(); err != nil {
				return time.Time{}, failAt(PhaseMarker, nil, "duet: %v", err)
			}
			continue
		case <-woke:
		case <-ctx.Done():
		case <-deadline:
			overdue = true
		}
		// Something ended: a marker that appeared meanwhile counts, so
		// that a window that opened is never taken for one that did not.
		gen.ready.Settle()
		if gen.ready.Opened() {
			return clock.Now(), nil
		}
		return time.Time{}, whyNoWindow(ctx, s, gen, set, overdue, wait)
	}
}

// whyNoWindow is why a point's window did not open: the sweep's end; a
// server that exited; the side's own reason; or the deadline, as a
// refusal every point would meet when the generator's JSON says so.
func whyNoWindow(ctx context.Context, s pointSetup, gen *generation, set *serverSet, overdue bool, wait time.Duration) error {
	g := gen.side
	if ctx.Err() != nil {
		return interruptedAt(PhaseMarker)
	}
	if i, ok := set.exited(func(int) bool { return false }); ok {
		return failAt(PhaseMarker, set.procs[i], "%s exited before the measured window (%s)", set.label(i), exitText(set.procs[i]))
	}
	why, tail := g.Why(side.Unready, 0, nil)
	if why == "" && overdue {
		why, tail = g.Why(side.Overdue, wait, nil)
	}
	if why == "" {
		why = "the generator side ended before its window opened"
	}
	if rf := refusal(gen.json, s.scenario, set); rf != "" {
		e := failAt(PhaseMarker, tail, "%s", rf)
		e.Refused = true
		return e
	}
	return failAt(PhaseMarker, tail, "%s", why)
}
