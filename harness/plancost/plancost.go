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
	// Known are the arms' boot and stop costs known before anything
	// boots (SERVER_COSTS, the target files' costs); Known false in an
	// arm's: the first block times them.
	Known schedule.Costs
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
				parts += fmt.Sprintf(", within COMPARE_BUDGET %s, planned again from the costs the first pass measures", p.Compare.Budget)
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
		Scope: c.Scope, HeadlineBatch: o.HeadlineBatch, Ladder: o.ConnsLadder(o.HeadlineBatch), Prefer: c.Prefer,
		Arms: c.Arms, RebootEvery: c.RebootEvery, Costs: p.Known,
		First:   schedule.Window{Duration: p.Point.Duration, Warmup: p.Point.Warmup},
		Compare: schedule.Window{Duration: c.Duration, Warmup: c.Warmup},
		Duet:    duet.Halves(p.CPUs, c.Mode) != nil, MaxReps: knob.MaxCompareReps}
	if c.Profile != knob.ProfileOff && c.Profile != "" {
		mode := c.Profile
		tp.WantsProfile = func(verdict string) bool { return knob.WantsProfile(mode, verdict) }
		tp.ProfileBlocks, tp.ReserveProfile = ProfileBlocks, mode == knob.ProfileOn
	}
	if p.Headline() && c.Budget > 0 {
		// The budget plans the blocks, and ends them; lost blocks are
		// run again while it lasts (up to MaxBlocks of those planned).
		// The first pass sizes their windows unless the knobs fixed
		// them.
		tp.Budget, tp.SizeWindows = c.Budget, !c.WindowsGiven
	}
	return tp
}

// Headline reports whether the plan is a two-arm sweep that compares the
// headline rung only (COMPARE_SCOPE=headline).
func (p Sweep) Headline() bool { return p.TwoArm && p.Compare.Scope == result.ScopeHeadline }

// SettleBudget plans a COMPARE_SCOPE=headline sweep's blocks from
// COMPARE_BUDGET before anything boots: the blocks that fit once the
// first pass (at its most points) is over, warm or fresh as COMPARE_ARMS
// would choose on the costs known (schedule.Costs: SERVER_COSTS, the
// target files', else refserver's assumed), become COMPARE_REPS, the
// plan's estimate; the schedule plans them again from what the first
// pass measured. A budget that cannot fit the first pass and the blocks
// the paired test needs (stats.MinPairs) on those costs is refused,
// saying what it would need.
func (p *Sweep) SettleBudget() error {
	c := &p.Compare
	if !p.Headline() || c.Budget <= 0 {
		return nil
	}
	tp := p.TwoArmPlan(nil)
	first := schedule.NewTwoArm(tp).FirstPass()
	warm := c.Arms == result.ArmsWarm && !tp.Duet
	costs := p.Known
	ahead := schedule.Ahead{FirstLeft: first, Turn: true}
	if c.Arms == result.ArmsAuto && costs.Base.Known && costs.Head.Known {
		warm, _ = costs.Choose(c.Budget, ahead, tp.First, tp.Compare, tp.Duet, c.RebootEvery)
	}
	need := stats.MinPairs(c.Alpha)
	blocks, needed := costs.Blocks(c.Budget, ahead, tp.First, tp.Compare, warm, tp.Duet, c.RebootEvery, need)
	if blocks < need {
		how := "fresh servers per point"
		if warm {
			how = "the servers kept up (warm)"
		}
		from := costs.Source
		if from == "" {
			from = schedule.CostsAssumed + ", refserver's"
		}
		return fmt.Errorf("COMPARE_BUDGET (--compare-budget) %s: the first pass (up to %d points) and the %d blocks the paired test needs at ALPHA %g take %s with %s (each server ready in %s and stopped in %s, %s); "+
			"raise COMPARE_BUDGET to %s, shorten DURATION, WARMUP, COMPARE_DURATION or COMPARE_WARMUP, or set COMPARE_BUDGET=0 to run COMPARE_REPS blocks",
			c.Budget, first, need, c.Alpha, needed.Round(time.Second), how, readyOf(costs), stopOf(costs), from, needed.Round(10*time.Second))
	}
	c.Reps = min(blocks, knob.MaxCompareReps)
	return nil
}

// ProfileBlocks is how many profiled blocks a two-arm sweep runs after
// its compared blocks when COMPARE_PROFILE asks (harness/cpuprof's rule
// needs two points per arm at least; three let one be lost).
const ProfileBlocks = 3

// PointOverhead is a fresh point's time beside its warm-up and window
// before anything was measured: the generator's start, connect and
// collect, and the server's boot and stop as refserver's are assumed
// (docs/sweep.md, "How long it takes").
const PointOverhead = schedule.DefaultOverhead + 2*schedule.DefaultBootCost

// readyOf and stopOf are the slower arm's boot and stop, as the plan
// assumes them.
func readyOf(c schedule.Costs) time.Duration { return c.Boot() }
func stopOf(c schedule.Costs) time.Duration  { return c.Stop() }

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
