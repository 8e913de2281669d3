package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	ms "github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// sameFloat is == that also calls two NaNs (or two equal infinities) the
// same.
func sameFloat(a, b float64) bool {
	return a == b || math.IsNaN(a) && math.IsNaN(b)
}

// randomSample draws n values: lognormal throughput-like figures (no
// ties) or, when tied, small integers so that ties within and between
// samples are common.
func randomSample(r *rand.Rand, n int, tied bool) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		if tied {
			xs[i] = float64(r.IntN(4))
		} else {
			xs[i] = 50000 * math.Exp(0.1*r.NormFloat64())
		}
	}
	return xs
}

func benchSample(xs []float64) *benchmath.Sample {
	// benchmath sorts the slice it is given; hand it a copy.
	return benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds)
}

func checkSummary(t *testing.T, xs []float64, confidence float64) {
	t.Helper()
	orig := slices.Clone(xs)
	got := Summarize(xs, confidence)
	want := benchmath.AssumeNothing.Summary(benchSample(xs), confidence)
	if !slices.Equal(xs, orig) {
		t.Fatalf("Summarize modified its input: %v, was %v", xs, orig)
	}
	if got.N != len(xs) || !sameFloat(got.Median, want.Center) || !sameFloat(got.Lo, want.Lo) ||
		!sameFloat(got.Hi, want.Hi) || !sameFloat(got.Confidence, want.Confidence) {
		t.Errorf("Summarize(%v, %v) = %+v, benchmath: center %v CI [%v, %v] confidence %v",
			xs, confidence, got, want.Center, want.Lo, want.Hi, want.Confidence)
	}
}

// checkU compares MannWhitneyU with benchmath's p. They must agree within
// 1e-9, except where benchmath is wrong: there MannWhitneyU must equal
// the reference two-sided exact p (twice the smaller tail, computed by
// enumeration for up to 16 values, else from go-moremath's own U
// distribution), and the difference must be explained, by a tie pattern
// that is not symmetric or by go-moremath's CDF disagreeing with
// enumeration at benchmath's point. Explained deviations are counted.
func checkU(t *testing.T, a, b []float64, dev *deviations) {
	t.Helper()
	origA, origB := slices.Clone(a), slices.Clone(b)
	got := MannWhitneyU(a, b)
	want := benchmath.AssumeNothing.Compare(benchSample(a), benchSample(b)).P
	if !slices.Equal(a, origA) || !slices.Equal(b, origB) {
		t.Fatalf("MannWhitneyU modified its input")
	}
	if math.IsNaN(got) || got < 0 || got > 1 {
		t.Fatalf("MannWhitneyU(%v, %v) = %v, not a p-value", a, b, got)
	}
	if math.Abs(got-want) <= 1e-9 {
		return
	}
	n1, n2 := len(a), len(b)
	u1, ties := uStatistic(a, b)
	u2 := float64(n1*n2) - u1
	if len(ties) == n1+n2 || n1 > tiesExactLimit || n2 > tiesExactLimit {
		t.Errorf("MannWhitneyU(%v, %v) = %v, benchmath %v", a, b, got, want)
		return
	}
	merged := append(slices.Clone(a), b...)
	slices.Sort(merged)
	cdf := func(n1 int, u float64) float64 {
		return ms.UDist{N1: n1, N2: len(merged) - n1, T: ties}.CDF(u)
	}
	if len(merged) <= 16 {
		cdf = func(n1 int, u float64) float64 { return bruteUCDF(merged, n1, u) }
	}
	ref := min(1, 2*min(cdf(n1, u1), cdf(n2, u2)))
	if math.Abs(got-ref) > 1e-9 {
		t.Errorf("MannWhitneyU(%v, %v) = %v, benchmath %v, reference exact p %v", a, b, got, want, ref)
		return
	}
	usmall := min(u1, u2)
	msWrong := len(merged) <= 16 && math.Abs(ms.UDist{N1: n1, N2: n2, T: ties}.CDF(usmall)-bruteUCDF(merged, n1, usmall)) > 1e-9
	if slices.Equal(ties, reversed(ties)) && !msWrong {
		t.Errorf("MannWhitneyU(%v, %v) = %v, benchmath %v: unexplained (ties %v symmetric, go-moremath's CDF right)", a, b, got, want, ties)
		return
	}
	dev.n++
	if (got < 0.05) != (want < 0.05) {
		dev.verdict++
	}
	if want > 1 {
		dev.above1++
	}
}

// deviations counts explained differences from benchmath: all, those that
// change significance at 0.05, and those where benchmath's p exceeds 1.
type deviations struct{ n, verdict, above1 int }

func (d deviations) String() string {
	return fmt.Sprintf("%d explained deviations from benchmath (asymmetric ties): %d change significance at 0.05, %d have benchmath p > 1", d.n, d.verdict, d.above1)
}

func reversed(xs []int) []int {
	r := slices.Clone(xs)
	slices.Reverse(r)
	return r
}

// bruteUCDF is P(U <= u) for a first sample of n1 of the sorted values,
// by enumerating every split and counting U pair by pair.
func bruteUCDF(vals []float64, n1 int, u float64) float64 {
	us := bruteUs(vals, n1)
	le, _ := slices.BinarySearch(us, u+0.25) // U is a multiple of 1/2
	return float64(le) / float64(len(us))
}

var bruteUsCache = map[string][]float64{}

// bruteUs is U for every choice of n1 of vals as the first sample,
// sorted.
func bruteUs(vals []float64, n1 int) []float64 {
	key := fmt.Sprint(vals, n1)
	if us, ok := bruteUsCache[key]; ok {
		return us
	}
	var us []float64
	for mask := 0; mask < 1<<len(vals); mask++ {
		if popcount(mask) != n1 {
			continue
		}
		u := 0.0
		for i, x := range vals {
			if mask&(1<<i) == 0 {
				continue
			}
			for j, y := range vals {
				if mask&(1<<j) != 0 {
					continue
				}
				switch {
				case x > y:
					u++
				case x == y:
					u += 0.5
				}
			}
		}
		us = append(us, u)
	}
	slices.Sort(us)
	bruteUsCache[key] = us
	return us
}

// TestAgainstBenchmath draws seeded random samples of every size pair
// 1..12 x 1..12, with and without ties, and checks the median, its CI and
// the U test's p-value against golang.org/x/perf/benchmath.
func TestAgainstBenchmath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 12))
	const reps = 3
	var dev deviations
	defer func() { t.Log(dev) }()
	for n1 := 1; n1 <= 12; n1++ {
		for n2 := 1; n2 <= 12; n2++ {
			for _, tied := range []bool{false, true} {
				for range reps {
					a, b := randomSample(r, n1, tied), randomSample(r, n2, tied)
					if tied && r.IntN(2) == 0 {
						// Ties between the arms only, distinct within.
						a, b = permutedRanks(r, n1, n2)
					}
					checkU(t, a, b, &dev)
					if n1 == n2 {
						for _, conf := range []float64{0.95, 0.9, 0.99} {
							checkSummary(t, a, conf)
						}
					}
				}
			}
		}
	}
}

// permutedRanks splits the values 1..n1+n2, each repeated at random 1 or
// 2 times, between the arms at random.
func permutedRanks(r *rand.Rand, n1, n2 int) (a, b []float64) {
	var all []float64
	for v := 1.0; len(all) < n1+n2; v++ {
		all = append(all, v)
		if r.IntN(2) == 0 && len(all) < n1+n2 {
			all = append(all, v)
		}
	}
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:n1], all[n1:]
}

// TestAgainstBenchmathLarge covers the other branches: the median CI's
// normal approximation (n > 30), and the U test's normal approximation
// (more than 25 values with ties, more than 50 without) and its exact
// no-ties distribution up to 50.
func TestAgainstBenchmathLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 13))
	var dev deviations
	defer func() { t.Log(dev) }()
	for n := 0; n <= 80; n++ {
		for _, tied := range []bool{false, true} {
			xs := randomSample(r, n, tied)
			for _, conf := range []float64{0.95, 0.9, 0.99, 0.5} {
				checkSummary(t, xs, conf)
			}
		}
	}
	sizes := [][2]int{{24, 25}, {25, 25}, {26, 25}, {30, 31}, {40, 12}, {50, 50}, {51, 50}, {60, 70}}
	for _, sz := range sizes {
		for _, tied := range []bool{false, true} {
			a, b := randomSample(r, sz[0], tied), randomSample(r, sz[1], tied)
			checkU(t, a, b, &dev)
			// A shifted head, so small p-values are covered too.
			for i := range b {
				b[i] *= 1.05
			}
			checkU(t, a, b, &dev)
		}
	}
}

func TestEdgeCases(t *testing.T) {
	for _, xs := range [][]float64{nil, {}, {3}, {3, 3}, {5, 5, 5, 5, 5, 5, 5}, {1, 2}} {
		for _, conf := range []float64{0.95, 1, 0} {
			checkSummary(t, xs, conf)
		}
	}

	s := Summarize(nil, 0.95)
	if s.N != 0 || !math.IsNaN(s.Median) || !math.IsInf(s.Lo, -1) || !math.IsInf(s.Hi, 1) {
		t.Errorf("Summarize(nil) = %+v, want N 0, NaN median, -Inf..+Inf", s)
	}
	s = Summarize([]float64{7}, 0.95)
	if s.Median != 7 || !math.IsInf(s.Lo, -1) || !math.IsInf(s.Hi, 1) {
		t.Errorf("Summarize({7}) = %+v, want median 7, -Inf..+Inf", s)
	}
	// 95% needs 6 values for two finite bounds: x(1)..x(5) covers the
	// median with 93.75% only, so benchmath takes (-Inf, x(5)] at 96.875%.
	s = Summarize([]float64{1, 2, 3, 4, 5}, 0.95)
	if s.Median != 3 || !math.IsInf(s.Lo, -1) || s.Hi != 5 || s.Confidence != 1-1.0/32 {
		t.Errorf("Summarize(1..5) = %+v, want median 3, -Inf..5 at 0.96875", s)
	}
	s = Summarize([]float64{6, 1, 5, 2, 4, 3}, 0.95)
	if s.Median != 3.5 || s.Lo != 1 || s.Hi != 6 || s.Confidence != 1-2.0/64 {
		t.Errorf("Summarize(1..6) = %+v, want median 3.5, 1..6 at 0.96875", s)
	}
	s = Summarize([]float64{4, 4, 4, 4, 4, 4}, 0.95)
	if s.Median != 4 || s.Lo != 4 || s.Hi != 4 {
		t.Errorf("Summarize(all 4) = %+v, want 4 [4, 4]", s)
	}
	s = Summarize([]float64{1, math.NaN(), 3}, 0.95)
	if !math.IsNaN(s.Median) || !math.IsNaN(s.Lo) || !math.IsNaN(s.Hi) {
		t.Errorf("Summarize with a NaN = %+v, want NaN throughout", s)
	}

	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		{nil, []float64{1, 2}, 1},
		{[]float64{1, 2}, nil, 1},
		{[]float64{2, 2, 2}, []float64{2, 2}, 1}, // all equal
		// Asymmetric ties: P(U1 >= 2) = 1/3, so p = 2/3 (benchmath
		// says 4/3).
		{[]float64{1}, []float64{0, 0}, 2.0 / 3},
		{[]float64{0, 0}, []float64{1}, 2.0 / 3},
		{[]float64{1}, []float64{2}, 1},
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		{[]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 2.0 / 252},
		{[]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 2.0 / 70},
	} {
		if got := MannWhitneyU(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("MannWhitneyU(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if p := MannWhitneyU([]float64{1, math.NaN()}, []float64{3, 4}); !math.IsNaN(p) {
		t.Errorf("MannWhitneyU with a NaN = %v, want NaN", p)
	}
}

// TestUCDFBruteForce checks the exact U distribution, with and without
// ties, against counting U pair by pair over every split of the values.
func TestUCDFBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 14))
	for n := 2; n <= 12; n++ {
		for n1 := 1; n1 < n; n1++ {
			for _, tied := range []bool{false, true} {
				vals := randomSample(r, n, tied)
				slices.Sort(vals)
				_, ties := uStatistic(vals[:n1], vals[n1:])
				for twoU := 0; twoU <= 2*n1*(n-n1); twoU++ {
					u := float64(twoU) / 2
					want := bruteUCDF(vals, n1, u)
					if got := uCDF(n1, ties, u); math.Abs(got-want) > 1e-12 {
						t.Fatalf("uCDF(%d, %v, %v) = %v, brute force %v (values %v)", n1, ties, u, got, want, vals)
					}
				}
			}
		}
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestRelSpreadPct(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{100}, 0},
		{[]float64{100, 100, 100}, 0},
		// median 102, deviations 0,1,2,3,48 -> MAD 2 -> 2/102.
		{[]float64{100, 99, 102, 103, 150}, 200.0 / 102},
		// median 10.5, deviations .5,.5,1.5,1.5 -> MAD 1 -> 9.52..%.
		{[]float64{9, 10, 11, 12}, 100 / 10.5},
		{[]float64{-100, -99, -102}, 1},
		{[]float64{-1, 0, 1}, math.Inf(1)},
		{[]float64{0, 0, 0}, 0},
	} {
		orig := slices.Clone(c.xs)
		got := RelSpreadPct(c.xs)
		if math.Abs(got-c.want) > 1e-12 && got != c.want {
			t.Errorf("RelSpreadPct(%v) = %v, want %v", c.xs, got, c.want)
		}
		if !slices.Equal(orig, c.xs) {
			t.Errorf("RelSpreadPct modified its input")
		}
	}
	if got := RelSpreadPct([]float64{1, math.NaN()}); !math.IsNaN(got) {
		t.Errorf("RelSpreadPct with a NaN = %v, want NaN", got)
	}
}

func TestHolm(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		ps   []float64
		want []bool
	}{
		{nil, []bool{}},
		{[]float64{0.049}, []bool{true}},
		{[]float64{0.05}, []bool{false}}, // strict, like p < alpha
		// alpha/3, alpha/2, alpha: 0.01 < .0167, 0.02 < .025, 0.04 < .05.
		{[]float64{0.04, 0.01, 0.02}, []bool{true, true, true}},
		// 0.03 >= .025 stops the procedure: 0.04 is kept though < .05.
		{[]float64{0.01, 0.03, 0.04}, []bool{true, false, false}},
		// The smallest fails: nothing is rejected.
		{[]float64{0.02, 0.001, 0.5, 0.9}, []bool{false, true, false, false}},
		{[]float64{0.017, 0.001, 0.5, 0.9}, []bool{false, true, false, false}},
		{[]float64{0.016, 0.001, 0.5, 0.9}, []bool{true, true, false, false}},
		{[]float64{nan, 0.001}, []bool{false, true}},
		{[]float64{nan, 0.03}, []bool{false, false}}, // NaN still counts in m
	} {
		orig := slices.Clone(c.ps)
		got := Holm(c.ps, 0.05)
		if !slices.Equal(got, c.want) {
			t.Errorf("Holm(%v, 0.05) = %v, want %v", c.ps, got, c.want)
		}
		if fmt.Sprint(orig) != fmt.Sprint(c.ps) {
			t.Errorf("Holm modified its input")
		}
	}
}
