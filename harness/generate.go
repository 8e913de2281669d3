package harness

import (
	"context"
	"path/filepath"
	"time"

	"github.com/ceiling-bench/ceiling/harness/side"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/notify"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// generation is a point's load started (the generate stage): its
// generator side, the watch on the point's directory that hears its
// window open (the marker), and the headroom probe's cgroup when the
// point is capped.
type generation struct {
	side     side.Generator
	ready    *notify.Watcher
	throttle *pinning.Throttle
	clock    Clock
	json     string // where it writes its JSON
}

// newSide is the point's generator side: AGENTS' agents, or the one
// generator.
func newSide(e *procEnv, s pointSetup, f pointFiles, set *serverSet, fs faultStage) side.Generator {
	if e.plan.Agents.Count > 0 {
		return newAgentSide(e, s, f)
	}
	return newGenProc(e, s, f, set, fs)
}

// startGeneration starts g for a point of setup s on set's servers: the
// headroom probe's point in that role's cgroup, the watch for its
// marker (and a duet's gate) set before the side starts, the side given the point's flags. What it
// started is in the generation it returns, also with its error, for stop.
func startGeneration(ctx context.Context, e *procEnv, s pointSetup, f pointFiles, set *serverSet, g side.Generator) (*generation, error) {
	gen := &generation{clock: e.opts.Clock, json: f.json}
	url, err := s.target.URLFor(s.scenario)
	if err != nil {
		return gen, failAt(PhaseGenerator, nil, "target: %v", err)
	}
	var cgroup string
	if s.spec.Role == result.RoleHeadroom {
		name := supervise.CgroupName("headroom", s.spec.Index)
		th, err := pinning.NewThrottle(name, e.plan.Schedule.HeadroomProbe*float64(len(s.genCPUs)))
		if err != nil {
			return gen, failAt(PhaseGenerator, nil, "headroom probe: cannot cap the generator: %v", err)
		}
		e.grants.usedCgroup(th.Version)
		// Removed by stop, after the generator has stopped. A cgroup
		// left behind does not unmake the measurement.
		gen.throttle, cgroup = th, th.Path
	}
	gate := ""
	if s.spec.Gate != nil {
		gate = filepath.Base(load.GateReady(f.gate))
	}
	if gen.ready, err = notify.Watch(f.dir, filepath.Base(f.marker), gate); err != nil {
		return gen, failAt(PhaseGenerator, nil, "%v", err)
	}
	url = target.Expand(url, set.addr)
	gen.side = g
	if tail, err := g.Start(ctx, url, loadArgs(e.plan, s.target, s.spec.Key, set.addr, url, s.window, s.warmup, f), cgroup); err != nil {
		return gen, failAt(PhaseGenerator, tail, "%v", err)
	}
	return gen, nil
}

// stop stops the side's processes (the generator, "generator", or each
// agent, "agent 2") with grace, releases what the side holds, removes
// the cgroup and ends the watch. It returns the processes
// that had to be SIGKILLed and what escaped containment; a stop error
// does not unmake a point whose JSON was read.
func (g *generation) stop(ctx context.Context, grace time.Duration) (escalated []string, escaped []result.EscapedProcess) {
	if g.side != nil {
		for _, p := range g.side.Procs() {
			if esc, _ := stopProc(ctx, g.clock, p, grace); esc {
				escalated = append(escalated, p.Name())
			}
			escaped = append(escaped, escapedOf(p)...)
		}
		g.side.Release()
	}
	if g.throttle != nil {
		_ = g.throttle.Remove()
	}
	if g.ready != nil {
		_ = g.ready.Close()
	}
	return escalated, escaped
}

// logs are the side's processes' logs (the agents'), for scrub.
func (g *generation) logs() []string {
	var out []string
	if g.side != nil {
		for _, p := range g.side.Procs() {
			out = append(out, p.LogPath())
		}
	}
	return out
}
