package result

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// Fault.Judge: held only with the signal sent, every survivor up, and
// every survivor with clients owed something after the fault and given at
// least ResilienceDeliveredPct of it; a lost piece of evidence is
// cannot_conclude, never held.
func TestFaultJudge(t *testing.T) {
	after := func(expected, delivered int64) *wire.ServerShare {
		d := wire.Delivery{Expected: expected, Delivered: delivered}
		d.SetPct()
		return &wire.ServerShare{Connections: 4, After: &d}
	}
	base := func() Fault {
		return Fault{Kind: "kill", Server: "node2", Fraction: 0.5, Sent: true, Servers: []FaultServer{
			{Name: "nats", Up: true},
			{Name: "node1", Up: true, Share: after(1000, 1000)},
			{Name: "node2", Faulted: true, UpReason: "exited", Share: after(0, 0)},
			{Name: "node3", Up: true, Share: after(1000, 999)},
		}}
	}
	for _, tc := range []struct {
		name        string
		edit        func(*Fault)
		failed      string
		verdict, in string
	}{
		{"held", func(*Fault) {}, "", ResilienceHeld, "at least 99.9%"},
		{"a survivor under-delivered", func(f *Fault) { f.Servers[3].Share = after(1000, 998) }, "", ResilienceDegraded, "node3's clients got 99.80%"},
		{"a survivor went down", func(f *Fault) { f.Servers[0].Up, f.Servers[0].UpReason = false, "exited: signal: killed" }, "", ResilienceDegraded, "nats went down (exited: signal: killed)"},
		{"not sent", func(f *Fault) { f.Sent, f.Error = false, "server node2 had already exited" }, "", ResilienceCannotConclude, "not applied: server node2 had already exited"},
		{"point failed", func(*Fault) {}, "generator failed", ResilienceCannotConclude, "the point failed: generator failed"},
		{"nothing owed after", func(f *Fault) { f.Servers[1].Share = after(0, 0) }, "", ResilienceCannotConclude, "nothing was owed after the fault to the clients of node1"},
		{"no survivor had clients", func(f *Fault) { f.Servers[1].Share, f.Servers[3].Share = nil, nil }, "", ResilienceCannotConclude, "no surviving server had clients"},
		{"shares missing", func(f *Fault) { f.Servers[1].Share.After, f.Servers[3].Share.After = nil, nil }, "", ResilienceCannotConclude, "nothing was owed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := base()
			tc.edit(&f)
			f.Judge(tc.failed)
			if f.Verdict != tc.verdict || !strings.Contains(f.Reason, tc.in) {
				t.Errorf("%s: %s, want %s containing %q", f.Verdict, f.Reason, tc.verdict, tc.in)
			}
		})
	}
}

// TestWriteResilienceShowsWhatWentWrong is issue 33's resilience section:
// after a node kill, the duplicate deliveries and every failure class are
// on the terminal, not only in the JSON (the shares' table read 100.00%).
func TestWriteResilienceShowsWhatWentWrong(t *testing.T) {
	d := wire.Delivery{Expected: 1000, Delivered: 1000}
	d.SetPct()
	p := Point{Index: 9, Role: RoleResilience, Batch: 10, Connections: 8, Status: StatusOK, Errors: 4,
		ErrorsByReason: map[string]int64{"publish_failed": 3, "other": 1},
		Scenario:       map[string]json.RawMessage{"fanout": json.RawMessage(`{"duplicates": 86, "servers": [{"url": "ws://x"}]}`)},
		Fault: &Fault{Kind: "kill", Server: "node2", Sent: true, Verdict: ResilienceHeld, Reason: "every survivor delivered",
			Servers: []FaultServer{{Name: "node1", Up: true, Share: &wire.ServerShare{Connections: 4, After: &d}}}}}
	var b strings.Builder
	if err := WriteResilience(&b, &Result{Curve: []Point{p}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"errors: 4 (publish_failed 3, other 1)", "duplicates: 86 deliveries beyond those owed", "resilience: held"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the section lacks %q:\n%s", want, b.String())
		}
	}
	// A document from before errors_by_reason still says how many.
	p.ErrorsByReason = nil
	b.Reset()
	_ = WriteResilience(&b, &Result{Curve: []Point{p}})
	if !strings.Contains(b.String(), "errors: 4 (by reason unknown)") {
		t.Errorf("without reasons:\n%s", b.String())
	}
}
