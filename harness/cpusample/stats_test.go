package cpusample

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestP95(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0.7}, 0.7},
		{[]float64{3, 1, 2}, 3},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 19},
		{[]float64{20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 19},
	}
	for _, tt := range tests {
		if got := p95(tt.in); got != tt.want {
			t.Errorf("p95(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestFraction(t *testing.T) {
	s := Stats{MeanCores: 2.4, P95Cores: 2.85}
	tests := []struct {
		pinned           int
		wantMean, want95 float64
	}{
		{3, 0.8, 0.95},
		{1, 2.4, 2.85},
		{0, 0, 0},
	}
	for _, tt := range tests {
		m, p := s.Fraction(tt.pinned)
		if diff := cmp.Diff([2]float64{tt.wantMean, tt.want95}, [2]float64{m, p}, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
			t.Errorf("Fraction(%d) (-want +got):\n%s", tt.pinned, diff)
		}
	}
}
