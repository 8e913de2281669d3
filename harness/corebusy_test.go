package harness

import "testing"

func TestBusyFraction(t *testing.T) {
	tests := []struct {
		name     string
		a, b     coreSnap
		okA, okB bool
		want     float64
	}{
		{"half busy", coreSnap{Busy: 10, Total: 100}, coreSnap{Busy: 60, Total: 200}, true, true, 0.5},
		{"idle", coreSnap{Busy: 10, Total: 100}, coreSnap{Busy: 10, Total: 200}, true, true, 0},
		{"full", coreSnap{Busy: 0, Total: 0}, coreSnap{Busy: 4, Total: 4}, true, true, 1},
		{"a snapshot missing", coreSnap{}, coreSnap{Busy: 1, Total: 2}, false, true, -1},
		{"no time passed", coreSnap{Busy: 1, Total: 2}, coreSnap{Busy: 1, Total: 2}, true, true, -1},
		{"busier than the window: counters went wrong", coreSnap{Busy: 0, Total: 0}, coreSnap{Busy: 3, Total: 2}, true, true, -1},
		{"busy went backwards", coreSnap{Busy: 5, Total: 0}, coreSnap{Busy: 1, Total: 2}, true, true, -1},
	}
	for _, tt := range tests {
		if got := busyFraction(tt.a, tt.b, tt.okA, tt.okB); got != tt.want {
			t.Errorf("%s: busyFraction = %v, want %v", tt.name, got, tt.want)
		}
	}
}
