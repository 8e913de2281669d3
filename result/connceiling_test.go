package result

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/objective"
)

// connPoint is a connection-scale sweep's rung: clean, meeting the
// objective or not, with the server's peak memory over a 10 MB baseline
// at 17 KB a connection plus 4 MB for serving any load.
func connPoint(i int, role string, conns int, met bool) Point {
	base := uint64(10_000_000)
	peak := base + 4_000_000 + uint64(conns)*17_000
	pc := (float64(peak) - float64(base)) / float64(conns)
	gpc := 2900.0
	open, _ := json.Marshal(map[string]any{"open_ns": int64(conns) * 200_000})
	return Point{Index: i, Role: role, Batch: 1, Connections: conns, Status: StatusOK, Clean: true, ThroughputPerS: float64(conns) / 10,
		Verdict: VerdictNeither, Objective: &objective.Result{Met: met},
		ServerCPU:       CPUStats{Samples: 40, MeanCores: 0.02 * float64(conns) / 1000},
		ServerMemory:    &Memory{Measure: MemoryPSS, PeakBytes: peak, BaselineBytes: &base, Connections: conns, PerConnectionBytes: &pc},
		GeneratorMemory: &Memory{Measure: MemoryPSS, PerConnectionBytes: &gpc},
		Scenario:        map[string]json.RawMessage{ScenarioConnections + "_agent_0": open, ScenarioConnections + "_agent_1": json.RawMessage(`{"open_ns": 1}`)}}
}

func connResult() *Result {
	r := &Result{Config: Config{Scenario: ScenarioConnections, BatchLadder: []int{1}, HeadlineBatch: 1, Objective: "latency_ns.p99 <= 50ms",
		ConnsLadders: map[string][]int{"1": {1000, 5000, 20000, 50000}}}}
	r.Curve = []Point{connPoint(0, RoleSweep, 1000, true), connPoint(1, RoleSweep, 5000, true), connPoint(2, RoleSweep, 20000, true),
		connPoint(3, RoleSweep, 50000, false), connPoint(4, RoleAARepeat, 20000, true)}
	pc := 17_300.0 // the repeat read 17.3 KB where the ceiling read 17.2 KB
	r.Curve[4].ServerMemory.PerConnectionBytes = &pc
	r.Summarize()
	return r
}

func TestConnectionCeilingIsTheMostHeldWithinTheObjective(t *testing.T) {
	r := connResult()
	cc := r.ConnectionCeiling
	if cc == nil || !cc.Found || cc.Connections != 20000 || cc.Index != 2 || cc.AtLadderTop {
		t.Fatalf("ceiling %+v: want the 20,000 rung (50,000 missed the objective)", cc)
	}
	if m := *cc.MarginalServerBytes; m != 17_000 {
		t.Errorf("marginal %v: between 5,000 and 20,000 each connection costs 17,000 B (the fixed 4 MB drops out)", m)
	}
	if pc, _ := cc.ServerMemory.PerConnection(); pc != 17_200 {
		t.Errorf("per connection %v: the slope from the baseline, 4 MB of load included", pc)
	}
	if n := *cc.MemoryNoisePct; n < 0.58 || n > 0.59 {
		t.Errorf("memory noise %v%%: |17300 - 17200| / 17200", n)
	}
	if cc.OpenNs != 4_000_000_000 || cc.ServerCores != 0.4 {
		t.Errorf("open %v (the slowest agent's), cores %v", cc.OpenNs, cc.ServerCores)
	}
	var b strings.Builder
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"headline: 20000 connections held (objective met, clean), p99", "per connection server 17.2 KB, generator 2.90 KB (pss), 17.0 KB between the top two rungs",
		"server CPU 0.40 cores with them held; opened in 4s, memory noise floor (A-A) 0.6%", "memory per connection, server/generator (pss"} {
		if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestConnectionCeilingNotFound(t *testing.T) {
	r := connResult()
	for i := range r.Curve {
		r.Curve[i].Objective.Met = false
	}
	r.Summarize()
	if cc := r.ConnectionCeiling; cc == nil || cc.Found || cc.Why == "" {
		t.Errorf("ceiling %+v: want none, and why", cc)
	}
	r.Config.Scenario = "echo"
	r.Summarize()
	if r.ConnectionCeiling != nil {
		t.Errorf("an echo sweep has a connection ceiling: %+v", r.ConnectionCeiling)
	}
}
