package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/internal/objective"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// ErrNoCleanHeadline is returned (with a written result) when the headline
// batch has no clean point: the run is not publishable, exit status 1.
var ErrNoCleanHeadline = errors.New("no clean point at the headline batch: result written, not publishable")

// ErrContended is returned instead of ErrNoCleanHeadline (and matches it
// with errors.Is) when the headline batch had points that ran, but every
// one was contended or otherwise not clean and at least one was contended:
// the machine was not quiet enough to publish. Exit status 1.
var ErrContended = fmt.Errorf("the headline batch's points ran on contended CPUs (shared with other work, or stolen by the hypervisor): %w", ErrNoCleanHeadline)

// ErrInterrupted is returned when the context ended mid-sweep; the partial
// result is marked so.
var ErrInterrupted = errors.New("sweep interrupted: partial result written")

// PointSpec is what a PointRunner is asked to measure.
type PointSpec struct {
	Index int // 1-based position in the run
	Role  string
	Key   result.PointKey
	// Arm is the server of a two-arm sweep (ArmBase, ArmHead); empty:
	// the one target.
	Arm string
	// Duration and Warmup are this point's window and warm-up when
	// Duration > 0 (the compare phase's); else the Options'.
	Duration, Warmup time.Duration
	// Half, in a duet, is the half of the machine the point runs on
	// (nil: the Options' sets), and Gate starts its load on the same
	// instant as its partner's (duet.go).
	Half *Half
	Gate *Gate
}

// Outcome is what measuring one point produced. Load is nil when the point
// failed; FailReason and LogTail then say why.
type Outcome struct {
	Load         *load.Result
	ServerCPU    result.CPUStats
	Servers      []result.NamedCPU // each server's, of several (ServerCPU is their sum)
	GeneratorCPU result.CPUStats
	FailReason   string
	LogTail      string // server log tail, or the generator's stderr tail
	Escaped      []result.EscapedProcess
	StartedAt    time.Time
	Wall         time.Duration
	// Interrupted: the sweep's context ended before the point finished;
	// the point is no measurement and Sweep leaves it out of the curve.
	Interrupted bool
	// Escalated names the sides ("server", "generator") that outlived
	// SIGTERM by their stop grace and were SIGKILLed.
	Escalated []string
	// The server's own metrics and profile over the window (windowCapture).
	ServerMetrics             *result.ServerMetrics
	ProfileFile, ProfileError string
	// Agents is each agent's part of the point with AGENTS (nil without).
	Agents []agents.Agent
	// CountSeries is the target's counter for the point's scenario
	// (metrics.counts; "" for none), CountOverlapS the seconds of the
	// window its two reads cover (0: they cover none, or one failed), and
	// CountWindowS the window's own seconds (0: unknown).
	CountSeries   string
	CountOverlapS float64
	CountWindowS  float64
	// CountSkip says why the count cannot be checked although a series
	// is named ("": it can).
	CountSkip string
	// Fault is FAULT's record of a resilience point (nil in any other).
	Fault *result.Fault
}

// PointRunner measures one point: boot the server, run the generator,
// sample both sides, stop the server. ProcRunner is the real one.
type PointRunner interface {
	RunPoint(ctx context.Context, spec PointSpec) Outcome
}

// Sweep runs every point of o in the interleaved order, then repeats the
// headline peak (A-A), filling r (whose Meta the caller has set) as it
// goes. It returns ErrInterrupted when ctx ended (r then holds what
// finished, marked partial) and ErrNoCleanHeadline when the headline batch
// has no clean point; r is complete enough to write in every case.
func Sweep(ctx context.Context, o *Plan, runner PointRunner, r *result.Result, progress io.Writer, th Thresholds) error {
	r.SchemaVersion = result.SchemaVersion
	r.Config = ConfigOf(&o.Options)
	r.Regime = result.Regime(o.Scenario, o.HeadlineBatch, o.RecordSize, len(o.ServerCPUs), len(o.GeneratorCPUs))
	r.Notes = slices.Clone(o.Notes)
	order := r.Config.Order
	total := len(order) + 1 // the A-A repeat
	if o.Search == knob.SearchBisect {
		total = searchTotal(o) + 1 // at most; the order is the search's
		r.Config.Order = nil
	}
	if o.HeadroomProbe > 0 {
		total++
	}
	n, how, extra := total-1, "on the ladder", "1 A-A repeat"
	if o.Search == knob.SearchBisect {
		how = "at most, chosen by bisection"
	}
	if o.HeadroomProbe > 0 {
		n, extra = n-1, extra+", 1 headroom probe"
	}
	if !o.Fault.IsZero() {
		total++
		extra += ", 1 resilience point (FAULT " + o.Fault.String() + ")"
	}
	PlanLine(progress, total, fmt.Sprintf("%d %s, %s", n, how, extra), time.Duration(total)*(o.Warmup+o.Duration))
	start := time.Now()

	run := func(i int, role string, k result.PointKey) (result.Point, Outcome, bool) {
		Progress(progress, i, total, role, k, time.Since(start))
		out := runner.RunPoint(ctx, PointSpec{Index: i, Role: role, Key: k})
		p, ok := admit(r, i, role, k, "", out, th)
		if !ok {
			return p, out, false
		}
		if p.Status != result.StatusOK {
			fmt.Fprintf(progress, "point %d/%d failed: %s\n", i, total, p.FailReason)
		}
		return p, out, true
	}
	if o.Search == knob.SearchBisect {
		searchSweep(ctx, o, r, run)
	} else {
		for i, k := range order {
			if ctx.Err() != nil {
				break
			}
			run(i+1, result.RoleSweep, k)
		}
	}
	r.Summarize()
	if ctx.Err() == nil {
		if r.Headline.Clean {
			k := result.PointKey{Batch: r.Headline.Batch, Connections: r.Headline.Connections, Rep: o.Reps}
			run(len(r.Curve)+1, result.RoleAARepeat, k)
			r.Summarize()
			if o.HeadroomProbe > 0 && ctx.Err() == nil {
				k.Rep++
				run(len(r.Curve)+1, result.RoleHeadroom, k)
				r.Summarize()
			}
		}
	}
	if !o.Fault.IsZero() && ctx.Err() == nil {
		run(len(r.Curve)+1, result.RoleResilience, resilienceKey(o, r))
		r.Summarize()
	}
	return resilienceErr(finish(ctx, r, total), r)
}

// resilienceKey is where FAULT's point runs: the headline's rung, or
// without a headline the headline batch's largest rung, rep after every
// other at that rung.
func resilienceKey(o *Plan, r *result.Result) result.PointKey {
	k := result.PointKey{Batch: r.Headline.Batch, Connections: r.Headline.Connections}
	if k.Connections == 0 {
		k.Batch = o.HeadlineBatch
		for _, c := range o.ConnsLadder(o.HeadlineBatch) {
			k.Connections = max(k.Connections, c)
		}
	}
	for _, p := range r.Curve {
		if p.Batch == k.Batch && p.Connections == k.Connections {
			k.Rep = max(k.Rep, p.Rep+1)
		}
	}
	return k
}

// resilienceErr is err, or ErrResilience when it is nil and a resilience
// point did not hold.
func resilienceErr(err error, r *result.Result) error {
	if err != nil {
		return err
	}
	for _, p := range r.Curve {
		if p.Role == result.RoleResilience && (p.Fault == nil || p.Fault.Verdict != result.ResilienceHeld) {
			return ErrResilience
		}
	}
	return nil
}

// finish is how both sweeps end: a partial document and ErrInterrupted
// when ctx ended, else the headline's error (nil when it is clean).
func finish(ctx context.Context, r *result.Result, total int) error {
	if ctx.Err() != nil {
		r.Partial = true
		of := ""
		if r.Config.Search == knob.SearchBisect {
			of = "at most " // the search's budget, not its path
		}
		r.PartialReason = fmt.Sprintf("interrupted after %d of %s%d points: %v", len(r.Curve), of, total, context.Cause(ctx))
		r.Warn(r.PartialReason)
		r.Summarize()
		return ErrInterrupted
	}
	if !r.Headline.Clean {
		return noHeadline(r)
	}
	return nil
}

// noHeadline is the error of a sweep whose headline batch has no clean
// point: ErrContended when one of its measured points (the head arm's, in
// a two-arm sweep) ran on contended CPUs, else ErrNoCleanHeadline.
func noHeadline(r *result.Result) error {
	for _, p := range r.Curve {
		if p.Batch == r.Config.HeadlineBatch && p.Arm != result.ArmBase && p.Contended &&
			(p.Role == result.RoleSweep || p.Role == result.RoleCompare) {
			return ErrContended
		}
	}
	return ErrNoCleanHeadline
}

// admit is what both sweeps do with a runner's outcome: an interrupted
// point is no measurement and not a failure — it is left out of the curve
// with a warning (ok false); any other becomes a point with its verdict
// (MakePoint, arm set), appended to the curve, with warnings for a side
// that had to be SIGKILLed and for escaped processes.
func admit(r *result.Result, i int, role string, k result.PointKey, arm string, out Outcome, th Thresholds) (result.Point, bool) {
	if out.Interrupted {
		what := ""
		if arm != "" {
			what = arm + ", "
		}
		r.Warn(fmt.Sprintf("point %d (%sbatch %d, %d connections, rep %d) was interrupted and is not in the curve: %s", i, what, k.Batch, k.Connections, k.Rep, out.FailReason))
		return result.Point{}, false
	}
	p := MakePoint(i, role, k, out, th)
	if role == result.RoleResilience {
		judgeFault(&p, out)
	}
	p.Arm = arm
	judgeObjective(&p, r.Config.Objective, out)
	r.Curve = append(r.Curve, p)
	if len(p.Escalated) > 0 {
		r.Warn(fmt.Sprintf("point %d: %s did not exit within its grace after SIGTERM and was SIGKILLed", i, strings.Join(p.Escalated, " and ")))
	}
	if w := escapedWarning(p); w != "" {
		r.Warn(w)
	}
	return p, true
}

// MakePoint turns a runner's outcome into a curve point with its verdict.
func MakePoint(i int, role string, k result.PointKey, out Outcome, th Thresholds) result.Point {
	p := result.Point{
		Index: i, Role: role, Batch: k.Batch, Connections: k.Connections, Rep: k.Rep,
		ServerCPU: out.ServerCPU, Servers: out.Servers, GeneratorCPU: out.GeneratorCPU,
		StartedAt: out.StartedAt, WallTimeNs: int64(out.Wall),
		Escalated: out.Escalated,
		Escaped:   out.Escaped,

		ServerMetrics: out.ServerMetrics, ProfileFile: out.ProfileFile, ProfileError: out.ProfileError,
		Agents: agentReports(out.Agents),
	}
	if out.FailReason == "" && out.Load != nil && out.Load.Summary.Failure != "" {
		// The generator says it could not measure: its figures are none.
		out.FailReason = "generator could not measure: " + out.Load.Summary.Failure
	}
	if out.Load == nil || out.FailReason != "" {
		reason := out.FailReason
		if reason == "" {
			reason = "no generator result"
		}
		return failedPoint(p, reason, out.LogTail)
	}
	base := p
	s := out.Load.Summary
	p.Status = result.StatusOK
	p.Scenario = s.Blocks
	p.Drop = s.Drop
	p.ThroughputPerS = s.ThroughputPerS
	p.LatencyNs = s.Latency
	p.Errors = s.Errors
	p.Saturated = s.Saturated
	p.Clean = measuredClean(s)
	// And its pinned CPUs to itself: a point measured on cores shared
	// with other work (or stolen by the hypervisor) measures the
	// neighbour too, and never becomes a ceiling.
	p.Contended = result.Contention(out.ServerCPU, out.GeneratorCPU) != ""
	p.Clean = p.Clean && !p.Contended
	p.Generator = out.Load.Generator
	p.Verdict, p.VerdictReason = Judge(th, out.ServerCPU, out.GeneratorCPU, s, out.Load.Generator)
	judgeAgents(&p, out.Agents, th, out.GeneratorCPU)
	if late := lateNotBehind(p.Agents); late != "" {
		base.Agents = p.Agents
		return failedPoint(base, "agents: "+late, out.LogTail)
	}
	if out.CountSeries != "" {
		if out.CountSkip != "" {
			p.CountCheck = &result.CountCheck{Series: out.CountSeries, GeneratorPerS: s.ThroughputPerS, Verdict: result.CountsUnchecked, Reason: out.CountSkip}
		} else {
			p.CountCheck = checkCount(out.CountSeries, out.CountOverlapS, out.CountWindowS, out.ServerMetrics, s.ThroughputPerS, int64(k.Batch)*int64(k.Connections))
		}
		switch p.CountCheck.Verdict {
		case result.CountsDisagree:
			base.Agents, base.CountCheck = p.Agents, p.CountCheck
			return failedPoint(base, countDisagreement(p), out.LogTail)
		case result.CountsUnchecked:
			p.Clean = false
			p.VerdictReason += "; its count is unchecked: " + p.CountCheck.Reason
		}
	}
	p.LowerBound = result.IsLowerBound(p.Verdict)
	return p
}

// lateNotBehind names the agents that started their window late
// (result.AgentReport.LateStart) and yet kept their schedule: the late
// "started" was then not starvation but a clock that was off, and the
// window did not line up.
func lateNotBehind(as []result.AgentReport) string {
	var late []string
	for _, a := range as {
		if a.LateStart && !a.Behind {
			late = append(late, fmt.Sprintf("agent %d started its window %v late (start skew over the limit) and kept its schedule: not starved, so its window may not have lined up with the others'", a.Index, time.Duration(a.StartSkewNs)))
		}
	}
	return strings.Join(late, "; ")
}

// failedPoint is p (as MakePoint lays it out, before its figures) failed
// for reason, with its log tail.
func failedPoint(p result.Point, reason, logTail string) result.Point {
	p.Status, p.Verdict = result.StatusFailed, result.VerdictFailed
	p.FailReason, p.VerdictReason = reason, reason
	p.LogTail = logTail
	return p
}

// agentReports are the agents' parts of a point as its document lists
// them (nil without agents).
func agentReports(as []agents.Agent) []result.AgentReport {
	if as == nil {
		return nil
	}
	out := make([]result.AgentReport, len(as))
	for i, a := range as {
		out[i] = a.AgentReport
	}
	return out
}

// judgeAgents applies the generator half of the verdict rule to each agent
// alone (their CPU is the set's they share), by its own result in as (in
// the order of p.Agents): a point is generator-capped when any agent fell
// behind, and its reason names them.
func judgeAgents(p *result.Point, as []agents.Agent, th Thresholds, gen result.CPUStats) {
	if len(p.Agents) == 0 {
		return
	}
	p.Agents = slices.Clone(p.Agents)
	var behind []string
	for i := range p.Agents {
		a := &p.Agents[i]
		if i >= len(as) || as[i].Result == nil {
			continue
		}
		r := as[i].Result
		a.Behind, a.Evidence = generatorBehind(th, gen, r.Summary, r.Generator)
		if a.Behind && a.LateStart {
			a.Evidence += fmt.Sprintf("; its window's start was reported %v late", time.Duration(a.StartSkewNs))
		}
		if a.Behind {
			behind = append(behind, strconv.Itoa(a.Index))
		}
	}
	if len(behind) == 0 {
		return
	}
	switch p.Verdict {
	case result.VerdictServerSaturated:
		p.Verdict = result.VerdictBoth
	case result.VerdictNeither:
		p.Verdict = result.VerdictGeneratorCapped
	}
	p.VerdictReason += "; agent " + strings.Join(behind, ", ") + " fell behind"
}

// measuredClean is what clean asks of the generator's own summary: no
// errors, not saturated in open loop, and a throughput. It also needs every
// connection open and none lost: a point with fewer connections than its
// rung is another point. And a window in which nothing was measured is no
// measurement (a starved generator on a busy machine can produce one).
// MakePoint adds the CPUs' side (not contended).
func measuredClean(s load.Summary) bool {
	short := s.ConnectionsRequested > 0 && s.ConnectionsOpen < s.ConnectionsRequested
	dropped := s.Dropped != nil && *s.Dropped > 0
	return s.Errors == 0 && !s.Saturated && !short && !dropped && s.ThroughputPerS > 0
}

// ConfigOf records the knobs after defaults, with the interleaved order.
func ConfigOf(o *knob.Options) result.Config {
	c := result.Config{
		Scenario:      o.Scenario,
		BatchLadder:   append([]int(nil), o.BatchLadder...),
		ConnsLadders:  map[string][]int{},
		HeadlineBatch: o.HeadlineBatch,
		RecordSize:    o.RecordSize,
		Reps:          o.Reps,
		DurationNs:    int64(o.Duration),
		WarmupNs:      int64(o.Warmup),
		Quick:         o.Quick,
		Search:        o.Search,

		HeadroomProbeFraction: o.HeadroomProbe,
		Objective:             o.Objective,
		Agents:                o.Agents,
	}
	if o.SourceAddrs != load.SourceAuto {
		c.SourceAddrs = o.SourceAddrs
	}
	for _, b := range o.BatchLadder {
		c.ConnsLadders[strconv.Itoa(b)] = append([]int(nil), o.ConnsLadder(b)...)
	}
	if c.Search == "" {
		c.Search = knob.SearchLadder
	}
	c.Order = Order(o.BatchLadder, o.ConnsLadder, o.Reps)
	return c
}

// judgeObjective evaluates the sweep's objective on a measured point. An
// objective that cannot be evaluated is not met, and says why.
func judgeObjective(p *result.Point, spec string, out Outcome) {
	if spec == "" || p.Status != result.StatusOK || out.Load == nil {
		return
	}
	o, err := objective.Parse(spec)
	var res objective.Result
	if err == nil {
		res, err = o.Eval(out.Load.Summary)
	}
	if err != nil {
		res = objective.Result{Conditions: []objective.Evaluated{{Why: "objective: " + err.Error()}}}
	}
	p.Objective = &res
}
