package harness_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/internal/netnstest"
)

// TestAgentsSweepInNetworkNamespaces: a sweep point with AGENTS=3 as
// `make ceiling` runs it as root: inside a private network namespace the
// server and the coordinator listen on the bridge, each agent runs in a
// namespace of its own with a port range of 60, so its 100 connections
// take 4 source addresses of its own; the point merges them all.
func TestAgentsSweepInNetworkNamespaces(t *testing.T) {
	lab := agentsLab(t, "TestAgentsSweepInNetworkNamespaces")
	if lab == nil {
		return
	}
	o := miniOptions(t, harness.Ladder{10}, harness.ConnsLadders{10: {300}})
	o.Agents = 3
	o.AgentsLab = lab
	o.AgentsPortRange = "40000-40059"
	if err := o.Resolve(nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	r, _, _ := runSweep(t, ctx, o, refTarget(t))
	if len(r.Curve) == 0 {
		t.Fatal("no point")
	}
	p := r.Curve[0]
	if p.Status != harness.StatusOK {
		t.Fatalf("point failed: %s\n%s", p.FailReason, p.LogTail)
	}
	if len(p.Agents) != 3 {
		t.Fatalf("%d agents listed", len(p.Agents))
	}
	conns := 0
	for _, a := range p.Agents {
		conns += a.Connections
		var want []string
		for _, x := range harness.AgentAddrs(a.Index, 4) {
			want = append(want, x.String())
		}
		if a.Network != "netns" || !slices.Equal(a.SourceAddrs, want) {
			t.Errorf("agent %d: network %q, source addresses %v; want netns and %v", a.Index, a.Network, a.SourceAddrs, want)
		}
		if want := fmt.Sprintf("10.77.%d.", a.Index+1); len(a.Peer) < len(want) || a.Peer[:len(want)] != want {
			t.Errorf("agent %d: its session came from %s, want its own namespace's %sx", a.Index, a.Peer, want)
		}
		t.Logf("agent %d: %d conns from %v (session from %s), rtt %v, start skew %v, %.0f msg/s, p99 %v",
			a.Index, a.Connections, a.SourceAddrs, a.Peer, time.Duration(a.RTTNs), time.Duration(a.StartSkewNs), a.ThroughputPerS, time.Duration(a.P99Ns))
	}
	if conns != 300 || p.Connections != 300 {
		t.Errorf("connections: agents %d, point %d, want 300", conns, p.Connections)
	}
	t.Logf("merged: %.0f msg/s, p99 %v", p.ThroughputPerS, time.Duration(p.LatencyNs.P99))
}

// TestAgentsQuotaInNetworkNamespaces: the cgroup quota on one agent caps
// the point the same when the agents run in network namespaces.
func TestAgentsQuotaInNetworkNamespaces(t *testing.T) {
	lab := agentsLab(t, "TestAgentsQuotaInNetworkNamespaces")
	if lab == nil {
		return
	}
	o := agentOptions(t, 2*time.Second)
	o.AgentsLab = lab
	checkQuotaCaps(t, o)
}

// agentsLab is the agents' bridge as `ceiling sweep` builds it as root,
// inside the test's copy in a private network namespace; nil in the
// parent (which ran the copy: netnstest.Run skips with the reason where
// it cannot, never under CI=true as root).
func agentsLab(t *testing.T, name string) *harness.AgentsLab {
	t.Helper()
	needProcs(t)
	if !netnstest.Child() {
		netnstest.Run(t, name)
		return nil
	}
	lab, err := harness.NewAgentsLab()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("no bridge here: %v", err)
	}
	return lab
}
