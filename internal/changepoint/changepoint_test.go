package changepoint

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// noisy is n values around level(i) with a relative noise of sd, from a
// fixed seed: the same series every run.
func noisy(seed uint64, n int, sd float64, level func(i int) float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = level(i) * (1 + sd*r.NormFloat64())
	}
	return xs
}

func opts(min float64) Options {
	o := Defaults
	o.MinMagnitude = min
	return o
}

func indexes(cps []ChangePoint) []int {
	var out []int
	for _, c := range cps {
		out = append(out, c.Index)
	}
	return out
}

func near(got, want []int, slack int) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] < want[i]-slack || got[i] > want[i]+slack {
			return false
		}
	}
	return true
}

// Three 10% steps in 60 entries with 2% noise: all three found within
// one entry, no other; on every one of 20 seeds.
func TestThreeSteps(t *testing.T) {
	for seed := range uint64(20) {
		xs := noisy(seed, 60, 0.02, func(i int) float64 {
			switch {
			case i < 15:
				return 100
			case i < 30:
				return 90 // −10%
			case i < 45:
				return 99
			}
			return 89.1
		})
		cps := Detect(xs, opts(0.03))
		if got := indexes(cps); !near(got, []int{15, 30, 45}, 1) {
			t.Errorf("seed %d: change points at %v, want 15, 30, 45 (±1)", seed, got)
		}
	}
}

// No change: 60 entries of 2% noise give no change point, on every one
// of 20 seeds.
func TestNoChange(t *testing.T) {
	for seed := range uint64(20) {
		xs := noisy(100+seed, 60, 0.02, func(int) float64 { return 100 })
		if cps := Detect(xs, opts(0.03)); len(cps) != 0 {
			t.Errorf("seed %d: %+v, want none", seed, cps)
		}
	}
}

// A slope of 2% per entry over 5 entries is one change point, inside the
// slope, with the change it adds up to.
func TestSlope(t *testing.T) {
	for seed := range uint64(20) {
		xs := noisy(200+seed, 60, 0.01, func(i int) float64 {
			switch {
			case i < 30:
				return 100
			case i < 35:
				return 100 * (1 - 0.02*float64(i-29))
			}
			return 90
		})
		cps := Detect(xs, opts(0.03))
		if len(cps) != 1 || cps[0].Index < 29 || cps[0].Index > 36 || cps[0].Change > -0.05 {
			t.Errorf("seed %d: %+v, want one change point in the slope (30-35), about −8%%", seed, cps)
		}
	}
}

// Two changes 4 entries apart are both found.
func TestNearbyChanges(t *testing.T) {
	xs := noisy(7, 40, 0.005, func(i int) float64 {
		switch {
		case i < 20:
			return 100
		case i < 24:
			return 85
		}
		return 100
	})
	if got := indexes(Detect(xs, opts(0.03))); !near(got, []int{20, 24}, 0) {
		t.Errorf("change points at %v, want 20 and 24", got)
	}
}

// MinMagnitude: a real 2% step in quiet data is not a change when the
// floor is 3%, and is one when it is 1%.
func TestMinMagnitude(t *testing.T) {
	xs := noisy(9, 40, 0.002, func(i int) float64 {
		if i < 20 {
			return 100
		}
		return 98
	})
	if cps := Detect(xs, opts(0.03)); len(cps) != 0 {
		t.Errorf("floor 3%%: %+v, want none", cps)
	}
	if got := indexes(Detect(xs, opts(0.01))); !near(got, []int{20}, 0) {
		t.Errorf("floor 1%%: %v, want 20", got)
	}
}

// Pure: the same series gives the same answer; too short a series, none.
func TestDeterministicAndShort(t *testing.T) {
	xs := noisy(11, 50, 0.02, func(i int) float64 { return 100 - float64(i/25)*15 })
	a, b := Detect(xs, opts(0.03)), Detect(append([]float64(nil), xs...), opts(0.03))
	if !reflect.DeepEqual(a, b) || len(a) != 1 {
		t.Errorf("%+v then %+v, want one change point twice", a, b)
	}
	if cps := Detect([]float64{1, 2, 3, 10, 11}, Defaults); cps != nil {
		t.Errorf("5 values (fewer than 2 × MinSegment): %+v", cps)
	}
}

// Each side's own floors: the drawn history of docs/report.md (six
// entries 10% above the rest, each one a high draw that its own repeat
// disowned by 9 to 16%) is no change point when the floors are given,
// and is two without them; the same six entries with small floors are a
// change, a side that knows no floor asks only MinMagnitude, and a
// change point says the least change it had to show.
func TestSideFloors(t *testing.T) {
	const n = 46
	xs := noisy(13, n, 0.01, func(i int) float64 {
		if i >= 34 && i < 40 {
			return 110
		}
		return 100
	})
	floors := func(high, rest float64) []float64 {
		fs := make([]float64, n)
		for i := range fs {
			fs[i] = rest
			if i >= 34 && i < 40 {
				fs[i] = high
			}
		}
		return fs
	}
	for _, tc := range []struct {
		name   string
		floors []float64
		want   []int
		least  float64 // of the first change point
	}{
		{"no floors (Detect)", nil, []int{34, 40}, 0.03},
		{"the six disowned by their repeats", floors(0.13, 0.02), nil, 0},
		{"the six repeated within 2%", floors(0.02, 0.02), []int{34, 40}, 0.03},
		{"floors unknown (0 and NaN)", floors(math.NaN(), 0), []int{34, 40}, 0.03},
		{"the rest disowned, the six not", floors(0.02, 0.12), nil, 0},
		{"floors of 5%: the least change", floors(0.05, 0.05), []int{34, 40}, 0.05},
	} {
		cps := DetectFloored(xs, tc.floors, opts(0.03))
		if got := indexes(cps); !near(got, tc.want, 0) {
			t.Errorf("%s: change points at %v, want %v", tc.name, got, tc.want)
			continue
		}
		if len(cps) > 0 && math.Abs(cps[0].MinMagnitude-tc.least) > 1e-12 {
			t.Errorf("%s: least change %g, want %g", tc.name, cps[0].MinMagnitude, tc.least)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("floors shorter than the values: no panic")
		}
	}()
	DetectFloored(xs, make([]float64, n-1), opts(0.03))
}
