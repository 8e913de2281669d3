package harness

import (
	"context"
	"io"
	"slices"
	"sync"
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
// rest on two runners or two days.
//
//  1. First pass: every (batch, connections) of the ladders once per arm,
//     short points (DURATION, WARMUP), the arms alternating which goes
//     first from one key to the next, in the usual interleaved order. It
//     finds each batch size's rung to compare (schedule.CompareRungs).
//  2. Compare phase: COMPARE_REPS repeats per arm at those rungs
//     (COMPARE_DURATION, COMPARE_WARMUP), in schedule.CompareSchedule's order: the
//     arms innermost in a balanced ABBA order, the compared points
//     round-robin, so a drift of the machine spreads over both arms and
//     every batch size instead of landing on one.
//
// The curve holds both arms' points; Summarize gives the head arm's
// ceilings and headline, and the comparison (DecideComparison). The
// headline gates; the other compared points are reported.
//
// Which block runs next is package schedule's (TwoArm.Next); this file
// runs the blocks, in a duet on the two halves at once.

// SweepTwoArm runs a two-arm sweep with runner (which boots the base for
// ArmBase points and the head otherwise), filling r as Sweep does. Its
// errors are Sweep's: ErrInterrupted with a partial r, ErrNoCleanHeadline
// when the head arm has no clean point at the headline batch (the
// comparison cannot be made: exit 1).
func SweepTwoArm(ctx context.Context, o *Plan, runner PointRunner, r *result.Result, w io.Writer, th verdict.Thresholds) error {
	r.SchemaVersion = result.SchemaVersion
	r.Config = ConfigOf(o)
	r.Config.CompareReps, r.Config.Alpha, r.Config.CompareStop = o.Compare.Reps, o.Compare.Alpha, o.Compare.Stop
	r.Config.CompareDurationNs, r.Config.CompareWarmupNs = int64(o.Compare.Duration), int64(o.Compare.Warmup)
	r.Config.CompareMode = knob.ModeInterleaved
	if duet.Halves(o.CPUs, o.Compare.Mode) != nil {
		r.Config.CompareMode = knob.ModeDuet
	}
	r.Regime = result.Regime(o.Point.Scenario, o.Schedule.HeadlineBatch, o.Point.RecordSize, len(o.CPUs.Server), len(o.CPUs.Generator))
	r.Notes = slices.Clone(o.Notes)
	r.Config.CompareScope = o.Compare.Scope
	s := schedule.NewTwoArm(o.twoArmPlan(r.Config.Order))
	if o.Headline() {
		r.Config.Order = nil // the first pass's keys, as the search runs them
		if o.Compare.Budget > 0 {
			r.Config.CompareBudgetNs = int64(o.Compare.Budget)
		}
	}
	// The compare phase's size is known after the first pass; until
	// then count one compared rung per batch.
	planned := o.Planned()
	total := planned.Points
	progress.Plan(w, total, planned.Parts, planned.Load)
	start := time.Now()

	halves := duet.Halves(o.CPUs, o.Compare.Mode)
	// admitted puts a point's outcome in the curve, with its duet half.
	admitted := func(i int, pt schedule.Point, out verdict.Outcome, half *duet.Half) (result.Point, bool) {
		p, ok := admit(r, i, pt.Role, pt.Key, pt.Arm, out, th)
		if !ok {
			return p, false
		}
		if half != nil {
			p.Half = half.Name
			r.Curve[len(r.Curve)-1].Half = half.Name
		}
		if pt.Step > 0 { // a search point (COMPARE_SCOPE=headline's first pass)
			p.SearchStep, p.SearchPhase, p.SearchReason = pt.Step, pt.Phase, pt.Reason
			r.Curve[len(r.Curve)-1] = p
		}
		if p.Status != result.StatusOK {
			progress.Failed(w, i, total, pt.Arm, p.FailReason)
		}
		return p, true
	}
	spec := func(i int, pt schedule.Point, window, warmup time.Duration) PointSpec {
		return PointSpec{Index: i, Role: pt.Role, Key: pt.Key, Arm: pt.Arm, Duration: window, Warmup: warmup}
	}
	// pair runs a block: a then b, or in a duet a on half a and b on
	// half b at the same time; what each measured, as the schedule reads
	// it (observeSearch), and whether the context ended.
	var refused *result.Point // a point whose preflight was refused: the sweep stops
	pair := func(a, b schedule.Point, window, warmup time.Duration) (obs []schedule.Observed, ended bool) {
		pts := [2]schedule.Point{a, b}
		var outs [2]verdict.Outcome
		var ps [2]result.Point
		var oks [2]bool
		i := len(r.Curve) + 1
		if halves == nil {
			for k, pt := range pts {
				if k == 1 && ctx.Err() != nil {
					return nil, true
				}
				i = len(r.Curve) + 1
				progress.Arm(w, i, total, pt, "", time.Since(start))
				outs[k] = runner.RunPoint(ctx, spec(i, pt, window, warmup))
				ps[k], oks[k] = admitted(i, pt, outs[k], nil)
				if oks[k] && outs[k].Refused {
					refused = &ps[k] // its partner would be refused too
					return nil, true
				}
			}
		} else {
			gate := duet.NewGate()
			specs := [2]PointSpec{spec(i, a, window, warmup), spec(i+1, b, window, warmup)}
			var wg sync.WaitGroup
			for k := range specs {
				specs[k].Half, specs[k].Gate = halves[k], gate
				progress.Arm(w, i+k, total, pts[k], halves[k].Name, time.Since(start))
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[k] = runner.RunPoint(ctx, specs[k])
				}()
			}
			wg.Wait()
			ps[0], oks[0] = admitted(i, a, outs[0], halves[0])
			ps[1], oks[1] = admitted(len(r.Curve)+1, b, outs[1], halves[1])
		}
		for k := range outs {
			if oks[k] && outs[k].Refused && refused == nil {
				refused = &ps[k]
			}
		}
		if ctx.Err() != nil || refused != nil {
			return nil, true
		}
		at := time.Since(start)
		for k, pt := range pts {
			ob := observeSearch(pt, ps[k], outs[k], oks[k], r.Headline)
			ob.Elapsed = at
			obs = append(obs, ob)
		}
		return obs, false
	}
	var last []schedule.Observed
	announced := false
	for ctx.Err() == nil {
		blk, more := s.Next(last...)
		if rungs, skipped, ok := s.Rungs(); ok && !announced {
			// The first pass is over: its rungs are compared.
			announced = true
			r.Summarize()
			for _, w := range skipped {
				r.Warn(w)
			}
			total = len(r.Curve) + 2*o.Compare.Reps*len(rungs)
		}
		if !more {
			break
		}
		a, b := blk[0], blk[1]
		if a.Role == result.RoleSweep && o.Headline() {
			r.Config.Order = append(r.Config.Order, a.Key)
		}
		window, warmup := time.Duration(0), time.Duration(0)
		if a.Role == result.RoleCompare {
			window, warmup = o.Compare.Duration, o.Compare.Warmup
			if a.Key.Rep >= o.Compare.Reps {
				total += 2 // a block run again
			}
		}
		var ended bool
		if last, ended = pair(a, b, window, warmup); ended {
			break
		}
	}
	r.Notes = append(r.Notes, s.Notes()...)
	if refused != nil {
		return refusedStop(r, *refused)
	}
	r.Summarize()
	return finish(ctx, r, total)
}
