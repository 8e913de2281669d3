package stats

import (
	"math"
	"testing"

	ms "github.com/aclements/go-moremath/stats"
)

// WelchT agrees with go-moremath's TwoSampleWelchTTest on t, df and p.
func TestWelchTCrossCheck(t *testing.T) {
	samples := [][2][]float64{
		{{100, 102, 98, 101, 99}, {90, 91, 89, 92, 88, 90}},
		{{1, 2, 3, 4}, {1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5}},
		{{10, 10.1, 9.9}, {10.05, 9.95, 10.0}},
		{{5, 7}, {6, 9, 1, 4}},
	}
	for _, s := range samples {
		tt, df, p := WelchT(s[0], s[1])
		want, err := ms.TwoSampleWelchTTest(ms.Sample{Xs: s[1]}, ms.Sample{Xs: s[0]}, ms.LocationDiffers)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(tt-want.T) > 1e-9*math.Max(1, math.Abs(want.T)) || math.Abs(df-want.DoF) > 1e-9*want.DoF || math.Abs(p-want.P) > 1e-7 {
			t.Errorf("WelchT(%v, %v) = t %g df %g p %g; go-moremath t %g df %g p %g", s[0], s[1], tt, df, p, want.T, want.DoF, want.P)
		}
	}
	if _, _, p := WelchT([]float64{1}, []float64{1, 2}); !math.IsNaN(p) {
		t.Errorf("one value on a side: p %g, want NaN", p)
	}
	if _, _, p := WelchT([]float64{3, 3}, []float64{3, 3, 3}); p != 1 {
		t.Errorf("equal constants: p %g, want 1", p)
	}
	if _, _, p := WelchT([]float64{3, 3}, []float64{4, 4, 4}); p != 0 {
		t.Errorf("different constants: p %g, want 0", p)
	}
}
