package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Warm arms (COMPARE_ARMS=warm, docs/compare.md): a two-arm sweep's arm
// keeps its servers up across points. bootArm boots them as a point
// would (the same pinning, limits, identity and readiness probe), in a
// directory of the arm's own that holds their logs, then freezes them; a
// warm point's servers (warmServers) thaws them, measures them and
// freezes them again; stopArm stops them as a point would. Nothing else
// differs: the generator is a fresh process per point, and the point's
// CPU sampling, contention and verdict are a fresh point's.

// bootArm boots arm's servers afresh, stopping first any it kept (one
// that went down, or a reboot), waits for their readiness and freezes
// them: ArmRunner.BootArm.
func bootArm(ctx context.Context, e *procEnv, arm string) ArmOutcome {
	n := 1
	if old := e.arms.get(arm); old != nil {
		n = old.boot + 1
		if old.set != nil {
			if out := stopLive(ctx, e, old); out.FailReason != "" {
				return out
			}
		}
	}
	dir := filepath.Join(e.plan.Point.WorkDir, fmt.Sprintf("arm-%s-%d", arm, n))
	if err := freshDir(dir); err != nil {
		return ArmOutcome{FailReason: fmt.Sprintf("work dir: %v", err)}
	}
	e.arms.put(arm, &liveArm{boot: n})
	f := newFreshServers(e, e.setup(PointSpec{Arm: arm}), dir)
	set, cost, err := f.up(ctx)
	if set == nil { // no ports: nothing started
		return ArmOutcome{FailReason: err.Error()}
	}
	if err != nil {
		out := ArmOutcome{Cost: cost, FailReason: err.Error()}
		var pe *PointError
		if errors.As(err, &pe) {
			out.LogTail = pe.Tail
		}
		// What did start is stopped: nothing outlives a failed boot.
		stopped := stopLive(ctx, e, &liveArm{set: set, boot: n})
		out.Escalated, out.Escaped = stopped.Escalated, stopped.Escaped
		return out
	}
	for i, s := range set.procs {
		if err := s.Freeze(); err != nil {
			stopLive(ctx, e, &liveArm{set: set, boot: n})
			return ArmOutcome{Cost: cost, FailReason: fmt.Sprintf("freeze %s: %v", set.label(i), err), LogTail: s.Tail(tailLines)}
		}
	}
	e.arms.put(arm, &liveArm{set: set, boot: n})
	return ArmOutcome{Cost: cost}
}

// stopArm stops arm's servers kept up: ArmRunner.StopArm.
func stopArm(ctx context.Context, e *procEnv, arm string) ArmOutcome {
	l := e.arms.get(arm)
	if l == nil || l.set == nil {
		return ArmOutcome{}
	}
	out := stopLive(ctx, e, l)
	e.arms.put(arm, &liveArm{boot: l.boot})
	return out
}

// stopLive thaws and stops an arm's servers with the sweep's grace (cut
// short by an interrupt), and redacts their logs.
func stopLive(ctx context.Context, e *procEnv, l *liveArm) ArmOutcome {
	set := l.set
	for _, s := range set.procs {
		_ = s.Thaw() // one that exited needs none
	}
	clock := e.opts.Clock
	start := clock.Now()
	grace := e.grace
	if ctx.Err() != nil {
		grace = InterruptGrace(grace)
	}
	d := booter{clock: clock}.stop(ctx, set, grace)
	out := ArmOutcome{Cost: clock.Now().Sub(start), Escalated: d.escalated, Escaped: d.escaped}
	if d.err != nil {
		out.FailReason = fmt.Sprintf("stop: %v", d.err)
	}
	logs := []string{filepath.Join(set.logDir, "server.log")}
	if len(set.booted) > 0 {
		logs = logs[:0]
		for i := range set.booted {
			logs = append(logs, set.logPath(i))
		}
	}
	scrub(e, 0, logs)
	return out
}

// closeArms stops every arm's servers still kept up (an interrupted or
// refused sweep leaves them to Close): nothing outlives the harness.
func closeArms(e *procEnv) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // an interrupt's grace: the result is written already
	for _, l := range e.arms.takeAll() {
		stopLive(ctx, e, l)
	}
}

// warmServers is a warm point's serverStage: its arm's servers, thawed
// for it and frozen again after it, never booted or stopped by it.
type warmServers struct {
	ownServers
	arm  string
	arms *armRegistry
}

func newWarmServers(e *procEnv, arm string) *warmServers {
	return &warmServers{ownServers: ownServers{&serverSet{}}, arm: arm, arms: e.arms}
}

// up makes the arm's servers the point's, thawed.
func (w *warmServers) up(context.Context) (*serverSet, time.Duration, error) {
	l := w.arms.get(w.arm)
	if l == nil || l.set == nil {
		return nil, 0, failAt(PhaseBoot, nil, "warm arm %s: no server kept up (it did not boot)", w.arm)
	}
	set := l.set
	w.set = set
	if i, ok := set.exited(func(int) bool { return false }); ok {
		return set, 0, failAt(PhaseBoot, set.procs[i], "warm arm %s: %s exited while it was kept up (%s)", w.arm, set.label(i), exitText(set.procs[i]))
	}
	for i, s := range set.procs {
		if err := s.Thaw(); err != nil {
			return set, 0, failAt(PhaseBoot, s, "warm arm %s: thaw %s: %v", w.arm, set.label(i), err)
		}
	}
	return set, 0, nil
}

// down freezes the servers again once the point is over; a server that
// exited is reported (the arm is down: ArmDown).
func (w *warmServers) down(context.Context, time.Duration) serversDown {
	var errs []string
	var d serversDown
	for i, s := range w.set.procs {
		if s.Exited() {
			d.armDown = true
			errs = append(errs, fmt.Sprintf("%s exited (%s)", w.set.label(i), exitText(s)))
			continue
		}
		if ferr := s.Freeze(); ferr != nil {
			d.armDown = true
			errs = append(errs, fmt.Sprintf("freeze %s: %v", w.set.label(i), ferr))
		}
	}
	if len(errs) > 0 {
		d.err = errors.New("warm arm " + w.arm + ": " + strings.Join(errs, "; "))
	}
	return d
}

// logs: none of the point's; the arm's are redacted when it stops.
func (w *warmServers) logs() []string { return nil }

var _ serverStage = (*warmServers)(nil)
