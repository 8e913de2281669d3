package stats

import (
	"cmp"
	"math"
	"slices"
)

// signedRankExactLimit is the number of non-zero differences up to which
// SignedRank and PairedShiftCI use the exact distribution of the signed
// rank statistic (the same 50 as the U test's; R's wilcox.test switches
// at 50 too). The counts are then at most 2^50, exact in a float64.
const signedRankExactLimit = 50

// LogRatios returns, for each pair i, ln(head[i]/base[i]): the paired
// differences that SignedRank, PairedShiftCI and PairedMDC take. Pairs
// beyond the shorter of the two slices are ignored. A pair where either
// value is not a positive finite number (0, negative, Inf, NaN) gives NaN
// at its index, so a missing figure stays missing instead of shifting the
// pairs. The logarithm is taken as ln(head[i]) - ln(base[i]), as ShiftCI
// takes it, so swapping the arms negates every value exactly (and a
// signed-rank p does not depend on which arm is called base). base and
// head are not modified.
func LogRatios(base, head []float64) []float64 {
	d := make([]float64, min(len(base), len(head)))
	for i := range d {
		b, h := base[i], head[i]
		if !positiveFinite(b) || !positiveFinite(h) {
			d[i] = math.NaN()
			continue
		}
		d[i] = math.Log(h) - math.Log(b)
	}
	return d
}

func positiveFinite(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// SignedRank returns the two-sided p-value of the Wilcoxon signed-rank
// test of the null hypothesis that the paired differences d are
// symmetric about 0 (for log ratios: that head and base are exchangeable
// within each pair).
//
// Zeros are dropped, as R's wilcox.test does: a pair that measured the
// same in both arms says nothing about the direction. The absolute values
// of the n remaining differences are ranked, ties getting their mid-rank,
// and W+ is the sum of the ranks of the positive ones. Under the null
// hypothesis each difference's sign is a fair coin given the magnitudes,
// so the exact distribution of W+ given the tie pattern is that of a sum
// of the ranks each taken with probability 1/2; it is counted exactly
// (over doubled ranks, so mid-ranks are integers) while n <= 50, and p is
// twice the smaller tail, min(1, 2*min(P(W+ <= w), P(W+ >= w))). Beyond
// 50 the normal approximation with tie and continuity correction is used,
// as in R's wilcox.test. Without ties the exact p is 2*k/2^n for an
// integer k, and the smallest possible is MinSignedRankP(n): every
// difference of one sign.
//
// An empty d, or one of zeros only, gives 1 (nothing to test). A NaN
// among d gives NaN. Infinite values are ranked as the largest. d is not
// modified.
func SignedRank(d []float64) (p float64) {
	if slices.ContainsFunc(d, math.IsNaN) {
		return math.NaN()
	}
	twoRanks, twoW := signedRanks(d)
	n := len(twoRanks)
	if n == 0 {
		return 1
	}
	if n <= signedRankExactLimit {
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
		return exactSignedRankP(lower, upper, n)
	}
	sum, sumSq := 0, 0.0
	for _, r := range twoRanks {
		sum += r
		sumSq += float64(r) * float64(r)
	}
	return normalSignedRankP(twoW, sum, sumSq/4)
}

// exactSignedRankP is the two-sided p from the counts of sign assignments
// in the lower and upper tails out of 2^n. Both counts are integers below
// 2^53 and the division is by a power of two, so p is exact, and the
// same tails give the same p bit for bit wherever they are computed
// (SequentialLevels relies on it).
func exactSignedRankP(lower, upper float64, n int) float64 {
	return min(1, math.Ldexp(2*min(lower, upper), -n))
}

// normalSignedRankP is R's normal approximation in doubled units: 2W+ is
// twoW, its mean is half the sum of the doubled ranks and its variance
// the sum of their squares over 4 (each doubled rank r enters with
// probability 1/2, variance r^2/4), which is the familiar
// n(n+1)(2n+1)/24 - sum(t^3-t)/48 for W+. The continuity correction is
// 1/2 on W+, 1 on 2W+.
func normalSignedRankP(twoW, sumTwoRanks int, varTwoW float64) float64 {
	numer := float64(twoW) - float64(sumTwoRanks)/2
	switch {
	case numer > 0:
		numer--
	case numer < 0:
		numer++
	}
	z := numer / math.Sqrt(varTwoW)
	return min(1, math.Erfc(-z/math.Sqrt2), math.Erfc(z/math.Sqrt2))
}

// signedRanks returns the doubled mid-ranks of the absolute values of the
// non-zero elements of d, in ascending order of absolute value, and twice
// the rank sum of the positive ones (2W+).
func signedRanks(d []float64) (twoRanks []int, twoW int) {
	nz := make([]float64, 0, len(d))
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	slices.SortFunc(nz, func(a, b float64) int { return cmp.Compare(math.Abs(a), math.Abs(b)) })
	twoRanks = make([]int, len(nz))
	for i := 0; i < len(nz); {
		first := i + 1 // 1-based rank of the group's first value
		for a := math.Abs(nz[i]); i < len(nz) && math.Abs(nz[i]) == a; i++ {
		}
		twoMid := first + i // the group's ranks are first..i
		for j := first - 1; j < i; j++ {
			twoRanks[j] = twoMid
			if nz[j] > 0 {
				twoW += twoMid
			}
		}
	}
	return twoRanks, twoW
}

// signedRankCounts returns, for s = 0..sum(twoRanks), the number of the
// 2^n sign assignments whose positive doubled ranks sum to s: the exact
// null distribution of 2W+ given the tie pattern, counted value by value
// (each rank either joins the sum or not).
func signedRankCounts(twoRanks []int) []float64 {
	total := 0
	for _, r := range twoRanks {
		total += r
	}
	counts := make([]float64, total+1)
	counts[0] = 1
	top := 0
	for _, r := range twoRanks {
		for s := top; s >= 0; s-- {
			if c := counts[s]; c != 0 {
				counts[s+r] += c
			}
		}
		top += r
	}
	return counts
}

// noTieCounts returns, for w = 0..n(n+1)/2, the number of the 2^n sign
// assignments of the ranks 1..n whose positive ranks sum to w.
func noTieCounts(n int) []float64 {
	twoRanks := make([]int, n)
	for i := range twoRanks {
		twoRanks[i] = 2 * (i + 1)
	}
	c2 := signedRankCounts(twoRanks)
	counts := make([]float64, len(c2)/2+1)
	for w := range counts {
		counts[w] = c2[2*w]
	}
	return counts
}

// MinSignedRankP is the smallest p-value SignedRank can give for n
// non-zero differences, 2/2^n (all of one sign, no ties), capped at 1:
// 0.0625 for 5, 0.03125 for 6, 0.015625 for 7, 0.0078125 for 8. It is 1
// for n <= 1.
func MinSignedRankP(n int) float64 {
	if n <= 1 {
		return 1
	}
	return math.Ldexp(1, 1-n)
}

// MinPairs is the smallest number of pairs for which the signed-rank
// test can give p < alpha at all, the smallest n with MinSignedRankP(n) <
// alpha: 6 at 0.05, 8 at 0.01. The comparison is strict, like the
// verdict's p < alpha. With alpha not above 0 (or NaN) no number of pairs
// is enough and it returns math.MaxInt.
func MinPairs(alpha float64) int {
	if !(alpha > 0) {
		return math.MaxInt
	}
	n := 0
	for MinSignedRankP(n) >= alpha {
		n++ // ends: 2/2^n underflows to 0 by n = 1076
	}
	return n
}

// MinUnpairedN is the smallest number of values per arm for which the
// Mann-Whitney U test of n against n values can give p < alpha, the
// smallest n with 2/C(2n, n) < alpha: 4 at 0.05 (2/70), 5 at 0.01
// (2/252). With alpha not above 0 (or NaN) it returns math.MaxInt.
func MinUnpairedN(alpha float64) int {
	if !(alpha > 0) {
		return math.MaxInt
	}
	n := 0
	for min(1, 2/choose64(2*n, n)) >= alpha {
		n++ // ends: C(2n, n) overflows to +Inf by n = 515
	}
	return n
}

// PairedShiftCI estimates the centre of the paired differences d (for
// log ratios, the typical log of head/base) with a distribution-free
// confidence interval at the given confidence (0.95 for 95%), the
// interval that goes with SignedRank.
//
// The estimate is Hodges-Lehmann's: the median of the n(n+1)/2 Walsh
// averages (d_i+d_j)/2, i <= j. The interval is Tukey's: the k-th
// smallest and the k-th largest Walsh average, where k is the largest
// rank with P(W+ < k) <= (1-confidence)/2 under the exact null
// distribution of the signed-rank statistic of n values without ties
// (the normal approximation with continuity correction for more than 50,
// which at 50 gives a k 3 lower at 99%, a little wider, and 1 higher at
// 90%, out of 1275). Every value of
// d counts, zeros included (a zero pair is evidence that the shift is
// small; only the test at exactly 0 drops them). The values are in d's
// units: for LogRatios, exp(est), exp(lo) and exp(hi) are ratios
// head/base.
//
// Without ties among |d| and without zeros, the interval and SignedRank
// agree exactly: it excludes 0 (lo > 0 or hi < 0) if and only if
// SignedRank(d) <= 1-confidence, since the number of negative Walsh
// averages is W-. The boundary is inclusive on the test's side: a p of
// exactly 1-confidence (6 pairs all positive at 0.96875, p = 0.03125)
// excludes 0. With ties or zeros the ranks still come from the no-ties
// distribution, the usual approximation, and a Walsh average can be 0.
//
// ok is false, and lo and hi are NaN, when no interval reaches the
// confidence with n values, that is when 2/2^n > 1-confidence (at 0.95:
// n < 6; at 0.99: n < 8), when confidence is not strictly between 0 and
// 1, or when est is NaN. est is NaN when d is empty or holds a NaN or an
// infinite value (a Walsh average of +Inf and -Inf has no value);
// otherwise it is returned even when ok is false. d is not modified.
func PairedShiftCI(d []float64, confidence float64) (est, lo, hi float64, ok bool) {
	nan := math.NaN()
	n := len(d)
	if n == 0 || slices.ContainsFunc(d, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }) {
		return nan, nan, nan, false
	}
	w := make([]float64, 0, n*(n+1)/2)
	for i, x := range d {
		for _, y := range d[i:] {
			w = append(w, 0.5*x+0.5*y) // (x+y)/2 that cannot overflow
		}
	}
	slices.Sort(w)
	est = median(w)
	k := tukeyRank(n, confidence)
	if k < 1 {
		return est, nan, nan, false
	}
	return est, w[k-1], w[len(w)-k], true
}

// tukeyRank is the 1-based rank k of the lower bound of Tukey's interval
// among the n(n+1)/2 sorted Walsh averages (the upper bound is the k-th
// from the top): the largest k with P(W+ <= k-1) <= (1-confidence)/2,
// without ties. It is 0 when even P(W+ <= 0) = 1/2^n is too large.
func tukeyRank(n int, confidence float64) int {
	if !(confidence > 0 && confidence < 1) {
		return 0 // no finite interval has 100% (or NaN) confidence
	}
	tail := (1 - confidence) / 2
	m := n * (n + 1) / 2
	if n > signedRankExactLimit {
		// P(W+ <= k-1) ~ Phi((k-1+0.5-mu)/sigma) <= tail. Where both
		// can be computed (30 to 50 values) this k is within a few
		// ranks of the exact one: up to 3 lower (wider) at 99%, where
		// W+'s far tail is lighter than the normal's, and at most 1
		// higher at 90%.
		mu := float64(m) / 2
		sigma := math.Sqrt(float64(n) * float64(n+1) * float64(2*n+1) / 24)
		k := int(math.Floor(mu-0.5+sigma*stdNormalInvCDF(tail))) + 1
		return max(min(k, m/2), 0)
	}
	counts := noTieCounts(n)
	total := math.Ldexp(1, n)
	k, cum := 0, 0.0
	// W+ is symmetric about m/2, so for a tail below 1/2 the loop
	// stops before m/2 and the bounds do not cross.
	for w := 0; w <= m/2; w++ {
		cum += counts[w]
		if cum/total > tail*(1+confidenceFuzz) {
			break
		}
		k = w + 1
	}
	return k
}
