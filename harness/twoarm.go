package harness

import (
	"context"
	"io"
	"math"
	"slices"
	"time"

	"github.com/ceiling-bench/ceiling/harness/duet"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/progress"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// The two-arm sweep (docs/compare.md): base and head measured in one run,
// on the same machine, pinning and generator, so the comparison does not
// rest on two runners or two days. Which step comes next — a block of
// both arms at one key, or the boot or stop of the arms' servers kept up
// between points (warm arms) — is package schedule's (TwoArm.Next), from
// what every step did and the run's clock; this file runs the steps.
//
// The curve holds both arms' points; Summarize gives the head arm's
// ceilings and headline, and the comparison (result.DecideComparison).
// The headline gates; the other compared points are reported.

// SweepTwoArm runs a two-arm sweep with runner (which boots the base for
// ArmBase points and the head otherwise), filling r as Sweep does; clock
// is the run's (nil: the wall clock), which the budget and the progress
// read. Its errors are Sweep's: ErrInterrupted with a partial r,
// ErrRefused, ErrNoCleanHeadline when the head arm has no clean point at
// the headline batch (the comparison cannot be made: exit 1).
func SweepTwoArm(ctx context.Context, o *Plan, runner TwoArmRunner, r *result.Result, w io.Writer, th verdict.Thresholds, clock Clock) error {
	if clock == nil {
		clock = wallClock{}
	}
	r.SchemaVersion = result.SchemaVersion
	r.Config = twoArmConfig(o)
	r.Regime = result.Regime(o.Point.Scenario, o.Schedule.HeadlineBatch, o.Point.RecordSize, len(o.CPUs.Server), len(o.CPUs.Generator))
	r.Notes = slices.Clone(o.Notes)
	tp := o.twoArmPlan(r.Config.Order)
	if tp.WantsProfile != nil {
		tp.ProfileUnable = runner.ProfileUnable()
	}
	s := schedule.NewTwoArm(tp)
	if o.Headline() {
		r.Config.Order = nil // the first pass's keys, as the search runs them
	}
	planned := o.Planned()
	progress.Plan(w, planned.Points, planned.Parts, planned.Load)

	start := clock.Now()
	b := &blockRun{ctx: ctx, o: o, runner: runner, r: r, w: w, th: th, s: s,
		halves: duet.Halves(o.CPUs, o.Compare.Mode), elapsed: func() time.Duration { return clock.Now().Sub(start) }}
	var rep schedule.Report
	announced := false
	for ctx.Err() == nil && b.refused == nil {
		st := s.Next(rep)
		if _, skipped, ok := s.Rungs(); ok && !announced {
			// The first pass is over: its rungs are compared.
			announced = true
			r.Summarize()
			for _, w := range skipped {
				r.Warn(w)
			}
		}
		if st.Kind == schedule.Done {
			break
		}
		if st.Kind == schedule.RunBlock {
			if st.Block[0].Role == result.RoleSweep && o.Headline() {
				r.Config.Order = append(r.Config.Order, st.Block[0].Key)
			}
			rep = b.block(st)
		} else {
			rep = b.arms(st)
		}
		rep.Elapsed = b.elapsed()
	}
	b.profile(o.Files.Out, s.ProfileWhy())
	r.Notes = append(r.Notes, s.Notes()...)
	r.Arms = s.Record()
	if z := s.Sizing(); z != nil {
		r.Arms.Windows = windowsRecord(z)
		r.Config.CompareDurationNs, r.Config.CompareWarmupNs = int64(z.Window.Duration), int64(z.Window.Warmup)
	}
	if n := s.Planned(); n > 0 {
		r.Config.CompareReps = n // the blocks planned: the sequential design's last look
	}
	r.Ended = endedOf(s.Ended())
	if b.refused != nil {
		return refusedStop(r, *b.refused)
	}
	diff := b.diff
	r.Summarize()
	if r.Comparison != nil && diff != nil {
		r.Comparison.Headline.ProfileDiff = diff
	}
	return finish(ctx, r, s.Total())
}

// twoArmConfig is a two-arm sweep's config: the plan's knobs and the
// compare phase's.
func twoArmConfig(o *Plan) result.Config {
	c := ConfigOf(o)
	c.CompareReps, c.Alpha, c.CompareStop = o.Compare.Reps, o.Compare.Alpha, o.Compare.Stop
	c.CompareDurationNs, c.CompareWarmupNs = int64(o.Compare.Duration), int64(o.Compare.Warmup)
	c.CompareMode = knob.ModeInterleaved
	if duet.Halves(o.CPUs, o.Compare.Mode) != nil {
		c.CompareMode = knob.ModeDuet
	}
	c.CompareScope = o.Compare.Scope
	if o.Headline() && o.Compare.Budget > 0 {
		c.CompareBudgetNs = int64(o.Compare.Budget)
	}
	c.CompareArms, c.CompareRebootEvery = o.Compare.Arms, o.Compare.RebootEvery
	return c
}

// endedOf is why each compared point's blocks stopped, for the result, in
// batch and connections order.
func endedOf(m map[result.PointKey]result.Ended) []result.EndedAt {
	var out []result.EndedAt
	for k, e := range m {
		out = append(out, result.EndedAt{Batch: k.Batch, Connections: k.Connections, Ended: e})
	}
	slices.SortFunc(out, func(a, b result.EndedAt) int {
		if a.Batch != b.Batch {
			return a.Batch - b.Batch
		}
		return a.Connections - b.Connections
	})
	return out
}

// windowsRecord is how the blocks' windows were chosen, for the result.
func windowsRecord(z *schedule.Sizing) *result.WindowsRecord {
	w := &result.WindowsRecord{WindowNs: int64(z.Window.Duration), WarmupNs: int64(z.Window.Warmup), Sized: z.Sized, Reason: z.Reason,
		NoiseAt1sPct: 100 * math.Sqrt(z.A), DriftPct2PerS: 1e4 * z.K}
	for _, c := range z.Candidates {
		w.Candidates = append(w.Candidates, result.WindowCandidate{WindowNs: int64(c.Window.Duration), WarmupNs: int64(c.Window.Warmup), RelativeMDC: c.Relative})
	}
	return w
}
