package stats

import (
	"cmp"
	"slices"
)

// Holm applies the Holm-Bonferroni step-down procedure to the p-values
// of several tests made together, keeping the probability of any false
// rejection at most alpha whatever the dependence between the tests. It
// returns, in the order of ps, whether each null hypothesis is rejected.
//
// The p-values are taken from the smallest up; the i-th smallest (i from
// 0) is rejected while p < alpha/(m-i), and at the first one that is not,
// it and all larger ones are kept. The comparison is strict, like the
// verdict's p < alpha, so a single test is rejected exactly when
// p < alpha. A NaN p-value (a test that could not be made) is never
// rejected and sorts last. ps is not modified.
func Holm(ps []float64, alpha float64) []bool {
	m := len(ps)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	// cmp.Compare orders NaN first; put it last instead.
	slices.SortStableFunc(order, func(i, j int) int {
		pi, pj := ps[i], ps[j]
		if pi != pi || pj != pj {
			return cmp.Compare(boolInt(pi != pi), boolInt(pj != pj))
		}
		return cmp.Compare(pi, pj)
	})
	reject := make([]bool, m)
	for rank, i := range order {
		if !(ps[i] < alpha/float64(m-rank)) {
			break
		}
		reject[i] = true
	}
	return reject
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
