package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Warm arms (COMPARE_ARMS=warm, docs/compare.md): a two-arm sweep's arm
// keeps its servers up across points. BootArm boots them as a point
// would (the same pinning, limits, identity and readiness probe), in a
// directory of the arm's own that holds their logs, then freezes them; a
// warm point (PointSpec.Warm) thaws them, measures them and freezes them
// again; StopArm stops them as a point would. Nothing else differs: the
// generator is a fresh process per point, and the point's CPU sampling,
// contention and verdict are a fresh point's.

// liveArm is an arm's servers kept up: the boot's point, which holds
// them, their addresses and their log directory.
type liveArm struct {
	p    *pointRun
	boot int // the arm's boots so far, naming its directory
}

// BootArm boots arm's servers afresh, stopping first any it kept (one
// that went down, or a reboot), waits for their readiness and freezes
// them: ArmRunner.
func (pr *ProcRunner) BootArm(ctx context.Context, arm string) ArmOutcome {
	pr.mu.Lock()
	old := pr.live[arm]
	pr.mu.Unlock()
	n := 1
	if old != nil {
		n = old.boot + 1
		if old.p != nil {
			if out := pr.stopLive(ctx, old); out.FailReason != "" {
				return out
			}
		}
	}
	clock := pr.clock()
	p := &pointRun{pr: pr, spec: PointSpec{Arm: arm}}
	p.target, _, _ = pr.targetFor(p.spec)
	p.srvCPUs, p.genCPUs = pr.o.CPUs.Server, pr.o.CPUs.Generator
	dir := filepath.Join(pr.o.Point.WorkDir, fmt.Sprintf("arm-%s-%d", arm, n))
	if err := os.RemoveAll(dir); err != nil {
		return ArmOutcome{FailReason: fmt.Sprintf("work dir: %v", err)}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ArmOutcome{FailReason: fmt.Sprintf("work dir: %v", err)}
	}
	p.f = pointFiles{dir: dir, serverLog: filepath.Join(dir, "server.log")}
	if err := p.ports(); err != nil {
		return ArmOutcome{FailReason: err.Error()}
	}
	pr.mu.Lock()
	pr.live[arm] = &liveArm{boot: n}
	pr.mu.Unlock()
	start := clock.Now()
	err := p.boot(ctx)
	cost := clock.Now().Sub(start)
	if err != nil {
		out := ArmOutcome{Cost: cost, FailReason: err.Error()}
		var pe *PointError
		if errors.As(err, &pe) {
			out.LogTail = pe.Tail
		}
		// What did start is stopped: nothing outlives a failed boot.
		stopped := pr.stopLive(ctx, &liveArm{p: p, boot: n})
		out.Escalated, out.Escaped = stopped.Escalated, stopped.Escaped
		return out
	}
	for i, s := range p.srvs {
		if err := s.Freeze(); err != nil {
			pr.stopLive(ctx, &liveArm{p: p, boot: n})
			return ArmOutcome{Cost: cost, FailReason: fmt.Sprintf("freeze %s: %v", p.label(i), err), LogTail: s.Tail(tailLines)}
		}
	}
	pr.mu.Lock()
	pr.live[arm] = &liveArm{p: p, boot: n}
	pr.mu.Unlock()
	return ArmOutcome{Cost: cost}
}

// StopArm stops arm's servers kept up: ArmRunner.
func (pr *ProcRunner) StopArm(ctx context.Context, arm string) ArmOutcome {
	pr.mu.Lock()
	l := pr.live[arm]
	pr.mu.Unlock()
	if l == nil || l.p == nil {
		return ArmOutcome{}
	}
	out := pr.stopLive(ctx, l)
	pr.mu.Lock()
	pr.live[arm] = &liveArm{boot: l.boot}
	pr.mu.Unlock()
	return out
}

// stopLive thaws and stops an arm's servers with the sweep's grace (cut
// short by an interrupt), and redacts their logs.
func (pr *ProcRunner) stopLive(ctx context.Context, l *liveArm) ArmOutcome {
	p := l.p
	for _, s := range p.srvs {
		_ = s.Thaw() // one that exited needs none
	}
	clock := pr.clock()
	start := clock.Now()
	grace := pr.grace
	if ctx.Err() != nil {
		grace = InterruptGrace(grace)
	}
	esc, escaped, err := p.stopServers(ctx, grace)
	out := ArmOutcome{Cost: clock.Now().Sub(start), Escalated: esc, Escaped: escaped}
	if err != nil {
		out.FailReason = fmt.Sprintf("stop: %v", err)
	}
	p.scrub()
	return out
}

// attachLive makes a warm point's servers its arm's kept up, thawed.
func (p *pointRun) attachLive() error {
	pr := p.pr
	pr.mu.Lock()
	l := pr.live[p.spec.Arm]
	pr.mu.Unlock()
	if l == nil || l.p == nil {
		return p.fail(PhaseBoot, nil, "warm arm %s: no server kept up (it did not boot)", p.spec.Arm)
	}
	p.live = l.p
	p.srvs, p.booted, p.addr = l.p.srvs, l.p.booted, l.p.addr
	if i, ok := p.exitedServer(); ok {
		return p.fail(PhaseBoot, p.srvs[i], "warm arm %s: %s exited while it was kept up (%s)", p.spec.Arm, p.label(i), exitText(p.srvs[i]))
	}
	for i, s := range p.srvs {
		if err := s.Thaw(); err != nil {
			return p.fail(PhaseBoot, s, "warm arm %s: thaw %s: %v", p.spec.Arm, p.label(i), err)
		}
	}
	return nil
}

// park freezes a warm point's servers again once the point is over; a
// server that exited is reported (the arm is down: ArmDown).
func (p *pointRun) park() (down bool, err error) {
	var errs []string
	for i, s := range p.srvs {
		if s.Exited() {
			down = true
			errs = append(errs, fmt.Sprintf("%s exited (%s)", p.label(i), exitText(s)))
			continue
		}
		if ferr := s.Freeze(); ferr != nil {
			down = true
			errs = append(errs, fmt.Sprintf("freeze %s: %v", p.label(i), ferr))
		}
	}
	if len(errs) > 0 {
		return down, errors.New("warm arm " + p.spec.Arm + ": " + strings.Join(errs, "; "))
	}
	return false, nil
}

// closeLive stops every arm's servers still kept up (an interrupted or
// refused sweep leaves them to Close): nothing outlives the harness.
func (pr *ProcRunner) closeLive() {
	pr.mu.Lock()
	var arms []*liveArm
	for _, l := range pr.live {
		if l != nil && l.p != nil {
			arms = append(arms, l)
		}
	}
	pr.live = map[string]*liveArm{}
	pr.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // an interrupt's grace: the result is written already
	for _, l := range arms {
		pr.stopLive(ctx, l)
	}
}
