package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/fault"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/progress"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/harness/verdict"
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

// ErrRefused is returned (with a written result, marked partial) when a
// point's preflight was refused in a way every point would be (a wrong
// secret, servers that are not one cluster: load.Refused): the sweep
// stopped there instead of booting the server again to be refused again.
// Exit status 1.
var ErrRefused = errors.New("the sweep stopped at a refusal every point would meet: result written")

// ErrResilience is returned (with a written result) when a resilience
// point's verdict is not held: the other servers did not keep serving, or
// the evidence is missing. Exit status 1.
var ErrResilience = fmt.Errorf("FAULT: the resilience point did not hold: result written")

// refusedStop ends a sweep at point p, whose preflight was refused
// (verdict.Outcome.Refused): r says where and why, in full.
func refusedStop(r *result.Result, p result.Point) error {
	r.Partial = true
	r.PartialReason = fmt.Sprintf("stopped after point %d: %s", p.Index, p.FailReason)
	r.Warn(r.PartialReason)
	r.Summarize()
	return ErrRefused
}

// Sweep runs the points package schedule chooses for o — every point in
// the interleaved order (or SEARCH=bisect's), then the A-A repeat of the
// headline peak, the headroom probe, the resilience point — filling r
// (whose Meta the caller has set) as it goes. It returns ErrInterrupted when ctx ended (r then holds what
// finished, marked partial) and ErrNoCleanHeadline when the headline batch
// has no clean point; r is complete enough to write in every case. The
// progress lines' elapsed time is clock's.
func Sweep(ctx context.Context, o *Plan, runner PointRunner, r *result.Result, w io.Writer, th verdict.Thresholds, clock Clock) error {
	r.SchemaVersion = result.SchemaVersion
	r.Config = ConfigOf(o)
	r.Regime = result.Regime(o.Point.Scenario, o.Schedule.HeadlineBatch, o.Point.RecordSize, len(o.CPUs.Server), len(o.CPUs.Generator))
	r.Notes = slices.Clone(o.Notes)
	if o.Schedule.Search == knob.SearchBisect {
		r.Config.Order = nil // the order is the search's
	}
	planned := o.Planned()
	total := planned.Points
	progress.Plan(w, total, planned.Parts, planned.Load)
	start := clock.Now()

	run := func(i int, role string, k result.PointKey) (result.Point, verdict.Outcome, bool) {
		progress.Point(w, i, total, role, k, clock.Now().Sub(start))
		out := runner.RunPoint(ctx, PointSpec{Index: i, Role: role, Key: k})
		p, ok := admit(r, i, role, k, "", out, th)
		if !ok {
			return p, out, false
		}
		if p.Status != result.StatusOK {
			progress.Failed(w, i, total, "", p.FailReason)
		}
		return p, out, true
	}
	s := schedule.NewSweep(schedule.SweepPlan{
		Batches: o.Schedule.BatchLadder, Conns: func(b int) []int { return o.Schedule.ConnsLadder(b) }, Reps: o.Schedule.Reps,
		HeadlineBatch: o.Schedule.HeadlineBatch, Bisect: o.Schedule.Search == knob.SearchBisect, Objective: r.Config.Objective != "",
		Headroom: o.Schedule.HeadroomProbe > 0, Fault: !o.Fault.IsZero(),
	})
	// The search's notes go in as it ends, before the points after it.
	noted := false
	note := func() {
		if !noted {
			noted = true
			r.Notes = append(r.Notes, s.Notes()...)
		}
	}
	var last []schedule.Observed
	swept := 0
	for ctx.Err() == nil {
		pt, more := s.Next(last...)
		last = nil
		if !more || pt.Role != result.RoleSweep {
			note()
		}
		if !more {
			break
		}
		i := len(r.Curve) + 1
		if pt.Role == result.RoleSweep {
			swept++
			i = swept // its place in Config.Order
			if o.Schedule.Search == knob.SearchBisect {
				r.Config.Order = append(r.Config.Order, pt.Key)
			}
		}
		p, out, ok := run(i, pt.Role, pt.Key)
		if ok && out.Refused {
			note()
			return refusedStop(r, p)
		}
		if ok && pt.Step > 0 {
			cp := &r.Curve[len(r.Curve)-1]
			cp.SearchStep, cp.SearchPhase, cp.SearchReason = pt.Step, pt.Phase, pt.Reason
		}
		r.Summarize() // the headline, where the schedule puts the A-A repeat (idempotent)
		last = []schedule.Observed{observeSearch(pt, p, out, ok, r.Headline)}
	}
	s.Observe(last...) // the point that finished as ctx ended
	note()
	r.Summarize()
	return resilienceErr(finish(ctx, r, total), r)
}

// observe is a point as the schedules read it: pt as Next gave it, p its
// curve point (ok false: it was interrupted and is not in the curve), h
// the curve's headline with it in.
func observe(pt schedule.Point, p result.Point, ok bool, h result.Headline) schedule.Observed {
	if !ok {
		return schedule.Observed{Point: pt, Lost: true, Headline: h}
	}
	return schedule.Observed{Point: pt, Failed: p.Status != result.StatusOK, Clean: result.CleanRepeat(&p),
		Contended: p.Contended, ThroughputPerS: p.ThroughputPerS, Headline: h}
}

// observeSearch is observe with what the search reads of the runner's
// outcome too: no generator result is a failed point, and Good leaves
// contention out (it makes a point unclean, so never a ceiling, but its
// throughput still shows the curve's shape); errors, lost connections and
// a missed objective are the server's answer, and count.
func observeSearch(pt schedule.Point, p result.Point, out verdict.Outcome, ok bool, h result.Headline) schedule.Observed {
	ob := observe(pt, p, ok, h)
	if ok {
		ob.Failed = ob.Failed || out.Load == nil
		ob.Good = !ob.Failed && verdict.MeasuredClean(out.Load.Summary) && (p.Objective == nil || p.Objective.Met)
	}
	return ob
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
// (verdict.Point, arm set), appended to the curve, with warnings for a side
// that had to be SIGKILLed and for escaped processes.
func admit(r *result.Result, i int, role string, k result.PointKey, arm string, out verdict.Outcome, th verdict.Thresholds) (result.Point, bool) {
	if out.Interrupted {
		what := ""
		if arm != "" {
			what = arm + ", "
		}
		r.Warn(fmt.Sprintf("point %d (%sbatch %d, %d connections, rep %d) was interrupted and is not in the curve: %s", i, what, k.Batch, k.Connections, k.Rep, out.FailReason))
		return result.Point{}, false
	}
	p := verdict.Point(i, role, k, out, th)
	if role == result.RoleResilience {
		fault.Judge(&p, out.Fault)
	}
	p.Arm = arm
	verdict.Objective(&p, r.Config.Objective, out)
	r.Curve = append(r.Curve, p)
	if len(p.Escalated) > 0 {
		r.Warn(fmt.Sprintf("point %d: %s did not exit within its grace after SIGTERM and was SIGKILLed", i, strings.Join(p.Escalated, " and ")))
	}
	if w := p.EscapedWarning(); w != "" {
		r.Warn(w)
	}
	return p, true
}

// ConfigOf records p's knobs after defaults, with the interleaved order.
func ConfigOf(p *Plan) result.Config {
	o, pt := &p.Schedule, p.Point
	c := result.Config{
		Scenario:      pt.Scenario,
		BatchLadder:   append([]int(nil), o.BatchLadder...),
		ConnsLadders:  map[string][]int{},
		HeadlineBatch: o.HeadlineBatch,
		RecordSize:    pt.RecordSize,
		Reps:          o.Reps,
		DurationNs:    int64(pt.Duration),
		WarmupNs:      int64(pt.Warmup),
		Quick:         o.Quick,
		Search:        o.Search,

		HeadroomProbeFraction: o.HeadroomProbe,
		Objective:             o.Objective,
		Agents:                p.Agents.Count,
	}
	if pt.SourceAddrs != load.SourceAuto {
		c.SourceAddrs = pt.SourceAddrs
	}
	for _, b := range o.BatchLadder {
		c.ConnsLadders[strconv.Itoa(b)] = append([]int(nil), o.ConnsLadder(b)...)
	}
	if c.Search == "" {
		c.Search = knob.SearchLadder
	}
	c.Order = schedule.Order(o.BatchLadder, o.ConnsLadder, o.Reps)
	return c
}
