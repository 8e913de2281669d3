package stats

import (
	"math"
	"slices"
)

// madToSigma scales a median absolute deviation to the standard deviation
// of a normal distribution with that MAD (1/Phi^-1(3/4), rounded as R's
// mad() rounds it).
const madToSigma = 1.4826

// rankTestARE is the asymptotic relative efficiency of the signed-rank
// test against the one-sample t test, and of the Mann-Whitney U test
// against the two-sample t test, when the data are normal: 3/pi, 0.955.
// A rank test needs 1/0.955 times the t test's sample size for the same
// power; for heavy-tailed data it needs fewer (the efficiency is never
// below 0.864, and is above 1 for, e.g., a Laplace or t(3) distribution).
const rankTestARE = 3 / math.Pi

// PairedMDC is the minimum detectable change of a paired comparison
// planned from the observed differences d (log ratios, from LogRatios):
// the smallest true shift of d, in d's units, that the two-sided
// signed-rank test at level alpha would detect (p < alpha) with
// probability power (0.8 for 80%) in a new run of len(d) pairs with the
// same noise. For log ratios, exp(MDC)-1 is the smallest change, as a
// fraction, that such a run would be expected to catch.
//
// It is the t test's planning formula with the noise scale read robustly
// and the rank test's efficiency:
//
//	MDC = (t(1-alpha/2, n-1) + t(power, n-1)) * s / sqrt(n) / sqrt(3/pi)
//
// with t the Student t quantile and s = 1.4826*MAD(d), the normal sigma
// that the median absolute deviation implies (one outlier pair moves it
// by one rank, where it could inflate a standard deviation at will). If
// more than half the differences are equal the MAD is 0 and the sample
// standard deviation is used instead. The assumptions are those of any
// power calculation: that the noise of the next run is that of this one,
// that the differences are roughly normal (for heavier tails the
// signed-rank test does better than planned), and that a shift moves
// every pair alike. With the exact test's discreteness the attainable
// level is below alpha (at 8 pairs and 0.05 the test rejects only at p <=
// 0.039), so at the MDC of a known sigma the power is a little under the
// plan: 0.75 at 8 pairs and 0.78 at 12 for a planned 0.8 (tested by
// simulation). And s is itself an estimate from a few pairs, and a
// low-biased one: for normal data 1.4826*MAD averages 0.89 sigma at 8
// pairs and 0.93 at 12. So a plan read off one short run is on the
// optimistic side: planned at 0.8 from 8 or 12 normal pilot pairs, the
// median power achieved is about 0.62, and a single plan can be far off
// either way. Read the MDC as the order of the smallest change this
// setup can see, not as a guarantee.
//
// It is +Inf when n = len(d) < MinPairs(alpha): with so few pairs not
// even the most extreme outcome reaches p < alpha, so no shift is
// detectable. It is 0 when every difference is equal (no noise was seen):
// then any shift moves every pair the same way and gives the smallest p,
// below alpha, so the plan detects any change; that is only as true as
// the measurements' resolution, below which a change cannot show, and a
// caller should read 0 as "below the resolution". The result is never
// negative (a power below alpha/2 asks for nothing). It is NaN when alpha
// or power is not strictly between 0 and 1 or d holds a NaN or an
// infinite value. d is not modified.
func PairedMDC(d []float64, alpha, power float64) float64 {
	if !validLevel(alpha) || !validLevel(power) || slices.ContainsFunc(d, notFinite) {
		return math.NaN()
	}
	n := len(d)
	if n < MinPairs(alpha) {
		return math.Inf(1)
	}
	s := robustScale(d)
	if s == 0 {
		return 0
	}
	df := float64(n - 1)
	q := tQuantile(1-alpha/2, df) + tQuantile(power, df)
	return max(0, q*s/math.Sqrt(float64(n))/math.Sqrt(rankTestARE))
}

// UnpairedMDC is PairedMDC for two independent samples of log values
// (the logs of the base and head repeats, compared by MannWhitneyU and
// ShiftCI): the smallest true shift between the arms, in log units, that
// the two-sided U test at alpha detects with probability power:
//
//	MDC = (t(1-alpha/2, df) + t(power, df)) * se / sqrt(3/pi)
//
// with se = sqrt(s1^2/n1 + s2^2/n2), each arm's s its own 1.4826*MAD (the
// standard deviation when that is 0), and df Welch's,
// (v1+v2)^2 / (v1^2/(n1-1) + v2^2/(n2-1)) with v = s^2/n, fractional. It
// is +Inf when min(n1, n2) < MinUnpairedN(alpha), 0 when both arms show
// no spread at all, and NaN when alpha or power is not strictly between 0
// and 1 or a value is NaN or infinite; the assumptions and the meaning
// of 0 are PairedMDC's. Comparing it with PairedMDC on the same runs
// shows what pairing buys: the unpaired scales hold the machine's drift
// between pairs, the paired one only the noise within a pair. logA and
// logB are not modified.
func UnpairedMDC(logA, logB []float64, alpha, power float64) float64 {
	if !validLevel(alpha) || !validLevel(power) ||
		slices.ContainsFunc(logA, notFinite) || slices.ContainsFunc(logB, notFinite) {
		return math.NaN()
	}
	n1, n2 := len(logA), len(logB)
	if min(n1, n2) < MinUnpairedN(alpha) {
		return math.Inf(1)
	}
	s1, s2 := robustScale(logA), robustScale(logB)
	v1, v2 := s1*s1/float64(n1), s2*s2/float64(n2)
	if v1+v2 == 0 {
		return 0
	}
	// Welch's df, as fractions of v1+v2 so that nothing underflows.
	f1, f2 := v1/(v1+v2), v2/(v1+v2)
	df := 1 / (f1*f1/float64(n1-1) + f2*f2/float64(n2-1))
	q := tQuantile(1-alpha/2, df) + tQuantile(power, df)
	return max(0, q*math.Sqrt(v1+v2)/math.Sqrt(rankTestARE))
}

func validLevel(p float64) bool { return p > 0 && p < 1 }

func notFinite(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// robustScale is 1.4826 times the median absolute deviation of xs from
// their median, or, when that is 0, the sample standard deviation (0 for
// fewer than 2 values or all equal).
func robustScale(xs []float64) float64 {
	if _, mad := medianMAD(xs); mad > 0 {
		return madToSigma * mad
	}
	n := len(xs)
	if n < 2 || slices.Min(xs) == slices.Max(xs) {
		return 0 // exactly, not the rounding of a mean of equal values
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(n-1))
}

// StudentTQuantile is the p-quantile of Student's t distribution with df
// degrees of freedom: t(0.975, 5) = 2.570582, t(0.975, 1) = 12.7062. The
// tail probability of the quantile returned is within 1e-9, relative, of
// the one asked for, far inside the 1e-6 a plan needs (tested against
// tables and by inverting go-moremath's CDF). It is -Inf at p = 0, +Inf
// at p = 1, and NaN when p is outside [0, 1] or NaN or df < 1.
func StudentTQuantile(p float64, df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	return tQuantile(p, float64(df))
}

// tQuantile is StudentTQuantile for real df > 0 (Welch's df is not an
// integer).
func tQuantile(p, df float64) float64 {
	switch {
	case math.IsNaN(p) || p < 0 || p > 1 || !(df > 0):
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	case p == 0.5:
		return 0
	case p > 0.5:
		return tUpper(1-p, df) // 1-p is exact for p >= 1/2
	}
	return -tUpper(p, df)
}

// tUpper is the t with P(T > t) = q, for 0 < q < 1/2: closed forms for 1
// and 2 degrees of freedom, the Cornish-Fisher expansion for very many
// (its error is then far below 1e-12), and otherwise Newton's method on
// the exact tail, kept inside a bracket by bisection.
func tUpper(q, df float64) float64 {
	switch {
	case df == 1:
		return 1 / math.Tan(math.Pi*q)
	case df == 2:
		return (1 - 2*q) / math.Sqrt(2*q*(1-q))
	case df > 1e5:
		return cornishFisherT(-stdNormalInvCDF(q), df)
	}
	t := max(cornishFisherT(-stdNormalInvCDF(q), df), 1e-3)
	lo, hi := 0.0, math.Inf(1) // tail(lo) > q > tail(hi)
	for range 500 {
		f := tTail(t, df) - q
		if f == 0 {
			return t
		}
		if f > 0 {
			lo = t
		} else {
			hi = t
		}
		next := t + f/tPDF(t, df) // Newton: the tail's derivative is -pdf
		if !(next > lo && next < hi) {
			if math.IsInf(hi, 1) {
				next = 2 * t
			} else {
				next = lo + (hi-lo)/2
			}
		}
		if math.Abs(next-t) <= 1e-14*t || next == lo || next == hi {
			return next
		}
		t = next
	}
	return t
}

// cornishFisherT is the Cornish-Fisher expansion of the t quantile in
// powers of 1/df around the normal quantile z (Abramowitz and Stegun
// 26.7.5).
func cornishFisherT(z, df float64) float64 {
	z2 := z * z
	g1 := z * (z2 + 1) / 4
	g2 := z * ((5*z2+16)*z2 + 3) / 96
	g3 := z * (((3*z2+19)*z2+17)*z2 - 15) / 384
	g4 := z * ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) / 92160
	return z + (g1+(g2+(g3+g4/df)/df)/df)/df
}

// tTail is P(T > t) for t >= 0: I_x(df/2, 1/2)/2 with x = df/(df+t^2).
func tTail(t, df float64) float64 {
	t2 := t * t
	return regIncBeta(df/2, 0.5, df/(df+t2), t2/(df+t2)) / 2
}

// tPDF is the density of Student's t with df degrees of freedom.
func tPDF(t, df float64) float64 {
	a, _ := math.Lgamma((df + 1) / 2)
	b, _ := math.Lgamma(df / 2)
	return math.Exp(a - b - 0.5*math.Log(df*math.Pi) - (df+1)/2*math.Log1p(t*t/df))
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), given
// x and xc = 1-x (each computed directly by the caller, so neither loses
// digits near 1): the continued fraction of Numerical Recipes 6.4, on x
// or, through I_x(a, b) = 1 - I_{1-x}(b, a), on 1-x, whichever converges.
func regIncBeta(a, b, x, xc float64) float64 {
	switch {
	case x <= 0:
		return 0
	case xc <= 0:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log(xc))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, xc)/b
}

// betaCF evaluates the continued fraction of I_x(a, b) by the modified
// Lentz method.
func betaCF(a, b, x float64) float64 {
	const (
		eps  = 1e-16
		tiny = 1e-300
	)
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/guard(1-(a+b)*x/(a+1))
	h := d
	for m := 1.0; m <= 10000; m++ {
		aa := m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		d = 1 / guard(1+aa*d)
		c = guard(1 + aa/c)
		h *= d * c
		aa = -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		d = 1 / guard(1+aa*d)
		c = guard(1 + aa/c)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
