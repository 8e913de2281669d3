//go:build e2e

package harness_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/result"
)

// agentOptions: one point of 6 connections at batch 10 through 3 agents.
func agentOptions(t *testing.T, window time.Duration) *testSweep {
	t.Helper()
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {6}})
	o.Agents = 3
	o.Duration = window
	if _, err := harness.ResolveKnobs(o.Options, nil); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestAgentsPoint: 3 real `ceiling agent` processes against refserver,
// agent 1's wall clock 250 ms ahead, over a sweep of two rungs. In the
// first point agent 1 is killed inside the window: the point is invalid,
// naming it. The next points, with a fresh agent 1, are the agents'
// merge, and every agent started inside the window.
func TestAgentsPoint(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {6, 9}})
	o.Agents = 3
	o.Duration = 2 * time.Second
	if _, err := harness.ResolveKnobs(o.Options, nil); err != nil {
		t.Fatal(err)
	}
	o.AgentsEnv.Args = map[int][]string{1: {"--wall-skew", "250ms"}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	swept := make(chan struct{})
	killed := make(chan int, 1)
	go func() {
		defer close(killed)
		for {
			select {
			case <-swept:
				return
			default:
			}
			if m, _ := filepath.Glob(filepath.Join(o.WorkDir, "point-001-*", "measure.marker")); len(m) > 0 {
				time.Sleep(300 * time.Millisecond)
				if pid := findAgent(1); pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					killed <- pid
				}
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	// Once: the kill is planted in this run only, and its failed point
	// is the subject whether or not the CPUs were contended; so are the
	// merge and the window, which hold on a busy machine too.
	r, _, _ := runSweepOnce(t, ctx, o, refTarget(t))
	close(swept)
	if pid := <-killed; pid == 0 {
		t.Fatal("agent 1 was not found to kill")
	}
	if len(r.Curve) < 2 {
		t.Fatalf("%d points, want the killed one and the next", len(r.Curve))
	}
	if r.Config.Agents != 3 {
		t.Errorf("config.agents = %d", r.Config.Agents)
	}
	p := r.Curve[0]
	if p.Status != result.StatusFailed || !strings.Contains(p.FailReason, "agent 1") {
		t.Fatalf("point 1: status %s, reason %q; want failed naming agent 1", p.Status, p.FailReason)
	}
	if len(p.Agents) != 3 || p.Agents[1].Failure == "" {
		t.Errorf("point 1's agents: %+v, want 3 with agent 1's failure", p.Agents)
	}
	t.Logf("point 1: %s", p.FailReason)
	for _, p := range r.Curve[1:] {
		if p.Status != result.StatusOK {
			t.Fatalf("point %d failed: %s\n%s", p.Index, p.FailReason, p.LogTail)
		}
		if len(p.Agents) != 3 {
			t.Fatalf("point %d lists %d agents", p.Index, len(p.Agents))
		}
		conns, tput := 0, 0.0
		minP99, maxP99 := p.Agents[0].P99Ns, p.Agents[0].P99Ns
		for _, a := range p.Agents {
			conns += a.Connections
			tput += a.ThroughputPerS
			minP99, maxP99 = min(minP99, a.P99Ns), max(maxP99, a.P99Ns)
			if want := fmt.Sprintf("127.0.%d.1", a.Index+1); len(a.SourceAddrs) != 1 || a.SourceAddrs[0] != want {
				t.Errorf("point %d agent %d: source addresses %v, want [%s]", p.Index, a.Index, a.SourceAddrs, want)
			}
			if skew := time.Duration(a.StartSkewNs); skew > 50*time.Millisecond || skew < -50*time.Millisecond {
				t.Errorf("point %d agent %d: start skew %v", p.Index, a.Index, skew)
			}
			t.Logf("point %d agent %d: %d conns, rtt %v, offset %v, start skew %v, %.0f msg/s, p99 %v; %s",
				p.Index, a.Index, a.Connections, time.Duration(a.RTTNs), time.Duration(a.ClockOffsetNs), time.Duration(a.StartSkewNs),
				a.ThroughputPerS, time.Duration(a.P99Ns), a.Evidence)
		}
		if conns != p.Connections {
			t.Errorf("point %d: agents' connections sum to %d, want %d", p.Index, conns, p.Connections)
		}
		if diff := p.ThroughputPerS - tput; diff > 1e-6*tput || diff < -1e-6*tput {
			t.Errorf("point %d: throughput %v, agents' sum %v", p.Index, p.ThroughputPerS, tput)
		}
		// The merged p99 is the merged histogram's: within the agents'.
		if p.LatencyNs.P99 < minP99 || p.LatencyNs.P99 > maxP99 {
			t.Errorf("point %d: merged p99 %d outside the agents' %d..%d", p.Index, p.LatencyNs.P99, minP99, maxP99)
		}
		if off := time.Duration(p.Agents[1].ClockOffsetNs); off > -240*time.Millisecond || off < -260*time.Millisecond {
			t.Errorf("point %d: agent 1 (wall +250ms) measured offset %v", p.Index, off)
		}
		t.Logf("point %d merged: %.0f msg/s, p99 %v", p.Index, p.ThroughputPerS, time.Duration(p.LatencyNs.P99))
	}
}

// findAgent is the pid of this test build's `ceiling agent --index i`.
func findAgent(i int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) < 5 || args[0] != filepath.Join(bin, "ceiling") || args[1] != "agent" {
			continue
		}
		for j := range args[:len(args)-1] {
			if args[j] == "--index" && args[j+1] == strconv.Itoa(i) {
				pid, _ := strconv.Atoi(e.Name())
				return pid
			}
		}
	}
	return 0
}
