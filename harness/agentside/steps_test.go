package agentside

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/side"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/supervise/supervisetest"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// withAgents is a Run whose n agent processes were started (never run:
// the steps tested here only name them).
func withAgents(pt Point, n int) *Run {
	r := New(pt)
	for i := range n {
		r.procs = append(r.procs, supervisetest.New(fmt.Sprintf("agent %d", i), ""))
	}
	return r
}

// TestAgentNamed: a reason's log tail is the agent it names first, by
// index, never one whose index merely begins it ("agent 1" in "agent 12").
func TestAgentNamed(t *testing.T) {
	r := withAgents(Point{}, 3)
	for _, tt := range []struct {
		reason string
		want   int // -1: none
	}{
		{"agents: agent 2: session lost", 2},
		{"agent 1 started 300ms late", 1},
		{"agent 12: gone", -1},
		{"agent 3: no such agent", -1},
		{"the coordinator timed out", -1},
		{"agent 0 and agent 2: skew", 0},
	} {
		got := r.agentNamed(tt.reason)
		var want supervise.Process
		if tt.want >= 0 {
			want = r.procs[tt.want]
		}
		if got != want {
			t.Errorf("agentNamed(%q) = %v, want %v", tt.reason, got, want)
		}
	}
}

// TestUnreadyNamesTheAgent: a coordinator that failed before the
// window gives the reason, with the log tail of the agent it names.
func TestUnreadyNamesTheAgent(t *testing.T) {
	r := withAgents(Point{}, 3)
	r.err = errors.New("agents: agent 1: not ready within 1m0s")
	close(r.done)
	why, tail := r.Why(side.Unready, 0, nil)
	if want := "before the measured window: agents: agent 1: not ready within 1m0s"; why != want {
		t.Errorf("reason %q, want %q", why, want)
	}
	if tail != r.procs[1] {
		t.Errorf("tail of %v, want agent 1", tail)
	}
}

// TestUnreadyWhileWaiting: no reason while the coordinator runs and
// no agent exited (remote agents: none to exit), nor when it returned
// without an error (the marker is about to be seen).
func TestUnreadyWhileWaiting(t *testing.T) {
	r := New(Point{Listen: "0.0.0.0:7000"})
	if why, tail := r.Why(side.Unready, 0, nil); why != "" || tail != nil {
		t.Errorf("running: %q, %v", why, tail)
	}
	close(r.done)
	if why, tail := r.Why(side.Unready, 0, nil); why != "" || tail != nil {
		t.Errorf("returned: %q, %v", why, tail)
	}
}

// TestFirstClosed: exitedAgent's rule, the first agent that exited.
func TestFirstClosed(t *testing.T) {
	open1, open2, shut := make(chan struct{}), make(chan struct{}), make(chan struct{})
	close(shut)
	if i, ok := firstClosed([]<-chan struct{}{open1, shut, open2}); !ok || i != 1 {
		t.Errorf("firstClosed = %d, %v; want 1, true", i, ok)
	}
	if _, ok := firstClosed([]<-chan struct{}{open1, open2}); ok {
		t.Error("firstClosed found one of none closed")
	}
	if _, ok := firstClosed(nil); ok {
		t.Error("firstClosed found one of no agents")
	}
}

// TestOverdue: an overdue marker is the coordinator's failure, with the
// wait it had.
func TestOverdue(t *testing.T) {
	r := New(Point{})
	if why, tail := r.Why(side.Overdue, 65*time.Second, nil); why != "the coordinator created no measure marker within warm-up + 1m5s" || tail != nil {
		t.Errorf("overdue: %q, %v", why, tail)
	}
}

// TestWindowWait: the marker may wait for every agent to join, and never
// less than a generator's connect bound.
func TestWindowWait(t *testing.T) {
	for _, tt := range []struct{ connect, join, want time.Duration }{
		{time.Minute, time.Minute, 65 * time.Second},
		{time.Minute, 2 * time.Minute, 125 * time.Second},
		{time.Minute, 10 * time.Second, time.Minute},
	} {
		if got := New(Point{ConnectTimeout: tt.connect, JoinTimeout: tt.join}).Bounds().Window; got != tt.want {
			t.Errorf("connect %s, join %s: %s, want %s", tt.connect, tt.join, got, tt.want)
		}
	}
}

// TestEnded: the agents' reports go out with the network they ran on; a
// late start is the verdict's to judge, any other failure the point's,
// with its agent's tail.
func TestEnded(t *testing.T) {
	reports := func() *agents.Outcome {
		return &agents.Outcome{Agents: []agents.Agent{{AgentReport: result.AgentReport{Index: 0}}, {AgentReport: result.AgentReport{Index: 1}}}}
	}
	for _, tt := range []struct {
		name    string
		pt      Point
		network string
	}{
		{"loopback", Point{}, "loopback"},
		{"netns", Point{Env: Env{Lab: &Lab{}}}, "netns"},
		{"remote", Point{Listen: "0.0.0.0:7000"}, "remote"},
	} {
		r := withAgents(tt.pt, 2)
		r.out = reports()
		r.err = &agents.LateStartError{InvalidError: agents.InvalidError{Reason: "agent 1 started late"}}
		var out verdict.Outcome
		if why, tail := r.Ended(&out); why != "" || tail != nil {
			t.Errorf("%s: a late start failed the point: %q, %v", tt.name, why, tail)
		}
		if len(out.Agents) != 2 {
			t.Fatalf("%s: %d agents out, want 2", tt.name, len(out.Agents))
		}
		for _, a := range out.Agents {
			if a.Network != tt.network {
				t.Errorf("%s: agent %d on %q, want %q", tt.name, a.Index, a.Network, tt.network)
			}
		}
	}
	r := withAgents(Point{}, 2)
	r.err = errors.New("agents: agent 1: session lost after the window")
	var out verdict.Outcome
	why, tail := r.Ended(&out)
	if why != "agents: agent 1: session lost after the window" || tail != r.procs[1] {
		t.Errorf("failure: %q, %v", why, tail)
	}
	if out.Agents != nil {
		t.Errorf("no outcome, yet agents out: %v", out.Agents)
	}
}

// TestCollectReasons: the coordinator's bound and reasons in the collect
// phase, none of them with a tail (no agent is to blame).
func TestCollectReasons(t *testing.T) {
	r := New(Point{ExitTimeout: 30 * time.Second})
	if got := r.Bounds().End; got != 35*time.Second {
		t.Errorf("end wait %s, want 35s", got)
	}
	if why, tail := r.Why(side.StillRunning, 35*time.Second, nil); why != "coordinator still waiting 35s after the window" || tail != nil {
		t.Errorf("StillRunning: %q, %v", why, tail)
	}
	if why, tail := r.Why(side.Result, 0, errors.New("no JSON written")); why != "merged result: no JSON written" || tail != nil {
		t.Errorf("Result: %q, %v", why, tail)
	}
}
