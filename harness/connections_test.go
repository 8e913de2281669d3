package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/supervise/supervisetest"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// SCENARIO=connections gets its ramp and interval as the generator's
// flags, the ramp split over the agents; another scenario none.
func TestConnectionsArgs(t *testing.T) {
	o := knob.DefaultOptions(false)
	o.Scenario, o.ConnRamp, o.ConnInterval = knob.ConnectionsScenario, 6000, 30*time.Second
	args := func(o knob.Options) string {
		return strings.Join(loadArgs(planOf(o), target.Spec{}, result.PointKey{Batch: 1, Connections: 1000}, target.Addr{}, "ws://127.0.0.1:1/echo", time.Second, time.Second, pointFiles{}), " ")
	}
	if a := args(o); !strings.Contains(a, "--ramp 6000 --send-interval 30s") {
		t.Errorf("args %q", a)
	}
	o.Agents = 3
	if a := args(o); !strings.Contains(a, "--ramp 2000 ") {
		t.Errorf("3 agents: %q, want each one a third of the ramp", a)
	}
	e := knob.DefaultOptions(false)
	if a := args(e); strings.Contains(a, "--ramp") || strings.Contains(a, "--send-interval") {
		t.Errorf("echo got the connections' flags: %q", a)
	}
}

// CONN_RAMP and CONN_INTERVAL given to another scenario are refused
// before anything boots, naming the knob.
func TestConnectionsKnobsAreTheScenarios(t *testing.T) {
	for name, edit := range map[string]func(*knob.Options){
		"CONN_RAMP (--conn-ramp)":         func(o *knob.Options) { o.ConnRamp = 100 },
		"CONN_INTERVAL (--conn-interval)": func(o *knob.Options) { o.ConnInterval = time.Second },
	} {
		o := knob.DefaultOptions(false)
		edit(&o)
		if _, err := ResolveKnobs(o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "not echo's") {
			t.Errorf("%s with SCENARIO=echo: %v", name, err)
		}
	}
}

// The wait for the marker grows by the time the ramp takes to open the
// rung: 10,000 connections at 5,000 a second are 2 s more.
func TestConnectionsMarkerWaitHoldsTheRamp(t *testing.T) {
	plan := pipelinePlan(t, `{"name": "faked", "command": ["/bin/true", "{addr}"], "connections": {"url": "ws://{addr}/echo"}, "ready": "http://{addr}/health"}`,
		func(o *knob.Options) {
			o.Scenario, o.BatchLadder, o.HeadlineBatch = knob.ConnectionsScenario, knob.Ladder{1}, 1
			o.ConnsLadders = knob.ConnsLadders{1: {10_000}}
		})
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){"generator": func(supervise.Spec, *supervisetest.Proc) {}}}
	// The Clock's timers fire at once: the wait's deadline is the only
	// one the point reaches.
	res := runPipeline(t, plan, st, newRecordedMeter(t), newFakeClock(time.Hour))
	p := res.r.Curve[0]
	if want := "no measure marker within warm-up + " + (connectTimeout + 2*time.Second).String(); p.Status != result.StatusFailed || !strings.Contains(p.FailReason, want) {
		t.Errorf("point: %s %q, want failed: %q", p.Status, p.FailReason, want)
	}
	if args := st.specs[len(st.specs)-1].Args; !strings.Contains(strings.Join(args, " "), "--scenario connections") {
		t.Errorf("generator args %q", args)
	}
}
