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

// connArgs are the scenario's flags for a point of pt, its generator
// side of agents agents (0: the one generator); none for another
// scenario.
func connArgs(pt knob.Point, agents int) []string {
	if pt.Scenario != knob.ConnectionsScenario {
		return nil
	}
	ramp := pt.ConnRamp / float64(max(1, agents)) // each agent opens its share
	return []string{"--ramp", strconv.FormatFloat(ramp, 'g', -1, 64), "--send-interval", pt.ConnInterval.String()}
}

// rampTime is how long a rung of conns takes to open at CONN_RAMP: 0
// for another scenario, or without a ramp.
func rampTime(pt knob.Point, conns int) time.Duration {
	if pt.Scenario != knob.ConnectionsScenario || pt.ConnRamp <= 0 {
		return 0
	}
	return time.Duration(float64(conns) / pt.ConnRamp * float64(time.Second))
}
