package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// agentFixture is two agents' results of a 1 s closed-loop window, one
// on schedule and one behind (its load threads waited a third of the
// window), with the CPUs of a busy generator and a quiet server.
type agentFixture struct {
	sum        load.Summary
	ok, behind *load.Result
	cpu, srv   result.CPUStats
}

func newAgentFixture() agentFixture {
	window := int64(time.Second)
	sum := load.Summary{Mode: "closed", MeasuredNs: window, ThroughputPerS: 1000, Messages: 1000, ConnectionsRequested: 2, ConnectionsOpen: 2}
	return agentFixture{
		sum:    sum,
		ok:     &load.Result{Summary: sum, Generator: load.GeneratorStats{RunnableP99Ns: 10_000}},
		behind: &load.Result{Summary: sum, Generator: load.GeneratorStats{RunnableP99Ns: int64(5 * time.Millisecond), OSRunDelayNs: window / 3}},
		cpu:    result.CPUStats{Samples: 10, PinnedCores: 1, MeanCores: 0.95, FractionMean: 0.95, PinnedBusy: 0.95},
		srv:    result.CPUStats{Samples: 10, PinnedCores: 1, MeanCores: 0.3, FractionMean: 0.3, PinnedBusy: 0.3},
	}
}

// TestAgentBehindCapsThePoint: one agent that fell behind makes the point
// generator-capped, named, even when the merged evidence would not.
func TestAgentBehindCapsThePoint(t *testing.T) {
	f := newAgentFixture()
	sum, ok, behind, cpu, srv := f.sum, f.ok, f.behind, f.cpu, f.srv
	out := Outcome{
		Load:         &load.Result{Summary: sum, Generator: ok.Generator},
		ServerCPU:    srv,
		GeneratorCPU: cpu,
		Agents:       []agents.Agent{{AgentReport: result.AgentReport{Index: 0, Connections: 1}, Result: ok}, {AgentReport: result.AgentReport{Index: 1, Connections: 1}, Result: behind}},
	}
	p := Point(0, result.RoleSweep, result.PointKey{Batch: 1, Connections: 2}, out, DefaultThresholds)
	if p.Verdict != result.VerdictGeneratorCapped || !p.LowerBound || !strings.Contains(p.VerdictReason, "agent 1 fell behind") {
		t.Fatalf("verdict %s (lower bound %v): %s", p.Verdict, p.LowerBound, p.VerdictReason)
	}
	if p.Agents[0].Behind || !p.Agents[1].Behind || p.Agents[1].Evidence == "" {
		t.Errorf("agents: %+v", p.Agents)
	}
}

// TestLateAgentJudged: an agent whose "started" came over the limit late
// stands in the point only when it also fell behind (starved: the point
// is generator-capped, naming it and its late start); one that kept its
// schedule makes the point failed, naming it: its window may not have
// lined up, and the merge is not one window.
func TestLateAgentJudged(t *testing.T) {
	f := newAgentFixture()
	sum, ok, behind, cpu, srv := f.sum, f.ok, f.behind, f.cpu, f.srv
	late := int64(81 * time.Millisecond)
	for _, c := range []struct {
		name      string
		agent1    *load.Result
		want      string
		wantFail  bool
		wantAgent string
	}{
		{"late and behind: starved", behind, "agent 1 fell behind", false, "reported 81ms late"},
		{"late and on schedule: not one window", ok, "agent 1 started its window 81ms late", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := Outcome{
				Load:         &load.Result{Summary: sum, Generator: ok.Generator},
				ServerCPU:    srv,
				GeneratorCPU: cpu,
				Agents: []agents.Agent{
					{AgentReport: result.AgentReport{Index: 0, Connections: 1}, Result: ok},
					{AgentReport: result.AgentReport{Index: 1, Connections: 1, StartSkewNs: late, LateStart: true}, Result: c.agent1},
				},
			}
			p := Point(0, result.RoleSweep, result.PointKey{Batch: 1, Connections: 2}, out, DefaultThresholds)
			if failed := p.Status == result.StatusFailed; failed != c.wantFail || !strings.Contains(p.VerdictReason, c.want) {
				t.Fatalf("status %s, verdict %s: %s; want failed=%v and %q", p.Status, p.Verdict, p.VerdictReason, c.wantFail, c.want)
			}
			if c.wantFail {
				if p.ThroughputPerS != 0 || p.Clean || p.LowerBound || len(p.Agents) != 2 {
					t.Errorf("a failed point keeps no figures, but its agents: %+v", p)
				}
				return
			}
			if p.Verdict != result.VerdictGeneratorCapped || !p.LowerBound || !strings.Contains(p.Agents[1].Evidence, c.wantAgent) {
				t.Errorf("verdict %s (lower bound %v), agent 1 evidence %q", p.Verdict, p.LowerBound, p.Agents[1].Evidence)
			}
		})
	}
}
