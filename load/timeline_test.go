package load

import (
	"slices"
	"testing"
)

// A timeline counts by the tick of completion from Open, warm-up
// included, to Drain; before Open or past Drain counts nothing; merged
// timelines add tick by tick; a nil one counts nothing and merges as a
// copy.
func TestTimeline(t *testing.T) {
	const tick = int64(TimelineTick)
	w := Window{Open: 1000, Start: 1000 + 3*tick, End: 1000 + 13*tick, Drain: 1000 + 15*tick}
	a := NewTimeline(w)
	if a.StartTick != 3 || a.EndTick != 13 || len(a.Counts) != 16 || a.TickNs != tick {
		t.Fatalf("timeline %+v", a)
	}
	a.Add(999, 5)            // before Open
	a.Add(1000, 5)           // tick 0
	a.Add(1000+3*tick-1, 10) // the warm-up's last tick
	a.Add(1000+3*tick, 10)   // the window's first
	a.Add(1000+15*tick, 7)   // Drain's own tick, the last
	a.Add(1000+16*tick, 7)   // past it
	want := make([]int64, 16)
	want[0], want[2], want[3], want[15] = 5, 10, 10, 7
	if !slices.Equal(a.Counts, want) {
		t.Errorf("counts %v, want %v", a.Counts, want)
	}
	var none *Timeline
	none.Add(1000, 1)
	b := none.Merge(a)
	if b == a || !slices.Equal(b.Counts, want) {
		t.Fatalf("nil merged with a: %+v", b)
	}
	b.Merge(a)
	for i := range want {
		want[i] *= 2
	}
	if !slices.Equal(b.Counts, want) || a.Counts[0] != 5 {
		t.Errorf("merged %v (a %v), want %v and a untouched", b.Counts, a.Counts, want)
	}
}
