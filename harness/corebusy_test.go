package harness

import "testing"

func TestBusyFraction(t *testing.T) {
	tests := []struct {
		name     string
		a, b     coreSnap
		okA, okB bool
		want     float64
	}{
		{"half busy", coreSnap{busy: 10, total: 100}, coreSnap{busy: 60, total: 200}, true, true, 0.5},
		{"idle", coreSnap{busy: 10, total: 100}, coreSnap{busy: 10, total: 200}, true, true, 0},
		{"full", coreSnap{busy: 0, total: 0}, coreSnap{busy: 4, total: 4}, true, true, 1},
		{"a snapshot missing", coreSnap{}, coreSnap{busy: 1, total: 2}, false, true, -1},
		{"no time passed", coreSnap{busy: 1, total: 2}, coreSnap{busy: 1, total: 2}, true, true, -1},
		{"busier than the window: counters went wrong", coreSnap{busy: 0, total: 0}, coreSnap{busy: 3, total: 2}, true, true, -1},
		{"busy went backwards", coreSnap{busy: 5, total: 0}, coreSnap{busy: 1, total: 2}, true, true, -1},
	}
	for _, tt := range tests {
		if got := busyFraction(tt.a, tt.b, tt.okA, tt.okB); got != tt.want {
			t.Errorf("%s: busyFraction = %v, want %v", tt.name, got, tt.want)
		}
	}
}
