package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// A point is a pipeline of stages, each a type of its own file with one
// job: files (pointFiles) → ports and servers (serverStage: booted
// afresh, a warm arm's thawed, or an external one's probed) → the fault
// (faultStage: none, or FAULT's) → generate (generation, whose side is
// the one generator or the agents) → the window's opening (openWindow,
// the marker reported by the kernel: internal/notify) → measure (window: CPU, memory,
// the server's metrics and profile) → collect → stop. The variants are
// chosen once, when the point is put together (servers, faults); the
// pipeline runs any of them the same way.

// point is one point in flight: its setup, its stages and what they
// made.
type point struct {
	e         *procEnv
	s         pointSetup
	files     pointFiles
	servers   serverStage
	set       *serverSet
	fault     faultStage
	gen       *generation
	readyCost time.Duration
}

// runPoint measures one point of e in its phases, then stops both sides.
// Every failure becomes a failed verdict.Outcome (a PointError's text);
// nothing here stops the sweep. When ctx ends during the point it
// returns at once with Interrupted set, leaving the stopping (with
// InterruptGrace) to a goroutine the drain waits for: the caller writes
// its partial result first.
func runPoint(ctx context.Context, e *procEnv, spec PointSpec) verdict.Outcome {
	clock := e.opts.Clock
	out := verdict.Outcome{StartedAt: clock.Now().UTC()}
	p := &point{e: e, s: e.setup(spec), fault: noFault{}}
	err := p.run(ctx, &out)
	if spec.Gate != nil {
		spec.Gate.Abandon() // its partner waits no longer (a no-op once open)
	}
	if ctx.Err() != nil {
		p.interrupted(ctx, &out, err)
	} else {
		p.end(ctx, &out, err)
	}
	out.Wall = clock.Now().Sub(out.StartedAt)
	return out
}

// run is the pipeline, up to the point's stop.
func (p *point) run(ctx context.Context, out *verdict.Outcome) error {
	e, s := p.e, p.s
	var err error
	if p.files, err = newPointFiles(e.plan.Point.WorkDir, s.spec); err != nil {
		return failAt(PhaseFiles, nil, "work dir: %v", err)
	}
	p.servers = p.serverStage()
	p.set, p.readyCost, err = p.servers.up(ctx)
	if err != nil {
		return err
	}
	prof := startProfile(ctx, e.profiler, s, p.set, p.files.dir, e.plan.Point.ProfileDir) // perf attached, not yet sampling
	defer prof.finish()
	p.fault = p.faultStage()
	base := memoryBaseline(p.set)
	p.gen, err = startGeneration(ctx, e, s, p.files, p.set, newSide(e, s, p.files, p.set, p.fault))
	if err != nil {
		return err
	}
	opened, err := openWindow(ctx, s, p.gen, p.set)
	if err != nil {
		return err
	}
	if procs := p.gen.side.Procs(); len(procs) > 0 { // none with AGENTS_LISTEN: remote
		e.grants.note("generator", s.spec.Half, s.genCPUs, procs[0].Pid())
	}
	w := window{meter: e.opts.Meter, clock: e.opts.Clock, setup: s, servers: p.servers, set: p.set, gen: p.gen, fault: p.fault, prof: prof,
		capture: captureSpec(s, p.set, p.files, e.plan.Point.ProfileDir), roots: attribRoots(s, p.set, p.gen, e.hub.current())}
	mw := w.measure(ctx, opened, out)
	err = collect(ctx, p.gen, p.set, p.fault, out)
	recordMemory(p.servers, mw, base, out)
	p.fault.record(ctx, out)
	return err
}

// serverStage is the point's servers' variant: a warm arm's, an external
// server, or its own booted afresh.
func (p *point) serverStage() serverStage {
	switch {
	case p.s.spec.Warm:
		return newWarmServers(p.e, p.s.spec.Arm)
	case p.s.target.External:
		return newExternalServer(p.e, p.s, p.files.dir)
	}
	return newFreshServers(p.e, p.s, p.files.dir)
}

// faultStage is the point's fault: FAULT's in the resilience point, else
// none.
func (p *point) faultStage() faultStage {
	if f := p.e.plan.Fault; !f.IsZero() && p.s.spec.Role == result.RoleResilience {
		return newFaultRun(f, p.s, p.set, p.e.opts.Clock, p.e.opts.Starter)
	}
	return noFault{}
}

// stopped is what stopping a point found.
type stopped struct {
	escalated []string
	escaped   []result.EscapedProcess
	servers   serversDown
}

// stop stops the generator side, then takes the servers down, each with
// grace (an interrupt cuts a long grace short: stopProc); a frozen
// server is continued first.
func (p *point) stop(ctx context.Context, grace time.Duration) stopped {
	var st stopped
	p.fault.thaw()
	if p.gen != nil {
		st.escalated, st.escaped = p.gen.stop(ctx, grace)
	}
	if p.servers != nil {
		st.servers = p.servers.down(ctx, grace)
	}
	st.escalated = append(st.escalated, st.servers.escalated...)
	st.escaped = append(st.escaped, st.servers.escaped...)
	return st
}

// scrub redacts the point's files once its processes are gone.
func (p *point) scrub() {
	if p.files.dir == "" {
		return
	}
	paths := []string{p.files.genLog, p.files.json}
	if p.gen != nil {
		paths = append(paths, p.gen.logs()...) // the agents'
	}
	if p.servers != nil {
		paths = append(paths, p.servers.logs()...)
	}
	scrub(p.e, p.s.spec.Index, paths)
}

// end stops a point that was not interrupted and puts its end on out:
// what had to be SIGKILLed or escaped, its servers' costs, and a failure
// with the log tail that explains it.
func (p *point) end(ctx context.Context, out *verdict.Outcome, err error) {
	st := p.stop(ctx, p.e.grace)
	out.Escalated, out.Escaped = st.escalated, st.escaped
	out.ReadyCost, out.StopCost, out.ArmDown = p.readyCost, st.servers.cost, st.servers.armDown
	if err == nil && st.servers.err != nil {
		err = &PointError{Phase: PhaseStop, Err: fmt.Errorf("stop server: %w", st.servers.err)}
	}
	if err != nil {
		out.FailReason = err.Error()
		out.Load = nil
		var pe *PointError
		isPE := errors.As(err, &pe)
		if isPE && pe.Tail != "" {
			out.LogTail = pe.Tail
		} else if p.set != nil && len(p.set.procs) > 0 {
			out.LogTail = p.set.procs[0].Tail(tailLines)
		}
		out.Refused = isPE && pe.Refused
	}
	p.scrub()
}

// interrupted marks a point the interrupt cut short as no measurement
// (one that finished its window before keeps its figures), and leaves
// its stop, with InterruptGrace, to the drain.
func (p *point) interrupted(ctx context.Context, out *verdict.Outcome, err error) {
	if err != nil {
		out.Interrupted = true
		out.FailReason = "interrupted"
		if !errors.Is(err, ErrPointInterrupted) {
			out.FailReason = "interrupted: " + err.Error()
		}
		out.Load = nil
	}
	e, index := p.e, p.s.spec.Index
	e.late.goStop(func() {
		grace := InterruptGrace(e.grace)
		st := p.stop(ctx, grace)
		p.scrub()
		if len(st.escalated) > 0 {
			e.late.warn(fmt.Sprintf("point %d: %s did not exit within its grace after SIGTERM (%s after the interrupt) and was SIGKILLed",
				index, strings.Join(st.escalated, " and "), grace))
		}
		if w := (result.Point{Index: index, Escaped: st.escaped}).EscapedWarning(); w != "" {
			e.late.warn(w)
		}
	})
}
