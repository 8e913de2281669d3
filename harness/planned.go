package harness

import (
	"strings"

	"github.com/ceiling-bench/ceiling/harness/plancost"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/result"
)

// cost is p's groups as harness/plancost reads them.
func (p *Plan) cost() plancost.Sweep {
	return plancost.Sweep{CPUs: p.CPUs, Schedule: p.Schedule, Point: p.Point, Compare: p.Compare, Fault: p.Fault, TwoArm: p.TwoArm()}
}

// Planned counts p's points and load, as its plan line states them
// (plancost.Planned).
func (p *Plan) Planned() plancost.Planned { return p.cost().Planned() }

// twoArmPlan is the schedule of p's two-arm sweep, order its first
// pass's keys (COMPARE_SCOPE=curve).
func (p *Plan) twoArmPlan(order []result.PointKey) schedule.TwoArmPlan {
	return p.cost().TwoArmPlan(order)
}

// Headline reports whether the plan is a two-arm sweep that compares the
// headline rung only (COMPARE_SCOPE=headline).
func (p *Plan) Headline() bool { return p.cost().Headline() }

// TwoArm reports whether the plan is a two-arm sweep (BASE_TARGET).
func (p *Plan) TwoArm() bool {
	return p.BaseTarget != nil || strings.TrimSpace(p.Compare.BaseTargetFile) != ""
}

// settleBudget turns COMPARE_BUDGET into p's COMPARE_REPS
// (plancost.Sweep.SettleBudget).
func settleBudget(p *Plan) error {
	s := p.cost()
	if err := s.SettleBudget(); err != nil {
		return err
	}
	p.Compare.Reps = s.Compare.Reps
	return nil
}
