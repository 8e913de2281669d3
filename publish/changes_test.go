package publish

import (
	"os"
	"strings"
	"testing"
)

// The fixture history (testdata/history_change.jsonl): 24 entries of one
// series, the headline about 100,000 msg/s for 12 entries and 88,000
// after (-12%), 1.2% noise, A-A floors of 3%, batch 100 steady at about
// 150,000, and one lower bound (entry 6) that is no point. One change
// point: the headline's, between the 12th and 13th commits.
func TestChangesFixture(t *testing.T) {
	data, err := os.ReadFile("testdata/history_change.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHistory(data, "history_change.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cs := Changes(h)
	if len(cs) != 1 {
		t.Fatalf("%d change points, want 1: %+v", len(cs), cs)
	}
	c := cs[0]
	if c.Measure != "headline" || c.Before.GitRef != h[11].GitRef || c.After.GitRef != h[12].GitRef ||
		c.ChangePct > -10 || c.ChangePct < -14 || c.MinChangePct != 3 || c.NBefore != 11 || c.NAfter != 12 || !(c.P < 0.001) {
		t.Errorf("change point %+v, want the headline's, between entries 12 and 13, about -12%%, 11 values before (the lower bound left out) and 12 after", c)
	}
	var b strings.Builder
	if err := WriteChanges(&b, h, cs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 change point in 24 entries", "headline", shortRef(h[11].GitRef), shortRef(h[12].GitRef), "-12."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if n := len([]rune(line)); n > 100 {
			t.Errorf("a line of %d columns: %q", n, line)
		}
	}
	// A regime change at the step is a break, not a change point.
	for i := range h[12:] {
		h[12+i].Regime = "echo, batch 10, 256 B, 2 server cores, 1 generator core"
	}
	if cs := Changes(h); len(cs) != 0 {
		t.Errorf("a regime change at the step: %+v, want no change point", cs)
	}
	b.Reset()
	if err := WriteChanges(&b, h, nil); err != nil || !strings.Contains(b.String(), "no change point in 24 entries") {
		t.Errorf("no change: %q %v", b.String(), err)
	}
}
