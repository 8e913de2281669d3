package harness

import (
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/internal/objective"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// With an objective, a batch's ceiling is its clean point with the most
// connections that meets it, whatever a heavier point's throughput; a
// point that misses it, or one not evaluated, is never the ceiling.
func TestObjectiveCeilingIsTheMostLoadThatMeetsIt(t *testing.T) {
	met := func(p result.Point, ok bool) result.Point {
		p.Objective = &objective.Result{Met: ok}
		return p
	}
	r := &result.Result{Config: result.Config{BatchLadder: []int{1}, HeadlineBatch: 1, Objective: "latency_ns.p99 <= 100ms",
		ConnsLadders: map[string][]int{"1": {200, 1000, 3000}}}}
	r.Curve = []result.Point{
		met(pt(result.RoleSweep, 1, 200, 4000, result.VerdictNeither), true),
		met(pt(result.RoleSweep, 1, 1000, 20000, result.VerdictNeither), true),
		met(pt(result.RoleSweep, 1, 3000, 50000, result.VerdictServerSaturated), false), // most throughput, misses it
	}
	r.Summarize()
	if !r.Headline.Clean || r.Headline.Connections != 1000 || r.Headline.ThroughputPerS != 20000 {
		t.Fatalf("headline %+v, want the 1000-connection point", r.Headline)
	}
	// Without the objective the same curve peaks at 3000.
	r.Config.Objective = ""
	r.Summarize()
	if r.Headline.Connections != 3000 {
		t.Fatalf("without objective: headline %+v", r.Headline)
	}
	// None meets it: no ceiling, and the warning says why.
	r.Config.Objective = "latency_ns.p99 <= 1ms"
	for i := range r.Curve {
		r.Curve[i].Objective = &objective.Result{Met: false}
	}
	r.Summarize()
	if r.Headline.Clean || !strings.Contains(strings.Join(r.Warnings, "\n"), "no clean point that meets the objective") {
		t.Fatalf("none met: headline %+v warnings %q", r.Headline, r.Warnings)
	}
}

// SCENARIO=rooms is the scenario file benchmark/scenarios/rooms.json, run
// by the scenario that reads files; a file with another scenario, or a
// name that is neither, is refused by name.
func TestScenarioNamesAFile(t *testing.T) {
	t.Chdir("..")
	o := knob.DefaultOptions(true)
	o.Scenario = "rooms"
	if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err != nil {
		t.Fatal(err)
	}
	if o.Scenario != "script" || o.ScenarioFile != "benchmark/scenarios/rooms.json" || !o.BatchLadder.Contains(o.HeadlineBatch) {
		t.Fatalf("scenario %q file %q ladder %v headline %d", o.Scenario, o.ScenarioFile, o.BatchLadder, o.HeadlineBatch)
	}
	o = knob.DefaultOptions(true)
	o.Scenario, o.ScenarioFile = "fanout", "benchmark/scenarios/rooms.json"
	if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), "SCENARIO_FILE (--scenario-file): read by SCENARIO=script, not fanout") {
		t.Errorf("file with fanout: %v", err)
	}
	o = knob.DefaultOptions(true)
	o.Scenario = "roomz"
	if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), `"roomz" is not a scenario`) {
		t.Errorf("unknown: %v", err)
	}
}
