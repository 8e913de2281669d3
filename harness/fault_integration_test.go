//go:build e2e

package harness_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/load/scenario/fanout"
	"github.com/ceiling-bench/ceiling/result"
)

// refClusterTarget is benchmark/targets/refserver-cluster.json (or its
// slowed variant) with the test's nats-server and refserver.
func refClusterTarget(t *testing.T, file string) target.Spec {
	t.Helper()
	tg, err := target.Load("../benchmark/targets/" + file)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range tg.Servers {
		switch filepath.Base(s.Command[0]) {
		case "nats-server":
			tg.Servers[i].Command[0] = natsServer(t)
		case "refserver":
			tg.Servers[i].Command[0] = filepath.Join(bin, "refserver")
		default:
			t.Fatalf("%s: server %s runs %s", file, s.Name, s.Command[0])
		}
	}
	return tg
}

// leftOf lists the processes still running one of the test's binaries.
func leftOf(t *testing.T) []string {
	t.Helper()
	procs, err := supervise.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range procs {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.Pid))
		if err == nil && strings.HasPrefix(exe, bin+"/") {
			left = append(left, fmt.Sprintf("%d %s", p.Pid, exe))
		}
	}
	return left
}

// waitLeftGone waits, at most limit, until no process runs one of the
// test's binaries, and returns those still running then.
func waitLeftGone(t *testing.T, limit time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		left := leftOf(t)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FAULT=kill:node2@0.5 on the 3-node refserver cluster: the resilience
// point runs after the sweep at the headline's rung; node2 is SIGKILLed
// halfway through the window; a third of the connections (node2's, and
// only node2's) drop; the other nodes stay up and their clients get every
// event owed to them after the kill; the point is never a ceiling, its
// verdict is held; and nothing of the cluster is left running. It is
// also the fanout scenario's sweep, driven through the target file's
// fanout block (URLs and app credentials): the sweep's points ran
// without an error, and the app secret is nowhere in the result. Then
// the same nodes not one cluster: the sweep stops at its first point's
// refused preflight (the rule that a refusal stops a sweep is
// TestSweepStopsAtARefusal's).
func TestFaultKillsANodeMidWindow(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {12}})
	o.Scenario = fanout.Name
	o.Duration = 2 * time.Second
	o.Fault = knob.Fault{Kind: knob.FaultKill, Server: "node2", Fraction: 0.5}
	r, table, err := runSweep(t, context.Background(), o, refClusterTarget(t, "refserver-cluster.json"))
	if err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatalf("sweep: %v", err)
	}
	var fp *result.Point
	for i, p := range r.Curve {
		if p.Role == result.RoleResilience {
			fp = &r.Curve[i]
		} else if p.Fault != nil {
			t.Errorf("point %d (%s) has a fault record", p.Index, p.Role)
		}
	}
	if fp == nil || fp.Fault == nil {
		t.Fatalf("no resilience point with a fault record in %d points", len(r.Curve))
	}
	if fp.Index != len(r.Curve) || fp.Clean || fp.Batch != 10 || fp.Connections != 12 {
		t.Errorf("resilience point: index %d of %d, clean %v, batch %d, conns %d", fp.Index, len(r.Curve), fp.Clean, fp.Batch, fp.Connections)
	}
	f := fp.Fault
	half := int64(o.Duration / 2)
	if !f.Sent || f.AtNs < half-int64(50*time.Millisecond) || f.AtNs > half+int64(500*time.Millisecond) || f.SplitAtNs != half {
		t.Errorf("fault sent %v at %v (split at %v), want at %v: %s", f.Sent, time.Duration(f.AtNs), time.Duration(f.SplitAtNs), time.Duration(half), f.Error)
	}
	if len(f.Servers) != 4 {
		t.Fatalf("fault servers %+v", f.Servers)
	}
	var dropped int64
	for _, s := range f.Servers {
		switch s.Name {
		case "nats":
			if !s.Up || s.Share != nil || s.Faulted {
				t.Errorf("nats: %+v", s)
			}
		case "node2":
			if !s.Faulted || s.Up || s.Share == nil || s.Share.Connections != 4 || s.Share.Dropped != 4 {
				t.Errorf("node2 (killed): faulted %v up %v share %+v, want its 4 clients dropped", s.Faulted, s.Up, s.Share)
			}
		default:
			sh := s.Share
			if !s.Up || s.Faulted || sh == nil || sh.Connections != 4 || sh.Dropped != 0 || sh.PublishFailures != 0 ||
				sh.After == nil || sh.After.Expected == 0 || sh.After.DeliveredPct == nil || *sh.After.DeliveredPct < result.ResilienceDeliveredPct {
				t.Errorf("%s (survivor): up %v share %+v after %+v", s.Name, s.Up, sh, sh.After)
			}
		}
		if s.Share != nil {
			dropped += s.Share.Dropped
		}
	}
	if dropped*3 != int64(fp.Connections) {
		t.Errorf("%d of %d connections dropped, want a third", dropped, fp.Connections)
	}
	if f.Verdict != result.ResilienceHeld {
		t.Errorf("verdict %s: %s", f.Verdict, f.Reason)
	}
	for _, c := range r.Ceilings {
		if c.Found && c.Connections == 12 && c.ThroughputPerS == fp.ThroughputPerS {
			t.Errorf("the resilience point is a ceiling: %+v", c)
		}
	}
	for _, want := range []string{"resilience (point", "kill node2 at", "node2 (kill)", "resilience: held"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if r.Config.Scenario != "fanout" || !strings.HasPrefix(r.Regime, "fanout, batch 10") {
		t.Errorf("scenario %q, regime %q", r.Config.Scenario, r.Regime)
	}
	for _, p := range r.Curve {
		if p.Role != result.RoleResilience && (p.Status != result.StatusOK || p.Errors != 0) {
			t.Errorf("point %d: %s %q, errors %d", p.Index, p.Status, p.FailReason, p.Errors)
		}
	}
	if data, err := os.ReadFile(o.Out); err != nil || strings.Contains(string(data), "app-secret") {
		t.Errorf("the result records the app secret (or is unread: %v)", err)
	}
	if left := leftOf(t); len(left) > 0 {
		t.Errorf("left running after the sweep: %v", left)
	}

	// The same nodes, not one cluster (no --cluster): fanout's preflight
	// is refused, as it would be at every point, so the sweep stops after
	// the first with ErrRefused, the whole reason (its hint last) in the
	// result and on the terminal, the servers the generator named by
	// address named by the target's names. Nothing is left running.
	o = miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {6, 12}})
	o.Scenario = fanout.Name
	apart := refClusterTarget(t, "refserver-cluster.json")
	for i, s := range apart.Servers {
		if k := slices.Index(s.Command, "--cluster"); k >= 0 {
			apart.Servers[i].Command = slices.Delete(slices.Clone(s.Command), k, k+2)
		}
	}
	r, table, err = runSweep(t, context.Background(), o, apart)
	if !errors.Is(err, harness.ErrRefused) || len(r.Curve) != 1 {
		t.Fatalf("not one cluster: err %v, %d points; want ErrRefused after the first\n%s", err, len(r.Curve), table)
	}
	why := r.PartialReason
	for _, want := range []string{"preflight was refused", "one cluster?", " is node"} {
		if !strings.Contains(why, want) {
			t.Errorf("the reason lacks %q: %s", want, why)
		}
	}
	if !strings.Contains(flatText(table), flatText(why[strings.Index(why, "one cluster?"):])) {
		t.Errorf("the terminal does not carry the reason to its end:\n%s", table)
	}
	if left := waitLeftGone(t, 0); len(left) > 0 {
		t.Errorf("left running after the refused sweep: %v", left)
	}
}
