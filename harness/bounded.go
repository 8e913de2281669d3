package harness

import (
	"github.com/ceiling-bench/ceiling/harness/bounds"
)

// checkBounds is the plan's one check of its bounds, once every layer
// has spoken (harness/bounds: rungs, windows, timeouts and graces,
// whichever knob or file set them), then of its points and hours
// (plancost, ALLOW_LONG). Resolve and ResolveKnobs end with it.
func (p *Plan) checkBounds(allowLong bool) error {
	b := bounds.Plan{Schedule: p.Schedule, Point: p.Point, Compare: p.Compare, Agents: p.Agents, TwoArm: p.TwoArm()}
	if p.targeted {
		ready, grace := p.Target.Durations()
		b.Targets = append(b.Targets, bounds.Target{Knob: "TARGET", File: p.Files.TargetFile, Ready: ready, StopGrace: grace})
	}
	if p.BaseTarget != nil {
		ready, grace := p.BaseTarget.Durations()
		b.Targets = append(b.Targets, bounds.Target{Knob: "BASE_TARGET", File: p.Compare.BaseTargetFile, Ready: ready, StopGrace: grace})
	}
	if err := bounds.Check(b); err != nil {
		return err
	}
	return p.cost().CheckPlanned(allowLong)
}
