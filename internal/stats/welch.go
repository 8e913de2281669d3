package stats

import "math"

// WelchT is Welch's two-sample t-test of a and b (unequal variances): t
// for mean(b) − mean(a), the Welch–Satterthwaite degrees of freedom, and
// the two-sided p. With fewer than 2 values on a side it says nothing (p
// NaN). Both sides without variance: p is 0 when the means differ, else 1
// (nothing to test, nothing found). Cross-checked against go-moremath's
// TwoSampleWelchTTest.
func WelchT(a, b []float64) (t, df, p float64) {
	na, nb := float64(len(a)), float64(len(b))
	if len(a) < 2 || len(b) < 2 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ma, mb := mean(a), mean(b)
	va, vb := sd(a, ma), sd(b, mb)
	va, vb = va*va/na, vb*vb/nb
	if va+vb == 0 {
		if ma == mb {
			return 0, na + nb - 2, 1
		}
		return math.Copysign(math.Inf(1), mb-ma), na + nb - 2, 0
	}
	t = (mb - ma) / math.Sqrt(va+vb)
	df = (va + vb) * (va + vb) / (va*va/(na-1) + vb*vb/(nb-1))
	return t, df, min(1, 2*tTail(math.Abs(t), df))
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// sd is the sample standard deviation of xs about m (n − 1).
func sd(xs []float64, m float64) float64 {
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
