//go:build e2e

package harness_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/load/scenario/fanout"
	"github.com/ceiling-bench/ceiling/load/scenario/nats"
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
// verdict is held; and nothing of the cluster is left running.
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
	if left := leftOf(t); len(left) > 0 {
		t.Errorf("left running after the sweep: %v", left)
	}
}

// FAULT is refused, naming the knob, before anything boots: a server the
// target does not have, a one-server target, a scenario that cannot split
// its accounting, and a malformed value.
func TestFaultBadInput(t *testing.T) {
	o := knob.DefaultOptions(true)
	o.Scenario = fanout.Name
	needProcs(t)
	is := func(tg target.Spec) func(string) (target.Spec, error) {
		return func(string) (target.Spec, error) { return tg, nil }
	}
	cluster, single, natsCluster := is(refClusterTarget(t, "refserver-cluster.json")), is(refTarget(t)), is(clusterTarget(t))
	for _, tc := range []struct {
		name  string
		fault knob.Fault
		scen  string
		load  func(string) (target.Spec, error)
		want  string
	}{
		{"no such server", knob.Fault{Kind: knob.FaultKill, Server: "node9", Fraction: 0.5}, fanout.Name, cluster, `FAULT (--fault) kill:node9@0.5: TARGET benchmark/targets/refserver.json has no server "node9" (its servers: nats, node1, node2, node3)`},
		{"one server", knob.Fault{Kind: knob.FaultKill, Server: "server", Fraction: 0.5}, fanout.Name, single, "needs a target that boots several servers"},
		{"nats", knob.Fault{Kind: knob.FaultStop, Server: "n2", Fraction: 0.5}, nats.Stream, natsCluster, "needs SCENARIO=fanout, which accounts each server's deliveries before and after the fault (SCENARIO is stream)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oo := o
			oo.Fault, oo.Scenario = tc.fault, tc.scen
			_, err := harness.Resolve(oo, harness.Env{Available: []int{0, 1}, LoadTarget: tc.load})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	for _, v := range []string{"kill:node2", "kill@0.5", "crash:node2@0.5", "kill:node2@1", "kill:node2@0", "kill:@0.5", "kill:node2@half"} {
		if _, err := knob.ParseFault(v); err == nil {
			t.Errorf("ParseFault(%q) accepted it", v)
		}
	}
	if f, err := knob.ParseFault("stop:node2@0.25"); err != nil || f != (knob.Fault{Kind: knob.FaultStop, Server: "node2", Fraction: 0.25}) || f.String() != "stop:node2@0.25" {
		t.Errorf("ParseFault(stop:node2@0.25) = %+v, %v", f, err)
	}
}

// Seed 003 compares two clusterings of one server. The two-arm sweep
// does so with two target files: the 3-node refserver cluster (base)
// against the same nodes whose every REST publish waits 2 ms after its
// relay (head, refserver-cluster-slow.json, --cluster-delay), as a
// slower bus's round trip would. The head is called slower.
func TestTwoArmClusterings(t *testing.T) {
	needProcs(t)
	base := refClusterTarget(t, "refserver-cluster.json")
	head := refClusterTarget(t, "refserver-cluster-slow.json")
	o := twoArmOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {12}})
	o.Scenario = fanout.Name
	r, table, err := runTwoArm(t, o, base, head)
	skipIfContended(t, r, err)
	if err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatalf("two-arm: %v", err)
	}
	if r.Meta.Target.Name != "refserver-cluster-slow" || r.Meta.BaseTarget.Name != "refserver-cluster" {
		t.Errorf("targets: head %q, base %q", r.Meta.Target.Name, r.Meta.BaseTarget.Name)
	}
	if r.Comparison == nil {
		t.Fatalf("no comparison:\n%s", table)
	}
	h := r.Comparison.Headline
	t.Logf("clusterings: %s", result.ComparedLine(h, r.Comparison.Confidence))
	if h.NPairs < stats.MinPairs(o.Alpha) && contendedAt(r, 10) {
		notQuiet(t, "clusterings: %d pairs after %d blocks, the others ran on contended CPUs: %s", h.NPairs, h.Blocks, h.Reason)
	}
	if h.Verdict != result.CompareSlower || h.ChangePct == nil || *h.ChangePct >= 0 {
		t.Errorf("the slowed clustering was called %s: %s", h.Verdict, h.Reason)
	}
	for _, p := range r.Curve {
		if p.Status == result.StatusOK && len(p.Servers) != 4 {
			t.Errorf("point %d (%s) lists %d servers' CPU, want nats and 3 nodes", p.Index, p.Arm, len(p.Servers))
		}
	}
}
