package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteShift is ShiftCI by definition: every log difference, the U
// distribution by enumerating every split of n1+n2 distinct ranks, and
// the largest k with P(U <= k-1) <= (1-confidence)/2.
func bruteShift(base, head []float64, confidence float64) (est, lo, hi float64, ok bool) {
	var d []float64
	for _, b := range base {
		for _, h := range head {
			d = append(d, math.Log(h)-math.Log(b))
		}
	}
	slices.Sort(d)
	m := len(d)
	mid := d[m/2]
	if m%2 == 0 {
		mid = (d[m/2-1] + d[m/2]) / 2
	}
	est = math.Exp(mid)

	n1, n2 := len(base), len(head)
	ranks := make([]float64, n1+n2)
	for i := range ranks {
		ranks[i] = float64(i)
	}
	tail := (1 - confidence) / 2
	k := 0 // the next candidate is k+1, allowed when P(U <= k) <= tail
	for k+1 <= m/2 && bruteUCDF(ranks, n1, float64(k)) <= tail*(1+1e-9) {
		k++
	}
	if k == 0 {
		return est, math.NaN(), math.NaN(), false
	}
	return est, math.Exp(d[k-1]), math.Exp(d[m-k]), true
}

func closeRel(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Abs(b)
}

func TestShiftCIBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 15))
	checked, dualities, excluded := 0, 0, 0
	for n1 := 1; n1 <= 8; n1++ {
		for n2 := 1; n1+n2 <= 16; n2++ {
			for _, conf := range []float64{0.95, 0.9, 0.99} {
				base := randomSample(r, n1, false)
				head := randomSample(r, n2, r.IntN(2) == 0)
				for i := range head {
					head[i] = head[i]*1.05 + 1 // positive, tied or not
				}
				origB, origH := slices.Clone(base), slices.Clone(head)
				est, lo, hi, ok := ShiftCI(base, head, conf)
				west, wlo, whi, wok := bruteShift(base, head, conf)
				if !slices.Equal(base, origB) || !slices.Equal(head, origH) {
					t.Fatal("ShiftCI modified its input")
				}
				if ok != wok || !closeRel(est, west) || ok && (!closeRel(lo, wlo) || !closeRel(hi, whi)) {
					t.Errorf("ShiftCI(%v, %v, %v) = %v [%v, %v] %v, brute force %v [%v, %v] %v",
						base, head, conf, est, lo, hi, ok, west, wlo, whi, wok)
				}
				if ok && !(lo <= est && est <= hi) {
					t.Errorf("ShiftCI(%v, %v, %v): estimate %v outside [%v, %v]", base, head, conf, est, lo, hi)
				}
				// Without ties the interval and the test agree: it
				// excludes a ratio of 1 exactly when p <= 1-conf.
				if _, ties := uStatistic(base, head); ok && len(ties) == n1+n2 {
					p := MannWhitneyU(base, head)
					excl := lo > 1 || hi < 1
					if excl != (p <= (1-conf)*(1+1e-9)) {
						t.Errorf("ShiftCI(%v, %v, %v) = [%v, %v] but p = %v", base, head, conf, lo, hi, p)
					}
					dualities++
					if excl {
						excluded++
					}
				}
				if !ok && (!math.IsNaN(lo) || !math.IsNaN(hi)) {
					t.Errorf("ShiftCI not ok but lo, hi = %v, %v", lo, hi)
				}
				checked++
			}
		}
	}
	t.Logf("%d size pairs and confidences checked, %d against the U test (%d significant)", checked, dualities, excluded)
	if excluded == 0 || excluded == dualities {
		t.Errorf("the U-test duality saw %d significant of %d: both outcomes must be exercised", excluded, dualities)
	}
}

func TestShiftCIKnown(t *testing.T) {
	// 5+5 at 95%: k = 3 (P(U <= 2) = 4/252 <= 0.025 < P(U <= 3) = 7/252),
	// so the interval is the 3rd smallest and 3rd largest of the 25 ratios.
	base := []float64{100, 101, 102, 103, 104}
	head := []float64{110, 111, 112, 113, 114}
	est, lo, hi, ok := ShiftCI(base, head, 0.95)
	if !ok || !closeRel(est, 112.0/102) || !closeRel(lo, 110.0/103) || !closeRel(hi, 114.0/101) {
		t.Errorf("ShiftCI 5+5 = %v [%v, %v] %v, want 112/102 [110/103, 114/101] true", est, lo, hi, ok)
	}
	// The same values in both arms: no shift.
	est, lo, hi, ok = ShiftCI(base, base, 0.95)
	if !ok || est != 1 || !(lo < 1 && hi > 1) {
		t.Errorf("ShiftCI A/A = %v [%v, %v] %v, want 1 inside the interval", est, lo, hi, ok)
	}
	// All equal: a point interval at ratio 2.
	est, lo, hi, ok = ShiftCI([]float64{5, 5, 5, 5}, []float64{10, 10, 10, 10}, 0.95)
	if !ok || !closeRel(est, 2) || lo != est || hi != est {
		t.Errorf("ShiftCI all equal = %v [%v, %v] %v, want 2 [2, 2] true", est, lo, hi, ok)
	}

	// 95% needs 1/C(n1+n2, n1) <= 0.025: not 3+3 (1/20), 3+4 (1/35),
	// 2+7 (1/36), 1+38 (1/39); 4+4 (1/70), 3+5 (1/56), 2+8 (1/45) and
	// 1+39 (exactly 1/40) can.
	for _, c := range []struct {
		n1, n2 int
		ok     bool
	}{{3, 3, false}, {3, 4, false}, {2, 7, false}, {1, 38, false}, {4, 4, true}, {3, 5, true}, {2, 8, true}, {1, 39, true}} {
		_, lo, hi, ok := ShiftCI(randomSample(rand.New(rand.NewPCG(1, 2)), c.n1, false),
			randomSample(rand.New(rand.NewPCG(3, 4)), c.n2, false), 0.95)
		if ok != c.ok || !ok && (!math.IsNaN(lo) || !math.IsNaN(hi)) {
			t.Errorf("ShiftCI %d+%d at 0.95: ok %v [%v, %v], want ok %v", c.n1, c.n2, ok, lo, hi, c.ok)
		}
	}

	nan := math.NaN()
	for _, c := range [][2][]float64{
		{nil, {1, 2}},
		{{1, 2}, nil},
		{{1, 0, 3, 4}, {1, 2, 3, 4}},
		{{1, 2, 3, 4}, {1, -2, 3, 4}},
		{{1, 2, nan, 4}, {1, 2, 3, 4}},
		{{1, 2, 3, 4}, {1, 2, math.Inf(1), 4}},
	} {
		est, lo, hi, ok := ShiftCI(c[0], c[1], 0.95)
		if ok || !math.IsNaN(est) || !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("ShiftCI(%v, %v) = %v [%v, %v] %v, want NaN, not ok", c[0], c[1], est, lo, hi, ok)
		}
	}
	for _, conf := range []float64{0, 1, nan, -1, 2} {
		if _, _, _, ok := ShiftCI(base, head, conf); ok {
			t.Errorf("ShiftCI at confidence %v is ok, want not ok", conf)
		}
	}
}

// TestMosesRankNormal checks the normal approximation used beyond 50
// values per arm against the exact rank at the sizes where both apply:
// it may be a little conservative (U's tails are lighter than the
// normal's, so the exact rank can be 1-2 higher at 99%), never bold.
func TestMosesRankNormal(t *testing.T) {
	for _, sz := range [][2]int{{50, 50}, {50, 20}, {30, 40}} {
		for _, conf := range []float64{0.95, 0.99} {
			exact := mosesRank(sz[0], sz[1], conf)
			mu := float64(sz[0]*sz[1]) / 2
			sigma := math.Sqrt(float64(sz[0]*sz[1]) * float64(sz[0]+sz[1]+1) / 12)
			approx := int(math.Floor(mu-0.5+sigma*stdNormalInvCDF((1-conf)/2))) + 1
			if d := exact - approx; d < 0 || d > 2 {
				t.Errorf("mosesRank(%d, %d, %v) = %d exact, %d normal", sz[0], sz[1], conf, exact, approx)
			}
		}
	}
	if k := mosesRank(51, 60, 0.95); k < 1 || k > 51*60/2 {
		t.Errorf("mosesRank(51, 60, 0.95) = %d", k)
	}
}
