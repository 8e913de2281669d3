package fault

import (
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"

	// The package knows no scenario: its tests use the ones ceiling ships.
	_ "github.com/ceiling-bench/ceiling/load/scenario/all"
)

// FAULT asks the scenario registry which scenarios can take a fault, and
// what to tell the generator: fanout, with --split-at at the fault's
// fraction; a scenario without a FaultDef is refused naming the ones
// that have one.
func TestFaultAsksTheScenarioRegistry(t *testing.T) {
	if got := load.FaultScenarios(); !slices.Equal(got, []string{"fanout"}) {
		t.Errorf("FaultScenarios = %q, want [fanout]", got)
	}
	if d := Def("fanout"); d == nil || !slices.Equal(d.SplitArgs(0.25), []string{"--split-at", "0.25"}) {
		t.Errorf("fanout's FaultDef = %+v, want --split-at 0.25", d)
	}
	if Def("echo") != nil || Def("no-such-scenario") != nil {
		t.Error("echo (or an unknown scenario) takes a fault")
	}
	var o knob.Options
	o.Fault = knob.Fault{Kind: knob.FaultStop, Server: "n2", Fraction: 0.5}
	o.Scenario = "stream"
	const want = "FAULT (--fault) stop:n2@0.5: needs SCENARIO=fanout, which accounts each server's deliveries before and after the fault (SCENARIO is stream)"
	if err := Check(&o, target.Spec{}); err == nil || err.Error() != want {
		t.Errorf("Check = %v, want %q", err, want)
	}
}

// cluster is benchmark/targets/refserver-cluster.json: nats on {port}
// (its monitor on {port2}), node1..3 on {port3}..{port5}, whose commands
// all name {port} too.
func cluster(t *testing.T) target.Spec {
	t.Helper()
	tg, err := target.Load("../../benchmark/targets/refserver-cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestCheck: each sweep a resilience point cannot belong to is refused,
// naming why; the target's own cluster is taken.
func TestCheck(t *testing.T) {
	tg := cluster(t)
	base := knob.Options{Scenario: "fanout", TargetFile: "c.json", Fault: knob.Fault{Kind: knob.FaultKill, Server: "node2", Fraction: 0.5}}
	if err := Check(&base, tg); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := Check(&knob.Options{Scenario: "echo"}, target.Spec{}); err != nil {
		t.Errorf("no FAULT: %v", err)
	}
	for _, tt := range []struct {
		name string
		edit func(*knob.Options, *target.Spec)
		want string
	}{
		{"one server", func(o *knob.Options, tg *target.Spec) { tg.Servers = nil }, "TARGET c.json boots one"},
		{"external", func(o *knob.Options, tg *target.Spec) { tg.External = true }, "TARGET c.json boots none"},
		{"no such server", func(o *knob.Options, tg *target.Spec) { o.Fault.Server = "node9" }, `has no server "node9" (its servers: nats, node1, node2, node3)`},
		{"two arms", func(o *knob.Options, tg *target.Spec) { o.BaseTargetFile = "b.json" }, "not with BASE_TARGET"},
		{"agents", func(o *knob.Options, tg *target.Spec) { o.Agents = 2 }, "not with AGENTS"},
		{"url", func(o *knob.Options, tg *target.Spec) { o.URL = "ws://x" }, "not with --url"},
	} {
		o, tg := base, cluster(t)
		tt.edit(&o, &tg)
		if err := Check(&o, tg); err == nil || !strings.HasPrefix(err.Error(), "FAULT (--fault) "+o.Fault.String()+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want it to say %q", tt.name, err, tt.want)
		}
	}
}

// TestClusterOwners: each URL goes to the one server whose ready probe
// names its port, else the one whose command or env does; a port several
// servers name (nats's {port}, in every node's --cluster) is no one's.
func TestClusterOwners(t *testing.T) {
	tg := cluster(t)
	c := Cluster{Target: tg, Scenario: "fanout", Booted: tg.Booted()}
	if got := c.Owners(4); !slices.Equal(got, []int{1, 2, 3, -1}) {
		t.Errorf("Owners = %v, want [1 2 3 -1] (a share past the URLs is no one's)", got)
	}
	addr := target.Addr{Port: 4000, Port2: 4001, Ports: []int{4002, 4003, 4004}}
	if got, want := c.Served(addr), []string{"", "ws://127.0.0.1:4002", "ws://127.0.0.1:4003", "ws://127.0.0.1:4004"}; !slices.Equal(got, want) {
		t.Errorf("Served = %q, want %q", got, want)
	}
	// By command alone where no ready probe names the port; ambiguous
	// when several commands do.
	tg.Servers[1].Ready, tg.Servers[2].Ready = "log:up", "log:up"
	c.Booted = tg.Booted()
	if got := c.Owners(3); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("by command: Owners = %v, want [1 2 3]", got)
	}
	tg.Servers[2].Command = append(tg.Servers[2].Command, "--peer", "{host}:{port3}")
	c.Booted = tg.Booted()
	if got := c.Owners(3); !slices.Equal(got, []int{-1, 2, 3}) {
		t.Errorf("two commands name port3: Owners = %v, want [-1 2 3]", got)
	}
	// The sweep's --url replaced the block's URLs: none is known.
	c.Target.URL = "ws://127.0.0.1:9/"
	if got := c.Owners(3); !slices.Equal(got, []int{-1, -1, -1}) {
		t.Errorf("--url: Owners = %v", got)
	}
}

// TestJudge: a resilience point is never clean, and one without a record
// cannot conclude.
func TestJudge(t *testing.T) {
	p := result.Point{Clean: true}
	Judge(&p, nil)
	if p.Clean || p.Fault == nil || p.Fault.Error != "no fault record" || p.Fault.Verdict != result.ResilienceCannotConclude {
		t.Errorf("no record: clean %v, fault %+v", p.Clean, p.Fault)
	}
}

// TestNameServers: a refusal that names servers by their addresses is
// told which of the target's servers each is, and only those it names.
func TestNameServers(t *testing.T) {
	tg := cluster(t)
	c := Cluster{Target: tg, Scenario: "fanout", Booted: tg.Booted()}
	addr := target.Addr{Port: 4000, Port2: 4001, Ports: []int{4002, 4003, 4004}}
	text := "published through ws://127.0.0.1:4002/app/k, not heard by the subscriber on ws://127.0.0.1:4004/app/k"
	if got, want := c.NameServers(text, addr), "127.0.0.1:4002 is node1, 127.0.0.1:4004 is node3"; got != want {
		t.Errorf("NameServers = %q, want %q", got, want)
	}
	if got := c.NameServers("no address here", addr); got != "" {
		t.Errorf("NameServers of a text naming none = %q", got)
	}
	// One server: nothing to tell it from, so nothing to say ("(127.0.0.1:
	// 4002 is server)" once followed a one-server target's refusal).
	ref, err := target.Load("../../benchmark/targets/refserver.json")
	if err != nil {
		t.Fatal(err)
	}
	one := Cluster{Target: ref, Scenario: "fanout", Booted: ref.Booted()}
	if got := one.NameServers("refused by ws://127.0.0.1:4000/app/k: 4009 invalid signature", addr); got != "" {
		t.Errorf("NameServers of a one-server target = %q, want nothing", got)
	}
}
