package harness

import (
	"strings"

	"github.com/ceiling-bench/ceiling/harness/plancost"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

// cost is p's groups as harness/plancost reads them.
func (p *Plan) cost() plancost.Sweep {
	return plancost.Sweep{CPUs: p.CPUs, Schedule: p.Schedule, Point: p.Point, Compare: p.Compare, Fault: p.Fault, TwoArm: p.TwoArm(),
		Known: p.knownCosts()}
}

// knownCosts are the arms' boot and stop costs known before anything
// boots: SERVER_COSTS for both, else each target file's costs. An
// external server costs nothing to boot or stop.
func (p *Plan) knownCosts() schedule.Costs {
	var c schedule.Costs
	if sc := p.Compare.ServerCosts; !sc.IsZero() {
		a := schedule.ArmCost{Ready: sc.Ready, Stop: sc.Stop, Known: true}
		return schedule.Costs{Base: a, Head: a, Source: schedule.CostsGiven}
	}
	arm := func(t *target.Spec) schedule.ArmCost {
		if t == nil {
			return schedule.ArmCost{}
		}
		if t.External {
			return schedule.ArmCost{Known: true}
		}
		r, s, ok := t.BootCosts()
		return schedule.ArmCost{Ready: r, Stop: s, Known: ok}
	}
	if p.targeted {
		c.Head = arm(&p.Target)
	}
	c.Base = arm(p.BaseTarget)
	if c.Base.Known || c.Head.Known {
		c.Source = schedule.CostsTarget
	}
	return c
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
