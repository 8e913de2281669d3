package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	ms "github.com/aclements/go-moremath/stats"
)

func TestStudentTQuantileTable(t *testing.T) {
	for _, c := range []struct {
		p    float64
		df   int
		want float64
	}{
		// Standard tables (and R's qt), 6-7 significant digits.
		{0.975, 5, 2.570582},
		{0.8, 5, 0.919544},
		{0.975, 1, 12.706205},
		{0.995, 1, 63.656741},
		{0.9, 1, 3.077684},
		{0.975, 2, 4.302653},
		{0.95, 2, 2.919986},
		{0.975, 3, 3.182446},
		{0.999, 4, 7.173182},
		{0.9, 3, 1.637744},
		{0.8, 7, 0.896030},
		{0.975, 7, 2.364624},
		{0.8, 11, 0.875530},
		{0.975, 11, 2.200985},
		{0.995, 10, 3.169273},
		{0.975, 30, 2.042272},
		{0.975, 100, 1.983972},
		{0.975, 1000, 1.962339},
		{0.9995, 20, 3.849516},
		{0.025, 5, -2.570582},
		{0.2, 5, -0.919544},
	} {
		if got := StudentTQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("StudentTQuantile(%v, %d) = %.7f, want %v", c.p, c.df, got, c.want)
		}
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		p    float64
		df   int
		want float64
	}{
		{0, 5, -inf}, {1, 5, inf}, {0.5, 5, 0}, {0.5, 1, 0},
		{nan, 5, nan}, {-0.1, 5, nan}, {1.1, 5, nan}, {0.9, 0, nan}, {0.9, -3, nan},
	} {
		if got := StudentTQuantile(c.p, c.df); !sameFloat(got, c.want) {
			t.Errorf("StudentTQuantile(%v, %d) = %v, want %v", c.p, c.df, got, c.want)
		}
	}
}

// TestStudentTQuantileInverse checks the quantile against go-moremath's
// t CDF (an independent incomplete beta) across degrees of freedom,
// fractional ones (Welch's) included, and probabilities from the far
// tails to the centre, and checks symmetry. From 1000 degrees of freedom
// on, go-moremath's CDF loses digits near the centre (it takes 1-x for
// an x within 1e-12 of 1), and the reference is the Cornish-Fisher
// expansion instead, then accurate to far better than 1e-9; this also
// checks that the quantile is continuous where it switches to that
// expansion (beyond 1e5).
func TestStudentTQuantileInverse(t *testing.T) {
	ps := []float64{1e-10, 1e-6, 0.0005, 0.005, 0.025, 0.1, 0.2, 0.3, 0.45, 0.4999, 0.55, 0.8, 0.9, 0.975, 0.995, 0.999999}
	dfs := []float64{1, 1.5, 2, 2.7, 3, 4, 5, 6, 7, 8, 9, 10, 11.3, 15, 20, 29.9, 30, 50, 100, 999, 1000, 1e4, 99999, 1e5, 100001, 1e7}
	for _, df := range dfs {
		for _, p := range ps {
			q := tQuantile(p, df)
			tail := min(p, 1-p)
			if df < 1000 {
				if got := (ms.TDist{V: df}).CDF(q); math.Abs(got-p) > 1e-9*tail+1e-15 {
					t.Errorf("tQuantile(%v, %v) = %v, whose CDF is %v (off by %.2g)", p, df, q, got, got-p)
				}
			} else if cf := cornishFisherT(stdNormalInvCDF(p), df); math.Abs(q-cf) > 1e-9*math.Abs(cf) {
				t.Errorf("tQuantile(%v, %v) = %v, Cornish-Fisher %v", p, df, q, cf)
			}
			// Symmetry, where 1-p is exact.
			if 1-(1-p) == p && p != 0.5 {
				if neg := tQuantile(1-p, df); neg != -q {
					t.Errorf("tQuantile(%v, %v) = %v but tQuantile(%v) = %v: not symmetric", p, df, q, 1-p, neg)
				}
			}
		}
	}
	// Monotone in df at a fixed p, towards the normal quantile.
	prev := math.Inf(1)
	for _, df := range dfs {
		q := tQuantile(0.975, df)
		if q > prev || q < 1.959963984540054 {
			t.Errorf("tQuantile(0.975, %v) = %v, previous df %v", df, q, prev)
		}
		prev = q
	}
}

// scaledD returns n differences centred at c whose 1.4826*MAD is exactly
// (up to rounding) s: the points +-(1..n/2) (with 0 for an odd n) scaled
// so that their median absolute deviation is s/1.4826.
func scaledD(n int, c, s float64) []float64 {
	var d []float64
	for i := 1; i <= n/2; i++ {
		d = append(d, float64(i), -float64(i))
	}
	if n%2 == 1 {
		d = append(d, 0)
	}
	mad := median(sortedCopy(absAll(d)))
	if !(mad > 0) {
		return []float64{c}[:n] // 0 or 1 value: no spread to scale
	}
	for i := range d {
		d[i] = c + d[i]*s/madToSigma/mad
	}
	return d
}

func absAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Abs(x)
	}
	return out
}

func TestPairedMDC(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	planned := func(n int, s, alpha, power float64) float64 {
		df := n - 1
		return (StudentTQuantile(1-alpha/2, df) + StudentTQuantile(power, df)) * s / math.Sqrt(float64(n)) / math.Sqrt(3/math.Pi)
	}
	for _, n := range []int{6, 7, 8, 12, 20, 51} {
		for _, c := range []float64{0, 0.05, -0.3} {
			d := scaledD(n, c, 0.02)
			orig := slices.Clone(d)
			got := PairedMDC(d, 0.05, 0.8)
			if !slices.Equal(d, orig) {
				t.Fatal("PairedMDC modified its input")
			}
			// The scale is read about the median: the
			// observed shift c does not count as noise.
			if want := planned(n, 0.02, 0.05, 0.8); math.Abs(got-want) > 1e-12 {
				t.Errorf("PairedMDC of %d values at %v with scale 0.02 = %v, want %v", n, c, got, want)
			}
		}
	}
	// Eight pairs with a normal-sigma of 1% detect about 1.2% at 80%.
	if got := PairedMDC(scaledD(8, 0, 0.01), 0.05, 0.8); math.Abs(got-0.011797) > 1e-6 {
		t.Errorf("PairedMDC(8 pairs, 1%% scale) = %v, want 0.011797", got)
	}
	// Fewer pairs than can ever reach p < alpha: nothing is detectable.
	for _, c := range []struct {
		n     int
		alpha float64
	}{{5, 0.05}, {7, 0.01}, {0, 0.05}, {1, 0.05}} {
		if got := PairedMDC(scaledD(c.n, 0, 0.01), c.alpha, 0.8); got != inf {
			t.Errorf("PairedMDC(%d pairs, alpha %v) = %v, want +Inf", c.n, c.alpha, got)
		}
	}
	if got := PairedMDC(scaledD(8, 0, 0.01), 0.01, 0.8); math.IsInf(got, 0) || !(got > PairedMDC(scaledD(8, 0, 0.01), 0.05, 0.8)) {
		t.Errorf("PairedMDC(8 pairs, alpha 0.01) = %v, want finite and above alpha 0.05's", got)
	}
	// More than half equal: the MAD is 0 and the standard deviation is
	// the scale.
	d := []float64{0.01, 0.01, 0.01, 0.01, 0.01, 0.02, 0.03, 0.05}
	sd := 0.0
	for _, x := range d {
		sd += (x - 0.01875) * (x - 0.01875)
	}
	sd = math.Sqrt(sd / 7)
	if got, want := PairedMDC(d, 0.05, 0.8), planned(8, sd, 0.05, 0.8); math.Abs(got-want) > 1e-12 {
		t.Errorf("PairedMDC(%v) = %v, want %v from the standard deviation %v", d, got, want, sd)
	}
	// No noise at all: any shift is detected, from MinPairs on.
	for _, c := range []struct {
		d    []float64
		want float64
	}{
		{[]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 0},
		{make([]float64, 6), 0},
		{[]float64{0.1, 0.1, 0.1, 0.1, 0.1}, inf},
		{[]float64{0.1, 0.2, nan, 0.1, 0.1, 0.1}, nan},
		{[]float64{0.1, 0.2, inf, 0.1, 0.1, 0.1}, nan},
	} {
		if got := PairedMDC(c.d, 0.05, 0.8); !sameFloat(got, c.want) {
			t.Errorf("PairedMDC(%v) = %v, want %v", c.d, got, c.want)
		}
	}
	good := scaledD(8, 0, 0.01)
	for _, ap := range [][2]float64{{0, 0.8}, {1, 0.8}, {nan, 0.8}, {0.05, 0}, {0.05, 1}, {0.05, nan}, {-1, 2}} {
		if got := PairedMDC(good, ap[0], ap[1]); !math.IsNaN(got) {
			t.Errorf("PairedMDC(alpha %v, power %v) = %v, want NaN", ap[0], ap[1], got)
		}
	}
	// More power needs a larger change; a power below alpha/2 none.
	if !(PairedMDC(good, 0.05, 0.9) > PairedMDC(good, 0.05, 0.8)) || PairedMDC(good, 0.5, 0.01) != 0 {
		t.Errorf("PairedMDC at powers 0.9, 0.8 = %v, %v; alpha 0.5 power 0.01 = %v",
			PairedMDC(good, 0.05, 0.9), PairedMDC(good, 0.05, 0.8), PairedMDC(good, 0.5, 0.01))
	}
}

func TestUnpairedMDC(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	welch := func(n1, n2 int, s1, s2, alpha, power float64) float64 {
		v1, v2 := s1*s1/float64(n1), s2*s2/float64(n2)
		df := (v1 + v2) * (v1 + v2) / (v1*v1/float64(n1-1) + v2*v2/float64(n2-1))
		return (tQuantile(1-alpha/2, df) + tQuantile(power, df)) * math.Sqrt(v1+v2) / math.Sqrt(3/math.Pi)
	}
	for _, c := range []struct {
		n1, n2 int
		s1, s2 float64
	}{{4, 4, 0.01, 0.01}, {5, 5, 0.01, 0.03}, {8, 5, 0.02, 0.005}, {20, 30, 0.01, 0.01}} {
		a, b := scaledD(c.n1, 10, c.s1), scaledD(c.n2, 10.2, c.s2)
		origA, origB := slices.Clone(a), slices.Clone(b)
		got := UnpairedMDC(a, b, 0.05, 0.8)
		if !slices.Equal(a, origA) || !slices.Equal(b, origB) {
			t.Fatal("UnpairedMDC modified its input")
		}
		if want := welch(c.n1, c.n2, c.s1, c.s2, 0.05, 0.8); math.Abs(got-want) > 1e-12 {
			t.Errorf("UnpairedMDC(%d x %v, %d x %v) = %v, want %v", c.n1, c.s1, c.n2, c.s2, got, want)
		}
		if rev := UnpairedMDC(b, a, 0.05, 0.8); math.Abs(rev-got) > 1e-15 {
			t.Errorf("UnpairedMDC depends on the order of the arms: %v, %v", got, rev)
		}
	}
	// Equal arms of n with scale s: Welch's df is 2(n-1) and se s*sqrt(2/n).
	if got, want := UnpairedMDC(scaledD(5, 0, 0.01), scaledD(5, 0, 0.01), 0.05, 0.8),
		(StudentTQuantile(0.975, 8)+StudentTQuantile(0.8, 8))*0.01*math.Sqrt(2.0/5)/math.Sqrt(3/math.Pi); math.Abs(got-want) > 1e-12 {
		t.Errorf("UnpairedMDC(5+5, 1%%) = %v, want %v", got, want)
	}
	// One arm without spread: df is the other arm's n-1.
	if got, want := UnpairedMDC([]float64{1, 1, 1, 1}, scaledD(6, 0, 0.01), 0.05, 0.8),
		(StudentTQuantile(0.975, 5)+StudentTQuantile(0.8, 5))*0.01/math.Sqrt(6)/math.Sqrt(3/math.Pi); math.Abs(got-want) > 1e-12 {
		t.Errorf("UnpairedMDC(no spread, 6 x 1%%) = %v, want %v", got, want)
	}
	for _, c := range []struct {
		a, b  []float64
		alpha float64
		want  float64
	}{
		{scaledD(3, 0, 0.01), scaledD(10, 0, 0.01), 0.05, inf}, // 3 < MinUnpairedN(0.05)
		{scaledD(4, 0, 0.01), scaledD(4, 0, 0.01), 0.01, inf},  // 4 < MinUnpairedN(0.01)
		{nil, scaledD(4, 0, 0.01), 0.05, inf},
		{[]float64{2, 2, 2, 2}, []float64{3, 3, 3, 3}, 0.05, 0},
		{[]float64{2, 2, nan, 2}, []float64{3, 3, 3, 3}, 0.05, nan},
		{[]float64{2, 2, 2, 2}, []float64{3, 3, 3, -inf}, 0.05, nan},
		{scaledD(4, 0, 0.01), scaledD(4, 0, 0.01), 0, nan},
		{scaledD(4, 0, 0.01), scaledD(4, 0, 0.01), 1, nan},
	} {
		if got := UnpairedMDC(c.a, c.b, c.alpha, 0.8); !sameFloat(got, c.want) {
			t.Errorf("UnpairedMDC(%v, %v, %v) = %v, want %v", c.a, c.b, c.alpha, got, c.want)
		}
	}
	if got := UnpairedMDC(scaledD(4, 0, 0.01), scaledD(4, 0, 0.01), 0.05, 1); !math.IsNaN(got) {
		t.Errorf("UnpairedMDC at power 1 = %v, want NaN", got)
	}
}

// TestPairedMDCPower checks the plan against the test it plans for: with
// normal differences of sigma 1 (whose 1.4826*MAD is then 1), a shift of
// PairedMDC(alpha 0.05, power 0.8) should be detected by SignedRank at p
// < 0.05 about 80% of the time. The exact test's discreteness (at 8 pairs
// it rejects only at p <= 0.039) and the t approximation make it a little
// less; the tolerance is 0.65..0.95. A shift of half the MDC must be
// detected far less often, and twice the MDC nearly always.
func TestPairedMDCPower(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	power := func(n int, shift float64, trials int) float64 {
		hits := 0
		d := make([]float64, n)
		for range trials {
			for i := range d {
				d[i] = shift + r.NormFloat64()
			}
			if SignedRank(d) < 0.05 {
				hits++
			}
		}
		return float64(hits) / float64(trials)
	}
	for _, n := range []int{8, 12} {
		mdc := PairedMDC(scaledD(n, 0, 1), 0.05, 0.8)
		got := power(n, mdc, 4000)
		t.Logf("%d pairs: MDC %.3f sigma, empirical power %.3f (planned 0.8)", n, mdc, got)
		if got < 0.65 || got > 0.95 {
			t.Errorf("%d pairs: power of SignedRank at the MDC %.3f is %.3f, planned 0.8", n, mdc, got)
		}
		if half := power(n, mdc/2, 4000); half > 0.5 {
			t.Errorf("%d pairs: power at half the MDC is %.3f", n, half)
		}
		if twice := power(n, 2*mdc, 4000); twice < 0.99 {
			t.Errorf("%d pairs: power at twice the MDC is %.3f", n, twice)
		}
	}
	// Planned from a sample rather than from sigma: the scale is then
	// itself uncertain, so the power achieved varies around the plan.
	// Its median over pilot samples stays near the plan.
	for _, n := range []int{8, 12} {
		var achieved []float64
		for range 25 {
			pilot := make([]float64, n)
			for i := range pilot {
				pilot[i] = r.NormFloat64()
			}
			achieved = append(achieved, power(n, PairedMDC(pilot, 0.05, 0.8), 500))
		}
		slices.Sort(achieved)
		med := achieved[len(achieved)/2]
		t.Logf("%d pairs planned from pilot samples: achieved power min %.2f median %.2f max %.2f", n, achieved[0], med, achieved[len(achieved)-1])
		if med < 0.55 || med > 0.97 {
			t.Errorf("%d pairs: median achieved power %.2f when planned at 0.8 from pilot samples", n, med)
		}
	}
}
