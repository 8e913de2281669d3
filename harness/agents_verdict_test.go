package harness_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/load"
)

// TestAgentBehindCapsThePoint: one agent that fell behind makes the point
// generator-capped, named, even when the merged evidence would not.
func TestAgentBehindCapsThePoint(t *testing.T) {
	window := int64(time.Second)
	sum := load.Summary{Mode: "closed", MeasuredNs: window, ThroughputPerS: 1000, Messages: 1000, ConnectionsRequested: 2, ConnectionsOpen: 2}
	ok := &load.Result{Summary: sum, Generator: load.GeneratorStats{RunnableP99Ns: 10_000}}
	behind := &load.Result{Summary: sum, Generator: load.GeneratorStats{RunnableP99Ns: int64(5 * time.Millisecond), OSRunDelayNs: window / 3}}
	cpu := harness.CPUStats{Samples: 10, PinnedCores: 1, MeanCores: 0.95, FractionMean: 0.95, PinnedBusy: 0.95}
	srv := harness.CPUStats{Samples: 10, PinnedCores: 1, MeanCores: 0.3, FractionMean: 0.3, PinnedBusy: 0.3}
	out := harness.Outcome{
		Load:         &load.Result{Summary: sum, Generator: ok.Generator},
		ServerCPU:    srv,
		GeneratorCPU: cpu,
		Agents:       []harness.AgentReport{{Index: 0, Connections: 1, Result: ok}, {Index: 1, Connections: 1, Result: behind}},
	}
	p := harness.MakePoint(0, harness.RoleSweep, harness.PointKey{Batch: 1, Connections: 2}, out, harness.DefaultThresholds)
	if p.Verdict != harness.VerdictGeneratorCapped || !p.LowerBound || !strings.Contains(p.VerdictReason, "agent 1 fell behind") {
		t.Fatalf("verdict %s (lower bound %v): %s", p.Verdict, p.LowerBound, p.VerdictReason)
	}
	if p.Agents[0].Behind || !p.Agents[1].Behind || p.Agents[1].Evidence == "" {
		t.Errorf("agents: %+v", p.Agents)
	}
}
