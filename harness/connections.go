package harness

import (
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
)

// SCENARIO=connections's part of a point (docs/sweep.md, "The
// connection-scale sweep"): its generator flags from CONN_RAMP and
// CONN_INTERVAL, the ramp split over the agents, and the time its ramp
// takes, which the wait for the marker and for the agents grows by. The
// harness names the scenario's flags here as it names echo's
// --eager-reads (IO_PATTERN): it imports no scenario.

// connArgs are the scenario's flags for a point; none for another
// scenario.
func (pr *ProcRunner) connArgs() []string {
	pt := pr.o.Point
	if pt.Scenario != knob.ConnectionsScenario {
		return nil
	}
	ramp := pt.ConnRamp / float64(max(1, pr.o.Agents.Count)) // each agent opens its share
	return []string{"--ramp", strconv.FormatFloat(ramp, 'g', -1, 64), "--send-interval", pt.ConnInterval.String()}
}

// rampTime is how long a rung of conns takes to open at CONN_RAMP: 0
// for another scenario, or without a ramp.
func (pr *ProcRunner) rampTime(conns int) time.Duration {
	pt := pr.o.Point
	if pt.Scenario != knob.ConnectionsScenario || pt.ConnRamp <= 0 {
		return 0
	}
	return time.Duration(float64(conns) / pt.ConnRamp * float64(time.Second))
}
