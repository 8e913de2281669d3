package harness

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/schedule"
)

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
func (p *Plan) Planned() Planned {
	o := &p.Schedule
	per := addDur(p.Point.Warmup, p.Point.Duration)
	order := len(schedule.Order(o.BatchLadder, o.ConnsLadder, o.Reps))
	if p.TwoArm() {
		first := schedule.NewTwoArm(schedule.TwoArmPlan{Order: ConfigOf(p).Order}).FirstPass()
		compared := 2 * p.Compare.Reps * len(o.BatchLadder)
		perCompare := addDur(p.Compare.Warmup, p.Compare.Duration)
		return Planned{
			Points: first + compared, MaxPoints: first + 2*compared,
			Load:    addDur(mulDur(first, per), mulDur(compared, perCompare)),
			MaxLoad: addDur(mulDur(first, per), mulDur(2*compared, perCompare)),
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
	load := mulDur(total, per)
	return Planned{Points: total, MaxPoints: total, Load: load, MaxLoad: load,
		Parts: fmt.Sprintf("%d %s, %s", n, how, extra)}
}

// TwoArm reports whether the plan is a two-arm sweep (BASE_TARGET).
func (p *Plan) TwoArm() bool {
	return p.BaseTarget != nil || strings.TrimSpace(p.Compare.BaseTargetFile) != ""
}

// checkPlanned refuses a plan that may hold more than knob.MaxPlannedLoad
// of load, unless ALLOW_LONG: only a CI job's timeout would end it.
func checkPlanned(p *Plan, allowLong bool) error {
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

// mulDur is n × d, or math.MaxInt64 where that would not fit (n, d >= 0).
func mulDur(n int, d time.Duration) time.Duration {
	if n <= 0 || d <= 0 {
		return 0
	}
	if d > math.MaxInt64/time.Duration(n) {
		return math.MaxInt64
	}
	return time.Duration(n) * d
}

// addDur is a + b, or math.MaxInt64 where that would not fit (a, b >= 0).
func addDur(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
