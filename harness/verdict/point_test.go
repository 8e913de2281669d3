package verdict

import (
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// Point: clean asks the generator's summary for every connection, none
// lost, no errors, not saturated and a throughput; a failure is a failed
// point, whoever reported it.
func TestPointClean(t *testing.T) {
	one := int64(1)
	tests := []struct {
		name string
		sum  load.Summary
		want bool
	}{
		{"clean", load.Summary{ConnectionsRequested: 8, ConnectionsOpen: 8, ThroughputPerS: 1}, true},
		{"not reported", load.Summary{ThroughputPerS: 1}, true},
		{"nothing measured", load.Summary{}, false},
		// Each unclean case has a throughput, so only its own flaw can make
		// it unclean.
		{"errors", load.Summary{Errors: 1, ThroughputPerS: 1}, false},
		{"saturated", load.Summary{Saturated: true, ThroughputPerS: 1}, false},
		{"short of connections", load.Summary{ConnectionsRequested: 8, ConnectionsOpen: 7, ThroughputPerS: 1}, false},
		{"dropped", load.Summary{Dropped: &one, ThroughputPerS: 1}, false},
	}
	for _, tt := range tests {
		p := Point(1, result.RoleSweep, result.PointKey{Batch: 10, Connections: 8}, Outcome{Load: &load.Result{Summary: tt.sum}}, DefaultThresholds)
		if p.Clean != tt.want || p.Status != result.StatusOK {
			t.Errorf("%s: clean %v status %s, want clean %v", tt.name, p.Clean, p.Status, tt.want)
		}
	}
	p := Point(2, result.RoleSweep, result.PointKey{Batch: 10, Connections: 8}, Outcome{FailReason: "server exited", LogTail: "bye"}, DefaultThresholds)
	if p.Status != result.StatusFailed || p.Verdict != result.VerdictFailed || p.Clean || p.LogTail != "bye" {
		t.Errorf("failed outcome became %+v", p)
	}
	// A generator that says it could not measure (and still exited 0, as
	// another GENERATOR may) fails the point, whatever figures it wrote.
	p = Point(3, result.RoleSweep, result.PointKey{Batch: 10, Connections: 8},
		Outcome{Load: &load.Result{Summary: load.Summary{ThroughputPerS: 5, Failure: "no connection opened"}}}, DefaultThresholds)
	if p.Status != result.StatusFailed || p.Clean || p.ThroughputPerS != 0 || !strings.Contains(p.FailReason, "no connection opened") {
		t.Errorf("generator-reported failure became %+v", p)
	}
}

// Objective evaluates the paths on the generator's summary, blocks
// included.
func TestObjectiveReadsScenarioBlocks(t *testing.T) {
	var s load.Summary
	s.Latency.P99 = 5e6
	if err := s.SetBlock("kinds", map[string]any{"op": map[string]any{"delivered_pct": 99.5}}); err != nil {
		t.Fatal(err)
	}
	p := result.Point{Status: result.StatusOK}
	Objective(&p, "latency_ns.p99 <= 10ms, kinds.op.delivered_pct >= 99.9", Outcome{Load: &load.Result{Summary: s}})
	if p.Objective == nil || p.Objective.Met || !strings.Contains(p.Objective.Reasons(), "kinds.op.delivered_pct is 99.5") {
		t.Fatalf("objective %+v", p.Objective)
	}
	if !p.Objective.Conditions[0].Met {
		t.Errorf("p99 condition: %+v", p.Objective.Conditions[0])
	}
}

func TestObjectiveReadsThePointsMemory(t *testing.T) {
	pc := 24_000.0
	var s load.Summary
	s.Latency.P99 = 5e6
	p := result.Point{Status: result.StatusOK, ServerMemory: &result.Memory{Measure: result.MemoryPSS, PerConnectionBytes: &pc}}
	out := Outcome{Load: &load.Result{Summary: s}}
	Objective(&p, "latency_ns.p99 <= 10ms, server_memory.per_connection_bytes <= 20000", out)
	if p.Objective == nil || p.Objective.Met || !strings.Contains(p.Objective.Reasons(), "server_memory.per_connection_bytes is 24000") {
		t.Fatalf("over the memory bound: %+v", p.Objective)
	}
	Objective(&p, "server_memory.per_connection_bytes <= 30000", out)
	if !p.Objective.Met {
		t.Errorf("within the bound: %+v", p.Objective)
	}
	// No figure per connection (no baseline): not met, never passed.
	p.ServerMemory.PerConnectionBytes = nil
	Objective(&p, "server_memory.per_connection_bytes <= 30000", out)
	if p.Objective.Met || !strings.Contains(p.Objective.Reasons(), "not a number") {
		t.Errorf("no figure: %+v", p.Objective)
	}
	p.ServerMemory = nil
	Objective(&p, "server_memory.per_connection_bytes <= 30000", out)
	if p.Objective.Met || !strings.Contains(p.Objective.Reasons(), "not in the point's summary") {
		t.Errorf("no memory read: %+v", p.Objective)
	}
}
