package meter

import (
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

func TestBusyFraction(t *testing.T) {
	tests := []struct {
		name     string
		a, b     CoreSnap
		okA, okB bool
		want     float64
	}{
		{"half busy", CoreSnap{Busy: 10, Total: 100}, CoreSnap{Busy: 60, Total: 200}, true, true, 0.5},
		{"idle", CoreSnap{Busy: 10, Total: 100}, CoreSnap{Busy: 10, Total: 200}, true, true, 0},
		{"full", CoreSnap{Busy: 0, Total: 0}, CoreSnap{Busy: 4, Total: 4}, true, true, 1},
		{"a snapshot missing", CoreSnap{}, CoreSnap{Busy: 1, Total: 2}, false, true, -1},
		{"no time passed", CoreSnap{Busy: 1, Total: 2}, CoreSnap{Busy: 1, Total: 2}, true, true, -1},
		{"busier than the window: counters went wrong", CoreSnap{Busy: 0, Total: 0}, CoreSnap{Busy: 3, Total: 2}, true, true, -1},
		{"busy went backwards", CoreSnap{Busy: 5, Total: 0}, CoreSnap{Busy: 1, Total: 2}, true, true, -1},
	}
	for _, tt := range tests {
		if got := busyFraction(tt.a, tt.b, tt.okA, tt.okB); got != tt.want {
			t.Errorf("%s: busyFraction = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestStealFraction(t *testing.T) {
	tests := []struct {
		name     string
		a, b     CoreSnap
		okA, okB bool
		want     float64
	}{
		{"none", CoreSnap{Steal: 5, Total: 100}, CoreSnap{Steal: 5, Total: 200}, true, true, 0},
		{"a tenth", CoreSnap{Steal: 5, Total: 100}, CoreSnap{Steal: 15, Total: 200}, true, true, 0.1},
		{"a snapshot missing", CoreSnap{}, CoreSnap{Steal: 1, Total: 2}, true, false, -1},
		{"no time passed", CoreSnap{Steal: 1, Total: 2}, CoreSnap{Steal: 1, Total: 2}, true, true, -1},
		{"steal went backwards", CoreSnap{Steal: 5, Total: 0}, CoreSnap{Steal: 1, Total: 2}, true, true, -1},
		{"as counted, never clamped", CoreSnap{}, CoreSnap{Steal: 3, Total: 2}, true, true, 1.5},
	}
	for _, tt := range tests {
		if got := stealFraction(tt.a, tt.b, tt.okA, tt.okB); got != tt.want {
			t.Errorf("%s: stealFraction = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// snapCores reads this machine's /proc/stat: steal is a counter like the
// others, never negative, never more than the time that passed.
func TestSnapCoresReadsSteal(t *testing.T) {
	online, err := pinning.Online()
	if err != nil {
		t.Skip(err)
	}
	a, okA := snapCores(online)
	if !okA {
		t.Skip("no per-CPU times here")
	}
	var c result.CPUStats
	// A window of a few ticks: /proc/stat's idle and iowait may step
	// back by a tick (NO_HZ accounting), which over one tick reads as a
	// fraction outside [0, 1], and so, rightly, as unknown (-1).
	time.Sleep(200 * time.Millisecond)
	b, okB := snapCores(online)
	for i := 0; i < 100 && b.Total == a.Total; i++ {
		b, okB = snapCores(online)
	}
	pinnedCPU(&c, a, b, okA, okB)
	if a.Steal < 0 || a.Steal > a.Total {
		t.Errorf("steal %v of %v seconds", a.Steal, a.Total)
	}
	if b.Total > a.Total && (c.StealFraction < 0 || c.StealFraction > 1 || c.PinnedBusy < 0) {
		t.Errorf("over a window: steal %v, busy %v", c.StealFraction, c.PinnedBusy)
	}
}

func TestAttributeOverlap(t *testing.T) {
	srv := result.CPUStats{MeanCores: 1.5, PinnedCores: 3}
	gen := result.CPUStats{MeanCores: 0.8, PinnedCores: 2}
	attributeOverlap(&srv, &gen, pinning.CPUSet{1, 2, 3}, pinning.CPUSet{0, 1})
	if srv.OverlapCores != 0.4 || gen.OverlapCores != 0.5 {
		t.Errorf("overlap cores: server %v (want 0.8 x 1/2), generator %v (want 1.5 x 1/3)", srv.OverlapCores, gen.OverlapCores)
	}
	srv.OverlapCores, gen.OverlapCores = 0, 0
	attributeOverlap(&srv, &gen, pinning.CPUSet{1}, pinning.CPUSet{0})
	if srv.OverlapCores != 0 || gen.OverlapCores != 0 {
		t.Errorf("disjoint sets attributed %v, %v", srv.OverlapCores, gen.OverlapCores)
	}
}
