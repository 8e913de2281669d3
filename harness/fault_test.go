package harness

import (
	"slices"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/load"
)

// FAULT asks the scenario registry which scenarios can take a fault, and
// what to tell the generator: fanout, with --split-at at the fault's
// fraction; a scenario without a FaultDef is refused naming the ones
// that have one.
func TestFaultAsksTheScenarioRegistry(t *testing.T) {
	if got := load.FaultScenarios(); !slices.Equal(got, []string{"fanout"}) {
		t.Errorf("FaultScenarios = %q, want [fanout]", got)
	}
	if d := faultDef("fanout"); d == nil || !slices.Equal(d.SplitArgs(0.25), []string{"--split-at", "0.25"}) {
		t.Errorf("fanout's FaultDef = %+v, want --split-at 0.25", d)
	}
	if faultDef("echo") != nil || faultDef("no-such-scenario") != nil {
		t.Error("echo (or an unknown scenario) takes a fault")
	}
	var p draft
	p.Fault = knob.Fault{Kind: knob.FaultStop, Server: "n2", Fraction: 0.5}
	p.Scenario = "stream"
	const want = "FAULT (--fault) stop:n2@0.5: needs SCENARIO=fanout, which accounts each server's deliveries before and after the fault (SCENARIO is stream)"
	if err := p.checkFault(); err == nil || err.Error() != want {
		t.Errorf("checkFault = %v, want %q", err, want)
	}
}
