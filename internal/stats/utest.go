package stats

import (
	"math"
	"slices"
)

// Sample sizes up to which MannWhitneyU uses the exact distribution of U,
// as go-moremath's MannWhitneyExactLimit and MannWhitneyTiesExactLimit
// (which benchmath uses): beyond them the normal approximation is close
// and the exact one is expensive.
const (
	exactLimit     = 50
	tiesExactLimit = 25
)

// MannWhitneyU returns the two-sided p-value of the Mann-Whitney U test
// of the null hypothesis that a and b come from the same distribution:
// the P of benchmath.AssumeNothing.Compare on the same values.
//
// Ties get their mid-rank. The p-value is exact (twice the smaller tail
// of the permutation distribution of U given the tie pattern, at most 1)
// when both samples have at most 50 values, or at most 25 when any two
// values tie; otherwise it is the normal approximation with tie and
// continuity correction. It equals benchmath's except for exact tests
// on samples whose tie pattern is asymmetric (see the comment in the
// code), where benchmath's is wrong. When a or b is empty or all values
// are equal the test has nothing to say and p is 1, as in benchmath. A
// NaN among the values gives NaN. a and b are not modified.
func MannWhitneyU(a, b []float64) (p float64) {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	if slices.ContainsFunc(a, math.IsNaN) || slices.ContainsFunc(b, math.IsNaN) {
		return math.NaN()
	}
	u1, ties := uStatistic(a, b)
	hasTies := len(ties) < n1+n2
	if len(ties) == 1 {
		return 1 // all values equal
	}
	u2 := float64(n1*n2) - u1
	if !hasTies && n1 <= exactLimit && n2 <= exactLimit ||
		hasTies && n1 <= tiesExactLimit && n2 <= tiesExactLimit {
		// Twice the smaller tail: P(U1 <= u1) or P(U1 >= u1), the
		// latter being P(U2 <= u2) with the arms' roles swapped.
		// Without ties (or with a tie pattern that reads the same
		// from both ends) U1 is symmetric about n1*n2/2 and this is
		// benchmath's 2*P(U1 <= min(u1, u2)), or 1 when u1 = u2.
		// With asymmetric ties benchmath's formula takes the tail
		// of the wrong statistic and its tie code has an edge bug
		// (go-moremath's UDist.CDF is 2/3, not 0, for n1 = 1, ties
		// [2 1], U = 0), so it can give p = 0 for {1} vs {0, 0} or
		// p > 1; here the tails are both computed and p is at most 1.
		if !hasTies { // symmetric: the smaller tail is at min(u1, u2)
			return min(1, 2*uCDF(n1, ties, min(u1, u2)))
		}
		return min(1, 2*min(uCDF(n1, ties, u1), uCDF(n2, ties, u2)))
	}

	t := 0
	for _, k := range ties {
		t += k*k*k - k
	}
	N := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	sigma := math.Sqrt(float64(n1*n2) * ((N + 1) - float64(t)/(N*(N-1))) / 12)
	if sigma == 0 {
		return 1
	}
	numer := u1 - mu
	switch {
	case numer > 0:
		numer -= 0.5
	case numer < 0:
		numer += 0.5
	}
	z := numer / sigma
	cdf := math.Erfc(-z/math.Sqrt2) / 2
	return 2 * math.Min(cdf, 1-cdf)
}

// uStatistic returns U for a (the number of pairs (a_i, b_j) with
// a_i > b_j, plus half the pairs that tie) and the tie vector: the size of
// each group of equal values in the merged, sorted sample, in ascending
// order of value.
func uStatistic(a, b []float64) (u float64, ties []int) {
	type v struct {
		x     float64
		fromA bool
	}
	merged := make([]v, 0, len(a)+len(b))
	for _, x := range a {
		merged = append(merged, v{x, true})
	}
	for _, x := range b {
		merged = append(merged, v{x, false})
	}
	slices.SortFunc(merged, func(p, q v) int {
		switch {
		case p.x < q.x:
			return -1
		case p.x > q.x:
			return 1
		}
		return 0
	})
	r1 := 0.0 // rank sum of a
	for i := 0; i < len(merged); {
		first, na := i+1, 0
		for x := merged[i].x; i < len(merged) && merged[i].x == x; i++ {
			if merged[i].fromA {
				na++
			}
		}
		r1 += float64(first+i) / 2 * float64(na) // mid-rank of ranks first..i
		ties = append(ties, i-first+1)
	}
	n1 := len(a)
	return r1 - float64(n1*(n1+1))/2, ties
}

// uCDF is P(U <= u) for a first sample of n1 values under the null
// hypothesis, given the tie vector of the merged sample (all 1s when
// there are no ties).
func uCDF(n1 int, ties []int, u float64) float64 {
	twoU := int(math.Floor(2 * u))
	if twoU < 0 {
		return 0
	}
	counts, total := uCounts(n1, ties, twoU)
	sum := 0.0
	for _, c := range counts {
		sum += c
	}
	return sum / total
}

// uCounts returns, for v = 0..maxTwoU, the number of ways to choose which
// n1 of the merged values are the first sample such that 2U = v (every
// choice being equally likely under the null hypothesis), and the number
// of choices, C(n1+n2, n1). It counts group by tie group by the sum of
// the chosen values' doubled mid-ranks (an integer), keeping only sums
// that can still end at or below the bound.
func uCounts(n1 int, ties []int, maxTwoU int) (counts []float64, total float64) {
	// 2U = 2R1 - n1(n1+1), with R1 the first sample's rank sum.
	base := n1 * (n1 + 1)
	limit := maxTwoU + base // largest 2R1 counted
	// count[j][s]: ways to put j of the values seen so far in the first
	// sample with doubled rank sum s.
	count := make([][]float64, n1+1)
	for j := range count {
		count[j] = make([]float64, limit+1)
	}
	// Only count[j][lo[j]..hi[j]] can be non-zero (hi < lo: none yet).
	lo, hi := make([]int, n1+1), make([]int, n1+1)
	for j := range lo {
		lo[j], hi[j] = limit+1, -1
	}
	count[0][0], lo[0], hi[0] = 1, 0, 0
	start := 1
	for _, t := range ties {
		twoMid := start + start + t - 1 // doubled mid-rank of this group
		ways := make([]float64, t+1)    // ways[r]: r of the group's t values
		for r := range ways {
			ways[r] = choose64(t, r)
		}
		for j := min(start-1, n1); j >= 0; j-- {
			for s := lo[j]; s <= hi[j]; s++ {
				c := count[j][s]
				if c == 0 {
					continue
				}
				for r := 1; r <= t && j+r <= n1; r++ {
					s2 := s + r*twoMid
					if s2 > limit {
						break
					}
					count[j+r][s2] += c * ways[r]
					lo[j+r], hi[j+r] = min(lo[j+r], s2), max(hi[j+r], s2)
				}
			}
		}
		start += t
	}
	return count[n1][base:], choose64(start-1, n1)
}

// choose64 is n choose k in float64, exact while it fits in 53 bits.
func choose64(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	k = min(k, n-k)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}
