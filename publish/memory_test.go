package publish

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

// twoArmMemory is the A/A two-arm document with the server's memory per
// connection on every repeat: the head's shift bytes above the base's.
func twoArmMemory(t *testing.T, shift float64) *result.Result {
	t.Helper()
	r := twoArmSame(t)
	for i := range r.Curve {
		p := &r.Curve[i]
		pc := 24_000 + 600*baseJitter[p.Rep%len(baseJitter)]*100 // ±360 B of noise
		if p.Arm == result.ArmHead {
			pc += shift + 600*headJitter[p.Rep%len(headJitter)]*100
		}
		p.ServerMemory = &result.Memory{Measure: result.MemoryPSS, Samples: 3, PerConnectionBytes: &pc}
		g := 1900.0
		p.GeneratorMemory = &result.Memory{Measure: result.MemoryPSS, Samples: 3, PerConnectionBytes: &g}
	}
	r.Summarize()
	return readBack(t, r)
}

// readBack is r written and read as the publisher reads it: the schema
// and the checks pass.
func readBack(t *testing.T, r *result.Result) *result.Result {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(data, "memory")
	if err != nil {
		t.Fatalf("does not read back: %v", err)
	}
	return back
}

// A connection-scale sweep's document, with each side's memory on every
// point and its connection ceiling, passes the schema, and the ceiling
// reads back as derived.
func TestConnectionSweepReadsBack(t *testing.T) {
	t.Parallel()
	r := mustRead(t, "head_same.json")
	r.Config.Scenario = result.ScenarioConnections
	base := uint64(9_000_000)
	for i := range r.Curve {
		p := &r.Curve[i]
		pc, g := 17_000.0, 2_900.0
		p.ServerMemory = &result.Memory{Measure: result.MemoryPSS, Samples: 12, PeakBytes: base + uint64(p.Connections)*17_000, EndBytes: base, RSSPeakBytes: 2 * base,
			BaselineBytes: &base, Connections: p.Connections, PerConnectionBytes: &pc}
		p.GeneratorMemory = &result.Memory{Measure: result.MemoryPSS, Samples: 12, PeakBytes: 1, EndBytes: 1, Connections: p.Connections, PerConnectionBytes: &g}
	}
	r.Summarize()
	back := readBack(t, r)
	if cc := back.ConnectionCeiling; cc == nil || !cc.Found || cc.Connections != r.Headline.Connections || cc.ServerMemory == nil {
		t.Errorf("connection ceiling %+v", back.ConnectionCeiling)
	}
}

func TestFailOnMemoryGatesOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	c := mustCompare(t, nil, twoArmMemory(t, 4096), CompareOptions{})
	if m := c.Headline.Memory; m == nil || m.Verdict != result.MemoryHigher {
		t.Fatalf("headline memory %+v, want higher", c.Headline.Memory)
	}
	var me *MemoryError
	if err := FailOn(c, "slower,memory"); !errors.As(err, &me) || !strings.Contains(err.Error(), "server memory per connection is higher") {
		t.Errorf("FailOn(slower,memory) = %v, want a MemoryError", err)
	}
	for _, policy := range []string{FailOnSlower, FailOnNever, "slower,inconclusive"} {
		if err := FailOn(c, policy); err != nil {
			t.Errorf("FailOn(%s) = %v: memory is information unless asked for", policy, err)
		}
	}
	if err := FailOn(mustCompare(t, nil, twoArmMemory(t, 0), CompareOptions{}), FailOnMemory); err != nil {
		t.Errorf("A/A: FailOn(memory) = %v", err)
	}
	md := Render(c, RenderOptions{})
	for _, want := range []string{"**Server memory per connection** (pss; information", "head 28.", "**higher**", "| mem per conn |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the comment lacks %q", want)
		}
	}
}

// A published entry keeps the headline point's memory per connection,
// and `ceiling history` lists it, a dash for a side without one.
func TestHistoryKeepsTheHeadlinesMemory(t *testing.T) {
	t.Parallel()
	r := mustRead(t, "head_same.json")
	hp := r.HeadlinePoint()
	if hp == nil {
		t.Fatal("no headline point")
	}
	pc := 17_250.0
	hp.ServerMemory = &result.Memory{Measure: result.MemoryPSS, Samples: 10, PerConnectionBytes: &pc}
	e := EntryOf(r)
	if e.Memory == nil || *e.Memory.ServerPerConnBytes != pc || e.Memory.GenPerConnBytes != nil || e.Memory.Measure != "pss" {
		t.Fatalf("entry memory %+v", e.Memory)
	}
	old := EntryOf(mustRead(t, "head_same.json")) // measured before memory was
	var b strings.Builder
	if err := WriteHistoryTable(&b, []HistoryEntry{old, e}, 0); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	if !strings.Contains(out, "memory per connection at the headline") || !strings.Contains(out, "17.2 KB — pss") || strings.Count(out, "17.2 KB") != 1 {
		t.Errorf("history table:\n%s", b.String())
	}
	b.Reset()
	if err := WriteHistoryTable(&b, []HistoryEntry{old}, 0); err != nil || strings.Contains(b.String(), "memory per connection") {
		t.Errorf("an entry without memory got its table: %v\n%s", err, b.String())
	}
}
