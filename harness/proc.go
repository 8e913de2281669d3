package harness

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// ProcRunner measures points with real processes: a dedicated server per
// point pinned to the server CPUs (or a warm arm's, or an external one),
// the generator pinned to its own, both sampled from the opening of the
// generator's window to its end. Each point is a pipeline of stages
// (point.go); the runner holds what they all read, set once, and what
// the sweep's points leave behind them.
type ProcRunner struct {
	e procEnv
}

// NewProcRunner prepares the runner for the plan's points (its Target is
// the head's server), with opts' seams (each nil one the real part). The
// generator defaults to this executable's own `load` subcommand.
func NewProcRunner(o *Plan, ag agentside.Env, opts ProcOptions) (*ProcRunner, error) {
	t := o.Target
	gen := strings.Fields(o.Point.Generator)
	if len(gen) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("GENERATOR: find this executable for `load`: %w", err)
		}
		gen = []string{self, "load"}
	}
	ready, grace := t.Durations()
	if o.Point.ReadyTimeout > 0 {
		ready = o.Point.ReadyTimeout
	}
	return &ProcRunner{e: procEnv{
		plan: o, opts: opts.withDefaults(), agents: ag, generator: gen, ready: ready, grace: grace, head: t, host: serverHost(o.Agents, ag),
		grants: &grants{}, late: &lateWork{}, hub: &remoteHub{plan: o}, arms: &armRegistry{}, profiler: &lazyProfiler{p: opts.Profiler},
	}}, nil
}

// SetBase gives a two-arm sweep's runner its base arm: points with Arm
// ArmBase boot it, with the same pinning, limits and generator as the
// head. The readiness timeout and stop grace are the longer of the two
// targets' (unless --ready-timeout set one). Call it before the first
// point.
func (pr *ProcRunner) SetBase(t target.Spec) {
	pr.e.base = &t
	ready, grace := t.Durations()
	if pr.e.plan.Point.ReadyTimeout <= 0 {
		pr.e.ready = max(pr.e.ready, ready)
	}
	pr.e.grace = max(pr.e.grace, grace)
}

// RunPoint measures one point in its phases — files, the servers up
// (boot, ready), generator, the window's opening (marker), the measured
// window, collect — then stops both sides: PointRunner. Every failure
// becomes a failed verdict.Outcome (a PointError's text); nothing here
// stops the sweep. When ctx ends during the point, RunPoint returns at
// once with Interrupted set and leaves the stopping (with
// InterruptGrace) to a goroutine that Drain waits for.
func (pr *ProcRunner) RunPoint(ctx context.Context, spec PointSpec) verdict.Outcome {
	return runPoint(ctx, &pr.e, spec)
}

// Drain waits (at most limit) for the stops RunPoint left running after an
// interrupt, and returns what they found worth a warning (escalations to
// SIGKILL) that the result written before could not hold.
func (pr *ProcRunner) Drain(limit time.Duration) []string {
	return pr.e.late.drain(pr.e.opts.Clock, limit)
}

// RecordGranted copies the affinities the kernel granted (read back from
// the first point that booted each side) into r, and warns when they
// differ from the request.
func (pr *ProcRunner) RecordGranted(r *result.Result) {
	pr.e.grants.record(r, pr.e.plan.CPUs)
	if w := uncheckedAgents(pr.e.plan, pr.e.head); w != "" {
		r.Warn(w)
	}
}

// BootArm boots arm's servers afresh, stopping first any it kept (one
// that went down, or a reboot), waits for their readiness and freezes
// them: ArmRunner.
func (pr *ProcRunner) BootArm(ctx context.Context, arm string) ArmOutcome {
	return bootArm(ctx, &pr.e, arm)
}

// StopArm stops arm's servers kept up: ArmRunner.
func (pr *ProcRunner) StopArm(ctx context.Context, arm string) ArmOutcome {
	return stopArm(ctx, &pr.e, arm)
}

// ProfileDiff compares the profiled points of both arms: TwoArmRunner.
func (pr *ProcRunner) ProfileDiff(ctx context.Context, points []result.Point, dir, relTo string) *result.ProfileDiff {
	return pr.e.profiler.get().Diff(ctx, cpuprof.DiffInput{Points: points, Dir: dir, RelTo: relTo,
		Title: "CPU per message, head against base"})
}

// ProfileUnable is why the machine's perf can take no profile (checked
// once): TwoArmRunner.
func (pr *ProcRunner) ProfileUnable() string { return pr.e.profiler.get().Plan().Reason }

// Close ends what the runner keeps across points: the warm arms' servers
// are stopped, and AGENTS_LISTEN's agents told the sweep is done (they
// exit).
func (pr *ProcRunner) Close() {
	closeArms(&pr.e)
	pr.e.hub.close()
}
