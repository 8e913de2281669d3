// Package plancost is what a sweep's plan costs before it runs: its
// points and its load (each point's warm-up and window) as the plan line
// states them, a two-arm sweep's schedule and its COMPARE_BUDGET settled
// into blocks, and the ALLOW_LONG limit. It is arithmetic over the
// knobs' groups, with no clock, process or file: the harness's Plan
// hands it its groups (Sweep) and keeps what it settles.
package plancost

import (
	"fmt"
	"math"
	"time"

	"github.com/ceiling-bench/ceiling/harness/duet"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/result"
)

// Sweep is what a plan's cost depends on: the knobs' groups of a
// harness.Plan, and whether it is a two-arm sweep (BASE_TARGET).
type Sweep struct {
	CPUs     knob.CPUs
	Schedule knob.Schedule
	Point    knob.Point
	Compare  knob.Compare
	Fault    knob.Fault
	TwoArm   bool
}

// Planned is what a plan holds before it runs, as its plan line states it
// and at most: the points, and their load (each point's warm-up plus
// window; boot and stop come on top). At most counts what the sweep may
// add as it goes: a two-arm sweep's re-run blocks (up to twice
// COMPARE_REPS per compared rung). A figure that would not fit in a
// time.Duration is math.MaxInt64, never a wrapped one.
type Planned struct {
	Points, MaxPoints int
	Load, MaxLoad     time.Duration
	// Parts says what the points are, for the plan line.
	Parts string
}

// Planned counts p's points and load (Planned).
func (p Sweep) Planned() Planned {
	o := &p.Schedule
	per := AddDur(p.Point.Warmup, p.Point.Duration)
	order := len(schedule.Order(o.BatchLadder, o.ConnsLadder, o.Reps))
	if p.TwoArm {
		first := schedule.NewTwoArm(p.TwoArmPlan(schedule.Order(o.BatchLadder, o.ConnsLadder, o.Reps))).FirstPass()
		compared := 2 * p.Compare.Reps * len(o.BatchLadder)
		if p.Headline() {
			compared = 2 * p.Compare.Reps
			most := AddDur(MulDur(first, per), MulDur(compared, AddDur(p.Compare.Warmup, p.Compare.Duration)))
			parts := fmt.Sprintf("a first pass of %d at most, both arms (batch %d's rungs searched, every other batch once at the rung found); then up to %d blocks at that rung",
				first, o.HeadlineBatch, p.Compare.Reps)
			if p.Compare.Budget > 0 {
				parts += fmt.Sprintf(", within COMPARE_BUDGET %s", p.Compare.Budget)
			}
			return Planned{Points: first + compared, MaxPoints: first + 2*compared, Load: most, MaxLoad: most, Parts: parts}
		}
		perCompare := AddDur(p.Compare.Warmup, p.Compare.Duration)
		return Planned{
			Points: first + compared, MaxPoints: first + 2*compared,
			Load:    AddDur(MulDur(first, per), MulDur(compared, perCompare)),
			MaxLoad: AddDur(MulDur(first, per), MulDur(2*compared, perCompare)),
			Parts:   fmt.Sprintf("a first pass of %d, both arms; then %d repeats per arm at one compared point per batch", first, p.Compare.Reps),
		}
	}
	n, how, extra := order, "on the ladder", "1 A-A repeat"
	if o.Search == knob.SearchBisect {
		n, how = schedule.SearchTotal(o.BatchLadder, o.ConnsLadder, o.Reps), "at most, chosen by bisection"
	}
	total := n + 1 // the A-A repeat
	if o.HeadroomProbe > 0 {
		total++
		extra += ", 1 headroom probe"
	}
	if !p.Fault.IsZero() {
		total++
		extra += ", 1 resilience point (FAULT " + p.Fault.String() + ")"
	}
	load := MulDur(total, per)
	return Planned{Points: total, MaxPoints: total, Load: load, MaxLoad: load,
		Parts: fmt.Sprintf("%d %s, %s", n, how, extra)}
}

// TwoArmPlan is the schedule of p's two-arm sweep, order its first
// pass's keys (COMPARE_SCOPE=curve).
func (p Sweep) TwoArmPlan(order []result.PointKey) schedule.TwoArmPlan {
	c, o := p.Compare, &p.Schedule
	tp := schedule.TwoArmPlan{Batches: o.BatchLadder, Order: order, Reps: c.Reps, Alpha: c.Alpha, Stop: c.Stop,
		Scope: c.Scope, HeadlineBatch: o.HeadlineBatch, Ladder: o.ConnsLadder(o.HeadlineBatch), Prefer: c.Prefer}
	if p.Headline() && c.Budget > 0 {
		// Lost blocks are run again while the budget lasts (up to
		// MaxBlocks(Reps)): the budget, not a count, ends them.
		tp.Budget, tp.BlockCost = c.Budget, p.BlockCost()
	}
	return tp
}

// Headline reports whether the plan is a two-arm sweep that compares the
// headline rung only (COMPARE_SCOPE=headline).
func (p Sweep) Headline() bool { return p.TwoArm && p.Compare.Scope == result.ScopeHeadline }

// PointOverhead is a point's time beside its warm-up and window: boot,
// connect, collect and stop (docs/sweep.md, "How long it takes"), what a
// budget plans with.
const PointOverhead = 700 * time.Millisecond

// PointCost is one point's planned time with its warm-up and window.
func PointCost(warmup, window time.Duration) time.Duration {
	return AddDur(AddDur(warmup, window), PointOverhead)
}

// BlockCost is a compare block's planned time: its two repeats, or one
// in a duet (both at once).
func (p Sweep) BlockCost() time.Duration {
	c := PointCost(p.Compare.Warmup, p.Compare.Duration)
	if duet.Halves(p.CPUs, p.Compare.Mode) != nil {
		return c
	}
	return MulDur(2, c)
}

// SettleBudget plans a COMPARE_SCOPE=headline sweep's blocks from
// COMPARE_BUDGET: the blocks that fit once the first pass (at its most
// points) is over become COMPARE_REPS, the clean blocks planned (the
// sequential design's last look); a lost block is run again while the
// budget lasts. A budget that cannot fit the first pass and the
// blocks the paired test needs (stats.MinPairs) is refused, saying what
// it would need.
func (p *Sweep) SettleBudget() error {
	c := &p.Compare
	if !p.Headline() || c.Budget <= 0 {
		return nil
	}
	points := schedule.NewTwoArm(p.TwoArmPlan(nil)).FirstPass()
	per := PointCost(p.Point.Warmup, p.Point.Duration)
	if duet.Halves(p.CPUs, c.Mode) != nil {
		points = (points + 1) / 2 // a duet runs a block's two points at once
	}
	first, block := MulDur(points, per), p.BlockCost()
	need := stats.MinPairs(c.Alpha)
	blocks := 0
	if c.Budget > first {
		blocks = int((c.Budget - first) / block)
	}
	if blocks < need {
		return fmt.Errorf("COMPARE_BUDGET (--compare-budget) %s: the first pass (up to %d points of %s) and the %d blocks the paired test needs at ALPHA %g (%s each) take %s; "+
			"raise COMPARE_BUDGET, shorten DURATION, WARMUP, COMPARE_DURATION or COMPARE_WARMUP, or set COMPARE_BUDGET=0 to run COMPARE_REPS blocks",
			c.Budget, points, per, need, c.Alpha, block, AddDur(first, MulDur(need, block)).Round(time.Second))
	}
	c.Reps = min(blocks, knob.MaxCompareReps)
	return nil
}

// CheckPlanned refuses a plan that may hold more than knob.MaxPlannedLoad
// of load, unless ALLOW_LONG: only a CI job's timeout would end it.
func (p Sweep) CheckPlanned(allowLong bool) error {
	pl := p.Planned()
	if allowLong || pl.MaxLoad <= knob.MaxPlannedLoad {
		return nil
	}
	load := "more than a time.Duration holds"
	if pl.MaxLoad < math.MaxInt64 {
		load = fmt.Sprintf("%.1f hours", pl.MaxLoad.Hours())
	}
	return fmt.Errorf("ALLOW_LONG (--allow-long): the plan holds up to %d points and %s of load (each point's warm-up and window), above the limit of %.0f hours: "+
		"fewer rungs (BATCH_LADDER, CONNS_LADDER_<batch>), fewer REPS or COMPARE_REPS, shorter DURATION, WARMUP, COMPARE_DURATION or COMPARE_WARMUP; or ALLOW_LONG=1 to run it",
		pl.MaxPoints, load, knob.MaxPlannedLoad.Hours())
}

// MulDur is n × d, or math.MaxInt64 where that would not fit (n, d >= 0).
func MulDur(n int, d time.Duration) time.Duration {
	if n <= 0 || d <= 0 {
		return 0
	}
	if d > math.MaxInt64/time.Duration(n) {
		return math.MaxInt64
	}
	return time.Duration(n) * d
}

// AddDur is a + b, or math.MaxInt64 where that would not fit (a, b >= 0).
func AddDur(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
