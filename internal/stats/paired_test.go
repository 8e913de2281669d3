package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLogRatios(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	base := []float64{100, 200, 50, 0, -1, 10, nan, 10, inf, 7}
	head := []float64{110, 100, 50, 5, 1, 0, 10, inf, 10}
	want := []float64{math.Log(1.1), math.Log(0.5), 0, nan, nan, nan, nan, nan, nan}
	origB, origH := slices.Clone(base), slices.Clone(head)
	got := LogRatios(base, head)
	if len(got) != len(head) {
		t.Fatalf("LogRatios of %d and %d values gave %d, want the shorter length", len(base), len(head), len(got))
	}
	for i := range want {
		if !sameFloat(got[i], want[i]) && math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("LogRatios[%d] of %v/%v = %v, want %v", i, head[i], base[i], got[i], want[i])
		}
	}
	if fmt.Sprint(base) != fmt.Sprint(origB) || fmt.Sprint(head) != fmt.Sprint(origH) {
		t.Error("LogRatios modified its input")
	}
	// Swapping the arms negates every value exactly.
	r := rand.New(rand.NewPCG(1, 1))
	a, b := randomSample(r, 20, false), randomSample(r, 20, false)
	ab, ba := LogRatios(a, b), LogRatios(b, a)
	for i := range ab {
		if ab[i] != -ba[i] {
			t.Errorf("LogRatios(a, b)[%d] = %v, LogRatios(b, a) = %v: not negatives", i, ab[i], ba[i])
		}
	}
	if SignedRank(ab) != SignedRank(ba) {
		t.Errorf("SignedRank depends on which arm is base: %v, %v", SignedRank(ab), SignedRank(ba))
	}
	for _, c := range [][2][]float64{{nil, nil}, {nil, {1}}, {{1, 2}, {}}} {
		if got := LogRatios(c[0], c[1]); got == nil || len(got) != 0 {
			t.Errorf("LogRatios(%v, %v) = %#v, want empty", c[0], c[1], got)
		}
	}
}

// bruteSignedRankP is SignedRank by definition: zeros dropped, each
// absolute value ranked as 1 + the number of smaller ones + half the
// number of others equal to it, and P(W+ <= w), P(W+ >= w) counted over
// all 2^n sign assignments.
func bruteSignedRankP(d []float64) float64 {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1
	}
	ranks := make([]float64, n)
	w := 0.0
	for i, x := range nz {
		less, eq := 0, 0
		for j, y := range nz {
			switch {
			case math.Abs(y) < math.Abs(x):
				less++
			case math.Abs(y) == math.Abs(x) && j != i:
				eq++
			}
		}
		ranks[i] = 1 + float64(less) + float64(eq)/2
		if x > 0 {
			w += ranks[i]
		}
	}
	lower, upper := 0, 0
	for mask := 0; mask < 1<<n; mask++ {
		s := 0.0
		for i, r := range ranks {
			if mask&(1<<i) != 0 {
				s += r
			}
		}
		if s <= w {
			lower++
		}
		if s >= w {
			upper++
		}
	}
	return min(1, 2*float64(min(lower, upper))/float64(int(1)<<n))
}

// signedSample draws n differences: continuous (no ties, no zeros), or
// small integers -3..3 so that zeros and ties in |d| (of equal and of
// opposite signs) are common.
func signedSample(r *rand.Rand, n int, tied bool) []float64 {
	d := make([]float64, n)
	for i := range d {
		if tied {
			d[i] = float64(r.IntN(7) - 3)
		} else {
			d[i] = r.NormFloat64() + 0.3
		}
	}
	return d
}

func TestSignedRankBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	small := 0
	for n := 0; n <= 12; n++ {
		for _, tied := range []bool{false, true} {
			for range 25 {
				d := signedSample(r, n, tied)
				if tied && r.IntN(3) == 0 {
					// A one-sided sample, so tiny p-values with
					// ties are covered too.
					for i := range d {
						d[i] = math.Abs(d[i])
					}
				}
				orig := slices.Clone(d)
				got, want := SignedRank(d), bruteSignedRankP(d)
				if !slices.Equal(d, orig) {
					t.Fatal("SignedRank modified its input")
				}
				if got != want {
					t.Errorf("SignedRank(%v) = %v, brute force %v", d, got, want)
				}
				if got < 0.05 {
					small++
				}
			}
		}
	}
	if small < 20 {
		t.Errorf("only %d samples had p < 0.05: the small tail is hardly exercised", small)
	}
}

func TestSignedRankKnown(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	// Hollander and Wolfe's depression scores (R's ?wilcox.test): x - y
	// of 9 patients, V = 40, two-sided p = 20/512.
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	hw := make([]float64, len(x))
	for i := range x {
		hw[i] = x[i] - y[i]
	}
	for _, c := range []struct {
		d    []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4, 5, 6}, 0.03125},
		{[]float64{1, 2, 3, 4, 5}, 0.0625},
		{[]float64{-1, -2, -3, -4, -5, -6}, 0.03125},
		{[]float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}, 1.0 / 64},
		{[]float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, 1.0 / 128},
		{[]float64{0, 0, 1, 2, 3, 4, 5, 6}, 0.03125}, // zeros dropped
		{[]float64{2, 2, 2, 2, 2, 2}, 0.03125},       // ties, one sign
		{[]float64{1, -1}, 1},
		{[]float64{5}, 1},
		{[]float64{-5}, 1},
		{nil, 1},
		{[]float64{}, 1},
		{[]float64{0, 0, 0}, 1},
		{hw, 20.0 / 512},
		// W+ = 1 of 15: P(W+ <= 1) = 2/32.
		{[]float64{-5, -4, -3, -2, 1}, 0.125},
		// Infinite values rank as the largest.
		{[]float64{1, 2, 3, 4, 5, inf}, 0.03125},
		{[]float64{-inf, inf, 1}, 1},
		{[]float64{1, nan, 3}, nan},
	} {
		if got := SignedRank(c.d); !sameFloat(got, c.want) {
			t.Errorf("SignedRank(%v) = %v, want %v", c.d, got, c.want)
		}
	}
}

// TestSignedRankNormal checks the normal approximation used beyond 50
// non-zero values: its variance (the sum of squared mid-ranks over 4)
// equals the textbook tie-corrected one, it is close to the exact p where
// both can be computed, and it is what SignedRank returns from 51 values.
func TestSignedRankNormal(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{51, 60, 80} {
		for _, tied := range []bool{false, true} {
			for _, shift := range []float64{0, 0.3, 0.6} {
				d := signedSample(r, n, tied)
				for i := range d {
					d[i] += shift - 0.3
				}
				twoRanks, twoW := signedRanks(d)
				m := len(twoRanks)
				sum, sumSq := 0, 0.0
				for _, v := range twoRanks {
					sum += v
					sumSq += float64(v * v)
				}
				tieTerm := 0.0
				for i := 0; i < m; {
					j := i
					for j < m && twoRanks[j] == twoRanks[i] {
						j++
					}
					k := float64(j - i)
					tieTerm += k*k*k - k
					i = j
				}
				mm := float64(m)
				if textbook := mm*(mm+1)*(2*mm+1)/24 - tieTerm/48; math.Abs(sumSq/16-textbook) > 1e-9 {
					t.Errorf("variance of W+: %v from mid-ranks, %v textbook", sumSq/16, textbook)
				}
				if m <= signedRankExactLimit {
					continue // the zeros dropped leave an exact test
				}
				got := SignedRank(d)
				if want := normalSignedRankP(twoW, sum, sumSq/4); got != want {
					t.Errorf("SignedRank of %d values = %v, want the normal approximation %v", m, got, want)
				}
				// The exact p, by the counts (rounded beyond 2^53,
				// still far more precise than needed here).
				counts := signedRankCounts(twoRanks)
				lower, upper := 0.0, 0.0
				for s, c := range counts {
					if s <= twoW {
						lower += c
					}
					if s >= twoW {
						upper += c
					}
				}
				exact := min(1, math.Ldexp(2*min(lower, upper), -m))
				// In the far tail the normal's is the heavier:
				// conservative, by up to 2x at p ~ 1e-4.
				if math.Abs(got-exact) > 0.01 || exact < 0.01 && !(got >= exact && got < 2*exact) {
					t.Errorf("n = %d (ties %v): normal p %v, exact %v", m, tied, got, exact)
				}
			}
		}
	}
	// 50 values is exact: all positive gives 2/2^50 exactly; 51 is not.
	d := make([]float64, 51)
	for i := range d {
		d[i] = float64(i + 1)
	}
	if p := SignedRank(d[:50]); p != math.Ldexp(1, -49) {
		t.Errorf("SignedRank of 50 positive values = %v, want 2^-49", p)
	}
	if p := SignedRank(d); p == math.Ldexp(1, -50) || p <= 0 || p > 1e-9 {
		t.Errorf("SignedRank of 51 positive values = %v, want the normal approximation's tiny p", p)
	}
}

func TestMinPairs(t *testing.T) {
	for n, want := range map[int]float64{-1: 1, 0: 1, 1: 1, 2: 0.5, 5: 0.0625, 6: 0.03125, 7: 0.015625, 8: 0.0078125} {
		if got := MinSignedRankP(n); got != want {
			t.Errorf("MinSignedRankP(%d) = %v, want %v", n, got, want)
		}
	}
	for _, c := range []struct {
		alpha      float64
		pairs, unp int
	}{
		{0.05, 6, 4}, {0.01, 8, 5}, {0.1, 5, 4}, {0.0625, 6, 4}, {0.1001, 5, 3},
		{1, 2, 2}, {2, 0, 0}, {0, math.MaxInt, math.MaxInt}, {-1, math.MaxInt, math.MaxInt},
		{math.NaN(), math.MaxInt, math.MaxInt},
	} {
		if got := MinPairs(c.alpha); got != c.pairs {
			t.Errorf("MinPairs(%v) = %d, want %d", c.alpha, got, c.pairs)
		}
		if got := MinUnpairedN(c.alpha); got != c.unp {
			t.Errorf("MinUnpairedN(%v) = %d, want %d", c.alpha, got, c.unp)
		}
	}
	if n := MinPairs(math.SmallestNonzeroFloat64); n < 1000 || n == math.MaxInt {
		t.Errorf("MinPairs(smallest float) = %d", n)
	}
	if n := MinUnpairedN(math.SmallestNonzeroFloat64); n < 500 || n == math.MaxInt {
		t.Errorf("MinUnpairedN(smallest float) = %d", n)
	}
	// Both agree with the tests themselves: at the minimum the most
	// extreme outcome is significant, one below it is not.
	for _, alpha := range []float64{0.1, 0.05, 0.02, 0.01, 0.001} {
		n := MinPairs(alpha)
		pos := func(n int) []float64 {
			d := make([]float64, n)
			for i := range d {
				d[i] = float64(i + 1)
			}
			return d
		}
		if !(SignedRank(pos(n)) < alpha) || SignedRank(pos(n-1)) < alpha {
			t.Errorf("MinPairs(%v) = %d, but SignedRank of %d and %d positive values = %v, %v",
				alpha, n, n, n-1, SignedRank(pos(n)), SignedRank(pos(n-1)))
		}
		m := MinUnpairedN(alpha)
		arms := func(n int) (a, b []float64) {
			for i := range n {
				a, b = append(a, float64(i)), append(b, float64(n+i))
			}
			return a, b
		}
		a, b := arms(m)
		a1, b1 := arms(m - 1)
		if !(MannWhitneyU(a, b) < alpha) || MannWhitneyU(a1, b1) < alpha {
			t.Errorf("MinUnpairedN(%v) = %d, but U p at %d and %d per arm = %v, %v",
				alpha, m, m, m-1, MannWhitneyU(a, b), MannWhitneyU(a1, b1))
		}
	}
}

// brutePairedShift is PairedShiftCI by definition: every Walsh average,
// their ordinary median, and the largest k with P(W+ <= k-1) <=
// (1-confidence)/2 by enumerating every sign assignment of the ranks 1..n.
func brutePairedShift(d []float64, confidence float64) (est, lo, hi float64, ok bool) {
	var w []float64
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	m := len(w)
	est = w[m/2]
	if m%2 == 0 {
		est = (w[m/2-1] + w[m/2]) / 2
	}
	n := len(d)
	ws := make([]int, 0, 1<<n)
	for mask := 0; mask < 1<<n; mask++ {
		s := 0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += i + 1
			}
		}
		ws = append(ws, s)
	}
	slices.Sort(ws)
	cdf := func(x int) float64 {
		le, _ := slices.BinarySearch(ws, x+1)
		return float64(le) / float64(len(ws))
	}
	tail := (1 - confidence) / 2
	k := 0
	for k+1 <= m/2+1 && cdf(k) <= tail*(1+1e-9) {
		k++
	}
	if k == 0 {
		return est, math.NaN(), math.NaN(), false
	}
	return est, w[k-1], w[m-k], true
}

func TestPairedShiftCIBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	dualities, excluded := 0, 0
	for n := 1; n <= 12; n++ {
		for _, tied := range []bool{false, true} {
			for _, conf := range []float64{0.95, 0.9, 0.99, 0.5} {
				for range 3 {
					d := signedSample(r, n, tied)
					orig := slices.Clone(d)
					est, lo, hi, ok := PairedShiftCI(d, conf)
					west, wlo, whi, wok := brutePairedShift(d, conf)
					if !slices.Equal(d, orig) {
						t.Fatal("PairedShiftCI modified its input")
					}
					near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
					if ok != wok || !near(est, west) || ok && (lo != wlo || hi != whi) {
						t.Errorf("PairedShiftCI(%v, %v) = %v [%v, %v] %v, brute force %v [%v, %v] %v",
							d, conf, est, lo, hi, ok, west, wlo, whi, wok)
					}
					if ok && !(lo <= est && est <= hi) {
						t.Errorf("PairedShiftCI(%v, %v): estimate %v outside [%v, %v]", d, conf, est, lo, hi)
					}
					if !ok && (!math.IsNaN(lo) || !math.IsNaN(hi)) {
						t.Errorf("PairedShiftCI not ok but lo, hi = %v, %v", lo, hi)
					}
					// Without ties or zeros (continuous samples)
					// the interval and the test agree.
					if ok && !tied {
						p := SignedRank(d)
						excl := lo > 0 || hi < 0
						if excl != (p <= (1-conf)*(1+1e-9)) {
							t.Errorf("PairedShiftCI(%v, %v) = [%v, %v] but p = %v", d, conf, lo, hi, p)
						}
						dualities++
						if excl {
							excluded++
						}
					}
				}
			}
		}
	}
	t.Logf("%d intervals checked against SignedRank, %d excluded 0", dualities, excluded)
	if excluded == 0 || excluded == dualities {
		t.Errorf("the duality saw %d of %d exclude 0: both outcomes must be exercised", excluded, dualities)
	}
}

func TestPairedShiftCIKnown(t *testing.T) {
	// Hollander and Wolfe's depression scores, as R's
	// wilcox.test(x, y, paired = TRUE, conf.int = TRUE): (pseudo)median
	// 0.46, 95% interval 0.010 .. 0.786 (the 6th smallest and largest of
	// the 45 Walsh averages: P(W+ <= 5) = 10/512 <= 0.025 < 14/512).
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	est, lo, hi, ok := PairedShiftCI(d, 0.95)
	if !ok || math.Abs(est-0.46) > 1e-12 || math.Abs(lo-0.01) > 1e-12 || math.Abs(hi-0.786) > 1e-12 {
		t.Errorf("PairedShiftCI(depression) = %v [%v, %v] %v, want 0.46 [0.010, 0.786]", est, lo, hi, ok)
	}

	// 6 pairs reach 95% (1/64 <= 0.025) with the extremes: the smallest
	// and largest d; 5 do not (1/32). At 99%: 8 (1/256 <= 0.005), not 7.
	for _, c := range []struct {
		n    int
		conf float64
		ok   bool
	}{{5, 0.95, false}, {6, 0.95, true}, {7, 0.99, false}, {8, 0.99, true}, {1, 0.5, false}, {2, 0.5, true}} {
		d := []float64{3, -1, 4, 1.5, -5, 9, 2.6, 5.3}[:c.n]
		est, lo, hi, ok := PairedShiftCI(d, c.conf)
		if ok != c.ok || math.IsNaN(est) || !ok && (!math.IsNaN(lo) || !math.IsNaN(hi)) {
			t.Errorf("PairedShiftCI of %d at %v = %v [%v, %v] %v, want ok %v", c.n, c.conf, est, lo, hi, ok, c.ok)
		}
		if ok && c.n == 6 && c.conf == 0.95 && (lo != -5 || hi != 9) {
			t.Errorf("PairedShiftCI(%v, 0.95) = [%v, %v], want [-5, 9]", d, lo, hi)
		}
	}
	// The boundary is inclusive: 6 positive pairs give p = 1/32 and,
	// at exactly 1 - 1/32, an interval that excludes 0.
	six := []float64{1, 2, 3, 4, 5, 6}
	if _, lo, _, ok := PairedShiftCI(six, 1-1.0/32); !ok || !(lo > 0) || SignedRank(six) != 1.0/32 {
		t.Errorf("PairedShiftCI(1..6, 31/32) = lo %v ok %v, p %v: want lo > 0 and p = 1/32", lo, ok, SignedRank(six))
	}
	// All equal: a point interval; zeros: the estimate is 0.
	if est, lo, hi, ok := PairedShiftCI([]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 0.95); !ok || est != 0.1 || lo != 0.1 || hi != 0.1 {
		t.Errorf("PairedShiftCI(all 0.1) = %v [%v, %v] %v, want 0.1 [0.1, 0.1]", est, lo, hi, ok)
	}
	if est, lo, hi, ok := PairedShiftCI(make([]float64, 6), 0.95); !ok || est != 0 || lo != 0 || hi != 0 {
		t.Errorf("PairedShiftCI(all 0) = %v [%v, %v] %v, want 0 [0, 0]", est, lo, hi, ok)
	}
	// One value: the estimate only.
	if est, _, _, ok := PairedShiftCI([]float64{0.2}, 0.95); ok || est != 0.2 {
		t.Errorf("PairedShiftCI({0.2}) = %v %v, want 0.2, not ok", est, ok)
	}

	nan, inf := math.NaN(), math.Inf(1)
	for _, d := range [][]float64{nil, {}, {1, 2, nan, 4, 5, 6}, {1, 2, inf, 4, 5, 6}, {1, 2, -inf, 4, 5, 6}} {
		est, lo, hi, ok := PairedShiftCI(d, 0.95)
		if ok || !math.IsNaN(est) || !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("PairedShiftCI(%v) = %v [%v, %v] %v, want NaN, not ok", d, est, lo, hi, ok)
		}
	}
	for _, conf := range []float64{0, 1, nan, -1, 2} {
		if est, lo, hi, ok := PairedShiftCI(six, conf); ok || est != 3.5 || !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("PairedShiftCI at confidence %v = %v [%v, %v] %v, want 3.5, not ok", conf, est, lo, hi, ok)
		}
	}
}

// TestTukeyRankNormal checks the normal approximation used beyond 50
// values against the exact rank where both apply: within 3 ranks of the
// n(n+1)/2, lower (wider) at 99%, by 1 higher at 90% at some n.
func TestTukeyRankNormal(t *testing.T) {
	for _, n := range []int{30, 40, 50} {
		for _, conf := range []float64{0.9, 0.95, 0.99} {
			exact := tukeyRank(n, conf)
			m := n * (n + 1) / 2
			mu := float64(m) / 2
			sigma := math.Sqrt(float64(n) * float64(n+1) * float64(2*n+1) / 24)
			approx := int(math.Floor(mu-0.5+sigma*stdNormalInvCDF((1-conf)/2))) + 1
			if d := exact - approx; d < -1 || d > 3 || conf == 0.99 && d < 0 {
				t.Errorf("tukeyRank(%d, %v) = %d exact, %d normal", n, conf, exact, approx)
			}
		}
	}
	for _, n := range []int{51, 100} {
		k := tukeyRank(n, 0.95)
		if k < 1 || k > n*(n+1)/4 {
			t.Errorf("tukeyRank(%d, 0.95) = %d", n, k)
		}
		d := signedSample(rand.New(rand.NewPCG(1, uint64(n))), n, false)
		if _, lo, hi, ok := PairedShiftCI(d, 0.95); !ok || !(lo < hi) {
			t.Errorf("PairedShiftCI of %d values = [%v, %v] %v", n, lo, hi, ok)
		}
	}
}
