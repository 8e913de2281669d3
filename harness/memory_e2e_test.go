//go:build e2e

package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/result"
)

// pssWatch reads, by hand, the Pss line of /proc/PID/smaps_rollup of
// every process running the test build's refserver, every 100 ms, and
// keeps each one's readings. It shares no code with the harness's
// sampler: a test of the figure the result says.
type pssWatch struct {
	mu    sync.Mutex
	seen  map[int][]uint64 // by pid, bytes, in order
	order []int            // pids in the order first seen
	end   func()           // stops the watch (poll)
}

func watchPss(t *testing.T) *pssWatch {
	t.Helper()
	w := &pssWatch{seen: map[int][]uint64{}}
	w.end = poll(t, 100*time.Millisecond, w.look)
	return w
}

// look reads every refserver of the test build once.
func (w *pssWatch) look() {
	exe := filepath.Join(bin, "refserver")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(cmd, []byte(exe+"\x00")) {
			continue
		}
		roll, err := os.ReadFile("/proc/" + e.Name() + "/smaps_rollup")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(roll), "\n") {
			f := strings.Fields(line)
			if len(f) == 3 && f[0] == "Pss:" && f[2] == "kB" {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				w.mu.Lock()
				if _, seen := w.seen[pid]; !seen {
					w.order = append(w.order, pid)
				}
				w.seen[pid] = append(w.seen[pid], kb<<10)
				w.mu.Unlock()
			}
		}
	}
}

// poll calls look at once and then every interval, on a goroutine of its
// own, until the stop it returns is called (at the test's end at the
// latest); stop returns once the last look has ended, and may be called
// again.
func poll(t *testing.T, interval time.Duration, look func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			look()
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() { close(quit) })
		<-done
	}
	t.Cleanup(stop)
	return stop
}

// perConn is the i-th refserver seen's (largest - baseline) / conns,
// its baseline the last reading before its memory first rose by more than
// 1 MiB: the server ready, before the generator connected (the harness
// reads its own baseline then too).
func (w *pssWatch) perConn(i, conns int) (float64, bool) {
	w.end()
	if i >= len(w.order) {
		return 0, false
	}
	rs := w.seen[w.order[i]]
	base, most := rs[0], rs[0]
	rose := false
	for k, v := range rs {
		if k > 0 && !rose && v > rs[k-1]+1<<20 {
			base, rose = rs[k-1], true
		}
		most = max(most, v)
	}
	return (float64(most) - float64(base)) / float64(conns), rose
}

// connectionsOptions is a small connection-scale sweep: one rung, each
// connection sending every 500 ms, 2 s windows.
func connectionsOptions(t *testing.T, conns int) *testSweep {
	o := miniOptions(t, knob.Ladder{1}, knob.ConnsLadders{1: {conns}})
	o.Scenario, o.ConnInterval = knob.ConnectionsScenario, 500*time.Millisecond
	o.Duration, o.Warmup = 2*time.Second, 500*time.Millisecond
	return o
}

// TestConnectionsHeldAndCosted: SCENARIO=connections against refserver
// holds its rung with no error, says how long opening took, times the
// round trips, and puts each side's memory per connection on the point;
// the server's figure is within 10% of one computed by hand from
// /proc/PID/smaps_rollup over the same point.
func TestConnectionsHeldAndCosted(t *testing.T) {
	needProcs(t)
	const conns = 3000
	o := connectionsOptions(t, conns)
	watch := watchPss(t)
	r, table, err := runSweepOnce(t, context.Background(), o, refTarget(t))
	if contended, rest := contentionIsNotTheSubject(t, r, err); rest != nil {
		t.Fatalf("sweep: %v", rest)
	} else if !contended && (r.ConnectionCeiling == nil || !r.ConnectionCeiling.Found) {
		// Uncontended, the p99 of 3,000 connections at 6,000 messages a
		// second is far within 50 ms.
		t.Errorf("connection ceiling %+v on quiet CPUs", r.ConnectionCeiling)
	}
	// The rung, and its A-A repeat when it was clean.
	if n := len(r.Curve); n < 1 || n > 2 {
		t.Fatalf("curve of %d points, want the rung and at most its A-A repeat", n)
	}
	for _, p := range r.Curve {
		if p.Status != result.StatusOK || p.Errors != 0 {
			t.Fatalf("point %d: %s, %d errors %v: %s", p.Index, p.Status, p.Errors, p.ErrorsByReason, p.FailReason)
		}
		var blk struct {
			Open   int   `json:"open"`
			OpenNs int64 `json:"open_ns"`
		}
		if err := json.Unmarshal(p.Scenario[result.ScenarioConnections], &blk); err != nil || blk.Open != conns || blk.OpenNs <= 0 {
			t.Errorf("point %d: connections block %s (%v)", p.Index, p.Scenario[result.ScenarioConnections], err)
		}
		if p.LatencyNs.Count == 0 || p.LatencyNs.P99 <= 0 {
			t.Errorf("point %d: no round trip timed: %+v", p.Index, p.LatencyNs)
		}
		s, okS := p.ServerMemory.PerConnection()
		g, okG := p.GeneratorMemory.PerConnection()
		// refserver spends a goroutine and gorilla's buffers a
		// connection (about 17 KB here), the event loops a few KB.
		if !okS || s < 2_000 || s > 200_000 || p.ServerMemory.Measure != result.MemoryPSS || p.ServerMemory.Samples < 3 {
			t.Errorf("point %d: server memory %+v", p.Index, p.ServerMemory)
		}
		if !okG || g <= 0 || g > 50_000 {
			t.Errorf("point %d: generator memory %+v", p.Index, p.GeneratorMemory)
		}
	}
	s, _ := r.Curve[0].ServerMemory.PerConnection()
	hand, ok := watch.perConn(0, conns)
	if !ok || math.Abs(s-hand) > 0.10*hand {
		t.Errorf("server memory per connection %.0f B, by hand from smaps_rollup %.0f B (seen %v): more than 10%% apart", s, hand, ok)
	}
	t.Logf("server memory per connection: %.0f B (by hand: %.0f B)", s, hand)
	if !strings.Contains(strings.Join(strings.Fields(table), " "), "memory per connection, server/generator (pss") {
		t.Errorf("the table does not show the memory:\n%s", table)
	}
}

// TestMemoryComparisonCallsABallast: a two-arm run of refserver against
// refserver --conn-ballast 4096 calls the head's memory per connection
// higher by about 4 KiB, from each arm's real PSS. The subject is memory,
// which contention does not change: the throughput's verdict is not
// checked. That the same server on both arms is rarely called higher is
// the rule's, on 40 simulated A/A runs (result's
// TestMemoryComparisonAAIsNotCalled).
//
// It is also the lane's two-arm run with fresh arms: a first pass of
// both arms, then ABBA blocks of a base and a head repeat back to back,
// each point booting and stopping its own server, each contended point
// naming who took the CPUs. That a planted slowdown is called slower
// with fresh arms is cmd/ceiling's (TestCompareEndToEnd, the action's
// pull request), in a duet the duet's, with warm arms the warm arms'.
func TestMemoryComparisonCallsABallast(t *testing.T) {
	needProcs(t)
	o := twoArmOptions(t, knob.Ladder{1}, knob.ConnsLadders{1: {2000}})
	o.Scenario, o.ConnInterval = knob.ConnectionsScenario, 500*time.Millisecond
	base, head := refTarget(t), refTarget(t)
	head.Name = "refserver-ballast"
	head.Command = append(head.Command, "--conn-ballast", "4096")
	r, _, err := runTwoArm(t, o, base, head)
	if r.Comparison == nil || len(r.Comparison.Points) == 0 {
		notQuiet(t, "no compared point (%v): the first pass had no rung clean on both arms:\n%s", err, contendedReasons(r))
	}
	checkTwoArmCurve(t, r, 1, 1)
	checkAttributed(t, r)
	if r.Meta.Target.Name != "refserver-ballast" || r.Meta.BaseTarget == nil || r.Meta.BaseTarget.Name != "refserver" || !slices.Contains(r.Meta.Target.Command, "--conn-ballast") {
		t.Errorf("targets: head %+v, base %+v", r.Meta.Target, r.Meta.BaseTarget)
	}
	if r.Arms == nil || r.Arms.Mode != result.ArmsFresh {
		t.Errorf("arms %+v: want fresh", r.Arms)
	}
	for _, p := range r.Curve {
		if p.Status == result.StatusOK && (p.ReadyNs <= 0 || p.StopNs <= 0) {
			t.Errorf("point %d (%s): ready %v, stop %v: a fresh arm's point boots and stops its own server", p.Index, p.Arm, time.Duration(p.ReadyNs), time.Duration(p.StopNs))
		}
	}
	m := r.Comparison.Points[0].Memory
	if m == nil {
		t.Fatalf("no memory comparison: %+v", r.Comparison.Points[0])
	}
	t.Logf("memory: %s", m.Reason)
	if m.Verdict != result.MemoryHigher || *m.ChangeBytes < 3000 || *m.ChangeBytes > 5500 {
		t.Errorf("ballast of 4096 B a connection: %s, change %v, want higher by about 4096", m.Verdict, m.ChangeBytes)
	}
}
