//go:build e2e

package harness_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/internal/netnstest"
	"github.com/ceiling-bench/ceiling/result"
)

// TestAgentsSweepInNetworkNamespaces: sweep points with AGENTS=3 as
// `make ceiling` runs them as root: inside a private network namespace the
// server and the coordinator listen on the bridge, each agent runs in a
// namespace of its own with a port range of 60, so its 100 connections
// take 4 source addresses of its own; the points merge them all. The
// second point's agents reuse the first's addresses behind new veths.
func TestAgentsSweepInNetworkNamespaces(t *testing.T) {
	lab := agentsLab(t, "TestAgentsSweepInNetworkNamespaces")
	if lab == nil {
		return
	}
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {150, 300}})
	o.Agents = 3
	o.AgentsEnv.Lab = lab
	o.AgentsPortRange = "40000-40059"
	if _, err := harness.ResolveKnobs(o.Options, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	r, _, _ := runSweep(t, ctx, o, refTarget(t))
	if len(r.Curve) < 2 {
		t.Fatalf("%d points, want 2", len(r.Curve))
	}
	for _, p := range r.Curve[:2] {
		if p.Status != result.StatusOK {
			t.Fatalf("point %d failed: %s\n%s", p.Index, p.FailReason, p.LogTail)
		}
		if len(p.Agents) != 3 {
			t.Fatalf("point %d: %d agents listed", p.Index, len(p.Agents))
		}
		conns := 0
		for _, a := range p.Agents {
			conns += a.Connections
			// 50 connections take 2 addresses, 100 take 4 (30 a port range of 60).
			var want []string
			for _, x := range agentside.Addrs(a.Index, a.Connections/25) {
				want = append(want, x.String())
			}
			if a.Network != "netns" || !slices.Equal(a.SourceAddrs, want) {
				t.Errorf("point %d agent %d: network %q, source addresses %v; want netns and %v", p.Index, a.Index, a.Network, a.SourceAddrs, want)
			}
			if want := fmt.Sprintf("10.77.%d.", a.Index+1); !strings.HasPrefix(a.Peer, want) {
				t.Errorf("point %d agent %d: its session came from %s, want its own namespace's %sx", p.Index, a.Index, a.Peer, want)
			}
			t.Logf("point %d agent %d: %d conns from %v (session from %s), rtt %v, start skew %v, %.0f msg/s, p99 %v", p.Index,
				a.Index, a.Connections, a.SourceAddrs, a.Peer, time.Duration(a.RTTNs), time.Duration(a.StartSkewNs), a.ThroughputPerS, time.Duration(a.P99Ns))
		}
		if conns != p.Connections {
			t.Errorf("point %d: agents' connections %d, point %d", p.Index, conns, p.Connections)
		}
		t.Logf("point %d merged: %.0f msg/s, p99 %v", p.Index, p.ThroughputPerS, time.Duration(p.LatencyNs.P99))
	}
}

// agentsLab is the agents' bridge as `ceiling sweep` builds it as root,
// inside the test's copy in a private network namespace; nil in the
// parent (which ran the copy: netnstest.Run skips with the reason where
// it cannot, never under CI=true as root).
func agentsLab(t *testing.T, name string) *agentside.Lab {
	t.Helper()
	needProcs(t)
	if !netnstest.Child() {
		netnstest.Run(t, name)
		return nil
	}
	lab, err := agentside.NewLab()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("no bridge here: %v", err)
	}
	return lab
}
