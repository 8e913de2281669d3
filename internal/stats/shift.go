package stats

import (
	"math"
	"slices"
)

// confidenceFuzz lets an interval whose exact confidence equals the one
// asked for (1+39 values: 1 - 2/40 = 0.95) count as reaching it despite
// the rounding in 1-0.95 (R's wilcox.test has a fuzz for the same
// reason).
const confidenceFuzz = 1e-9

// ShiftCI estimates how much head differs from base, as a ratio
// head/base, with a distribution-free confidence interval at the given
// confidence (0.95 for 95%).
//
// The estimate is Hodges-Lehmann's: the median of all len(base)*len(head)
// differences log(head_j) - log(base_i). The interval is Moses': the k-th
// smallest and k-th largest of those differences, where k is the largest
// rank with P(U < k) <= (1-confidence)/2 under the exact null
// distribution of the Mann-Whitney U without ties (the normal
// approximation when either arm has more than 50 values). est, lo and hi
// are exp of those log differences, so 1.1 means head is 10% higher.
// With tied values the interval is the usual approximation: its ranks
// come from the no-ties distribution.
//
// ok is false, and lo and hi are NaN, when no interval reaches the
// confidence with these sample sizes, that is when 1/C(n1+n2, n1) >
// (1-confidence)/2 (at 0.95: 3+3, 3+4, 2+7, 1+38 and anything smaller;
// 4+4, 3+5, 2+8 and 1+39 are enough), when confidence is not strictly
// between 0 and 1, or when est is NaN. est is NaN when an arm is empty
// or holds a value that is not a positive finite number (a ratio of
// logs needs positive values); otherwise it is returned even when ok is
// false. base and head are not modified.
func ShiftCI(base, head []float64, confidence float64) (est, lo, hi float64, ok bool) {
	nan := math.NaN()
	n1, n2 := len(base), len(head)
	if n1 == 0 || n2 == 0 || !allPositive(base) || !allPositive(head) {
		return nan, nan, nan, false
	}
	d := make([]float64, 0, n1*n2)
	for _, h := range head {
		for _, b := range base {
			d = append(d, math.Log(h)-math.Log(b))
		}
	}
	slices.Sort(d)
	est = math.Exp(median(d))
	k := mosesRank(n1, n2, confidence)
	if k < 1 {
		return est, nan, nan, false
	}
	return est, math.Exp(d[k-1]), math.Exp(d[len(d)-k]), true
}

func allPositive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 1) {
			return false
		}
	}
	return true
}

// mosesRank is the 1-based rank k of the lower bound of Moses' interval
// among the n1*n2 sorted differences (the upper bound is the k-th from the
// top): the largest k with P(U <= k-1) <= (1-confidence)/2. It is 0 when
// even P(U <= 0) = 1/C(n1+n2, n1) is too large.
func mosesRank(n1, n2 int, confidence float64) int {
	if !(confidence > 0 && confidence < 1) {
		return 0 // no finite interval has 100% (or NaN) confidence
	}
	tail := (1 - confidence) / 2
	if n1 > exactLimit || n2 > exactLimit {
		// Normal approximation with continuity correction:
		// P(U <= k-1) ~ Phi((k-1+0.5-mu)/sigma) <= tail. U's tails
		// are lighter than the normal's, so this k is at most the
		// exact one (by 1 or 2 at 99%, tested at 50 values): a
		// slightly wider, conservative interval.
		mu := float64(n1*n2) / 2
		sigma := math.Sqrt(float64(n1*n2) * float64(n1+n2+1) / 12)
		k := int(math.Floor(mu-0.5+sigma*stdNormalInvCDF(tail))) + 1
		return max(min(k, n1*n2/2), 0)
	}
	// Exact: k-1 is the largest u with P(U <= u) <= tail. The
	// distribution's symmetry about n1*n2/2 keeps k <= (n1*n2+1)/2 for
	// any tail below 1/2.
	ties := make([]int, n1+n2)
	for i := range ties {
		ties[i] = 1
	}
	umax := n1 * n2 / 2
	counts, total := uCounts(n1, ties, 2*umax)
	k, cum := 0, 0.0
	for u := 0; u <= umax; u++ {
		cum += counts[2*u] // without ties 2U is even
		if cum/total > tail*(1+confidenceFuzz) {
			break
		}
		k = u + 1
	}
	return k
}
