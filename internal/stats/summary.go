package stats

import (
	"math"
	"slices"
)

// Summary is a sample's median and the distribution-free confidence
// interval of the median (benchmath.AssumeNothing.Summary).
type Summary struct {
	// N is the number of values.
	N int
	// Median is the sample median (the mean of the middle two for an
	// even N); NaN when N is 0.
	Median float64
	// Lo and Hi bound the confidence interval. A bound is -Inf or +Inf
	// when N is too small for the confidence, as benchmath reports it:
	// at 0.95 Lo is -Inf up to N = 5 and Hi is +Inf up to N = 4.
	Lo, Hi float64
	// Confidence is the interval's actual confidence level, at least the
	// one asked for (1 when the interval is -Inf..+Inf).
	Confidence float64
}

// Summarize returns the median of xs and its confidence interval at the
// given confidence (0.95 for 95%), from order statistics: the result of
// benchmath.AssumeNothing.Summary on the same values. xs is not modified.
// A NaN among xs gives a NaN median and bounds.
func Summarize(xs []float64, confidence float64) Summary {
	s := Summary{N: len(xs)}
	if slices.ContainsFunc(xs, math.IsNaN) {
		nan := math.NaN()
		s.Median, s.Lo, s.Hi, s.Confidence = nan, nan, nan, nan
		return s
	}
	sorted := sortedCopy(xs)
	lo, hi, conf := medianCIOrders(len(sorted), confidence)
	s.Median = median(sorted)
	s.Confidence = conf
	s.Lo, s.Hi = math.Inf(-1), math.Inf(1)
	if lo >= 1 {
		s.Lo = sorted[lo-1]
	}
	if hi <= len(sorted) {
		s.Hi = sorted[hi-1]
	}
	return s
}

// RelSpreadPct is the relative spread of xs: the median absolute
// deviation from the median (raw, not scaled to a normal sigma) divided by
// the median, times 100. It is 0 for fewer than 2 values (no spread can be
// seen in one value; callers needing two samples check n themselves), NaN
// when xs holds a NaN, and +Inf when the median is 0 and the MAD is not.
// A negative median is taken by its magnitude.
func RelSpreadPct(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	if slices.ContainsFunc(xs, math.IsNaN) {
		return math.NaN()
	}
	m, mad := medianMAD(xs)
	switch {
	case mad == 0:
		return 0
	case m == 0:
		return math.Inf(1)
	}
	return mad / math.Abs(m) * 100
}

func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// median of sorted values, as go-moremath's Sample.Quantile(0.5) (R's
// quantile type 8, which at 0.5 is the ordinary median), with its exact
// floating-point steps so the result is bit-for-bit benchmath's.
func median(sorted []float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	const q = 0.5
	n := 1/3.0 + q*(float64(len(sorted))+1/3.0)
	kf, frac := math.Modf(n)
	k := int(kf)
	if k <= 0 {
		return sorted[0]
	} else if k >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[k-1] + frac*(sorted[k]-sorted[k-1])
}

// medianCIOrders returns the 1-based order statistics l and r bounding the
// confidence interval of the median of n values, and the interval's
// actual confidence. l < 1 means -Inf and r > n means +Inf. It follows
// go-moremath's stats.QuantileCI(n, 0.5, confidence), which benchmath
// uses: exact binomial sums up to n = 30, started at the mode and grown
// towards the heavier neighbour (left on a tie) until the confidence is
// reached; the normal approximation with continuity correction above.
func medianCIOrders(n int, confidence float64) (l, r int, conf float64) {
	if confidence >= 1 {
		return 0, n + 1, 1
	}
	if n <= 30 {
		pmf := func(k int) float64 {
			if k < 0 || k > n {
				return 0
			}
			return choose(n, k) * math.Pow(0.5, float64(k)) * math.Pow(0.5, float64(n-k))
		}
		x := int(math.Ceil(float64(n+1)*0.5) - 1)
		accum := pmf(x)
		l, r = x, x+1
		lp, rp := pmf(l-1), pmf(r)
		for accum < confidence && (lp > 0 || rp > 0) {
			if lp >= rp {
				accum += lp
				l--
				lp = pmf(l - 1)
			} else {
				accum += rp
				r++
				rp = pmf(r)
			}
		}
		conf = accum
	} else {
		mu := float64(n) * 0.5
		sigma := math.Sqrt(float64(n) * 0.5 * 0.5)
		cdf := func(x float64) float64 { return math.Erfc(-(x-mu)/(sigma*math.Sqrt2)) / 2 }
		l1 := mu + sigma*stdNormalInvCDF((1-confidence)/2)
		r1 := 2*mu - l1
		l = int(math.Floor(math.Floor(l1-0.5)+0.5)) + 1
		r = int(math.Floor(math.Ceil(r1-0.5)+0.5)) + 1
		band := func(l, r int) float64 { return cdf(float64(r)-0.5) - cdf(float64(l)-0.5) }
		conf = band(l, r)
		if b := band(l, r-1); b >= confidence && b < conf {
			conf = b
			r--
		}
		if l <= 0 && r >= n+1 {
			conf = 1
		}
	}
	return max(l, 0), min(r, n+1), conf
}

// choose is n choose k exactly as go-moremath's mathx.Choose computes it
// (integer arithmetic up to n = 20, exp of log-gamma above), so that the
// binomial sums above pick the same order statistics as benchmath even
// where two candidates differ only in the last bit.
func choose(n, k int) float64 {
	if k == 0 || k == n {
		return 1
	}
	if k < 0 || n < k {
		return 0
	}
	if n <= 20 {
		numer := int64(1)
		for m := int64(n - (k - 1)); m <= int64(n); m++ {
			numer *= m
		}
		denom := int64(1)
		for m := int64(2); m <= int64(k); m++ {
			denom *= m
		}
		return float64(numer / denom)
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(a - b - c)
}

// stdNormalInvCDF is the standard normal quantile function. It is
// Acklam's rational approximation with one step of Halley refinement, as
// in go-moremath (relative error about 1e-15).
func stdNormalInvCDF(p float64) float64 {
	const (
		a1 = -3.969683028665376e+01
		a2 = 2.209460984245205e+02
		a3 = -2.759285104469687e+02
		a4 = 1.383577518672690e+02
		a5 = -3.066479806614716e+01
		a6 = 2.506628277459239e+00

		b1 = -5.447609879822406e+01
		b2 = 1.615858368580409e+02
		b3 = -1.556989798598866e+02
		b4 = 6.680131188771972e+01
		b5 = -1.328068155288572e+01

		c1 = -7.784894002430293e-03
		c2 = -3.223964580411365e-01
		c3 = -2.400758277161838e+00
		c4 = -2.549732539343734e+00
		c5 = 4.374664141464968e+00
		c6 = 2.938163982698783e+00

		d1 = 7.784695709041462e-03
		d2 = 3.224671290700398e-01
		d3 = 2.445134137142996e+00
		d4 = 3.754408661907416e+00

		plow  = 0.02425
		phigh = 1 - plow
	)
	switch {
	case p < 0 || p > 1 || math.IsNaN(p):
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	}
	var x float64
	if p < plow {
		q := math.Sqrt(-2 * math.Log(p))
		x = (((((c1*q+c2)*q+c3)*q+c4)*q+c5)*q + c6) /
			((((d1*q+d2)*q+d3)*q+d4)*q + 1)
	} else if phigh < p {
		q := math.Sqrt(-2 * math.Log(1-p))
		x = -(((((c1*q+c2)*q+c3)*q+c4)*q+c5)*q + c6) /
			((((d1*q+d2)*q+d3)*q+d4)*q + 1)
	} else {
		q := p - 0.5
		r := q * q
		x = (((((a1*r+a2)*r+a3)*r+a4)*r+a5)*r + a6) * q /
			(((((b1*r+b2)*r+b3)*r+b4)*r+b5)*r + 1)
	}
	e := 0.5*math.Erfc(-x/math.Sqrt2) - p
	u := e * math.Sqrt(2*math.Pi) * math.Exp(x*x/2)
	return x - u/(1+x*u/2)
}

// medianMAD is the median of xs and their median absolute deviation from
// it (raw, not scaled to a normal sigma).
func medianMAD(xs []float64) (m, mad float64) {
	sorted := sortedCopy(xs)
	m = median(sorted)
	dev := make([]float64, len(sorted))
	for i, x := range sorted {
		dev[i] = math.Abs(x - m)
	}
	slices.Sort(dev)
	return m, median(dev)
}
