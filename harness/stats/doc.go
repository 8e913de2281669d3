// Package stats is the statistics of the two-arm comparison (base and
// head swept in one job): the same methods benchstat uses, so a reviewer
// who knows benchstat reads our numbers the same way.
//
// # API
//
//	s := stats.Summarize(xs, 0.95)      // median, its CI, n
//	p := stats.MannWhitneyU(base, head) // two-sided p-value
//	est, lo, hi, ok := stats.ShiftCI(base, head, 0.95)
//	                                    // head/base ratio and its CI
//	spread := stats.RelSpreadPct(xs)    // MAD/median*100
//	reject := stats.Holm(ps, 0.05)      // which of ps stay significant
//
// # Why these methods
//
// Benchmark repeats on a shared machine are not normal: they are skewed
// (a run can be slowed by a neighbour far more than it can be sped up)
// and have outliers (one repeat that lost a core). A mean and a t-test
// are pulled by one bad repeat; a median and a rank test are not. So,
// like benchstat's default (golang.org/x/perf/benchmath.AssumeNothing),
// nothing here assumes a distribution:
//
//   - Summarize: the sample median, and the distribution-free confidence
//     interval of the median from order statistics. The number of samples
//     below the true median is Binomial(n, 1/2), so the interval between
//     order statistics x(l) and x(r) covers the median with a probability
//     that depends on n alone. With few samples no pair of order
//     statistics reaches the confidence, and a bound is -Inf or +Inf
//     (benchmath prints "±∞"): at 95% both bounds are finite from n = 6
//     (x(1)..x(6), 96.9%); n = 5 reaches only 93.75% between x(1) and
//     x(5), so its interval is (-Inf, x(5)] at 96.9%, and n <= 4 gives
//     -Inf..+Inf. Up to n = 30 the binomial is summed exactly, above that
//     its normal approximation is used, as benchmath does; the chosen
//     order statistics are benchmath's for every n (tested).
//   - MannWhitneyU: the Mann-Whitney U (Wilcoxon rank-sum) test, two
//     sided, which is what benchmath.AssumeNothing.Compare reports. The p
//     value is exact (the permutation distribution of U, with ties given
//     their mid-rank and the exact distribution conditioned on the ties)
//     while both samples have at most 50 values (25 when there are ties),
//     and otherwise the normal approximation with tie and continuity
//     correction; both as in benchmath. One deliberate difference: the
//     exact two-sided p is twice the smaller of the two tails, capped at
//     1. benchmath doubles the lower tail at min(U1, U2), which is the
//     same when U's distribution is symmetric (no ties, or a tie pattern
//     that reads the same from both ends), but with asymmetric ties it
//     can give p = 0 or p > 1 ({1} vs {0, 0}: benchmath 4/3, here 2/3).
//     Throughput samples of distinct values have no ties; per-repeat p99
//     latencies from a histogram can. With n samples per arm the
//     smallest possible p is 2/C(2n, n): 0.1 for 3+3, 0.029 for 4+4,
//     0.0079 for 5+5. So 4 repeats per arm is the least that can ever
//     reach p < 0.05, and 5+5 still does with up to 2 of the 25
//     base-head pairs out of order.
//   - ShiftCI: the size of the change, with an interval. The
//     Hodges-Lehmann estimate of the shift between the arms is the median
//     of all n1*n2 pairwise differences head_j - base_i, and Moses'
//     interval is the pair of order statistics of those differences whose
//     ranks come from the same exact U distribution as the test (so,
//     without ties, the interval excludes a ratio of 1 exactly when the
//     test's p is at most 1-conf). The differences are taken between logarithms, so the shift
//     is a ratio head/base (throughputs change by factors, and a ratio is
//     what a percentage reports) and is returned as that ratio: est, lo
//     and hi are exp of the log shift. The interval needs the smallest
//     possible tail, 1/C(n1+n2, n1), to be at most (1-conf)/2: at 95%
//     that is 4+4 (or 3+5, 2+8), not 3+3; below that ok is false. Unlike
//     the median CIs (which benchmath computes per arm, and which at 5
//     repeats still have a -Inf lower bound) the shift CI says directly
//     how large the change is and how sure we are, which two overlapping
//     per-arm intervals do not.
//   - RelSpreadPct: the arm's own noise, as the median absolute deviation
//     over the median, in percent. The MAD is robust like the median (one
//     outlier moves it by at most one rank), and it is the raw MAD, not
//     scaled by 1.4826 to estimate a normal sigma, since nothing here is
//     assumed normal. The verdict calls a change faster or slower only
//     when it is both significant (p < alpha) and larger than this spread,
//     so a tiny but consistent difference on a noisy machine is reported
//     as within noise.
//   - Holm: when several points are tested at once, the Holm-Bonferroni
//     step-down keeps the chance of any false alarm at alpha without
//     assuming the tests are independent (neighbouring batch sizes are
//     not), and it rejects at least what plain Bonferroni rejects.
//
// # Conventions
//
// Inputs are never modified. A NaN among the values makes the result NaN
// (Summarize, MannWhitneyU, RelSpreadPct) or not ok (ShiftCI): nothing is
// invented for a missing figure. Where benchmath reports an error (an
// empty sample, all values equal) MannWhitneyU returns p = 1, as
// benchmath's Compare does. The package has no dependencies; the tests
// check it against golang.org/x/perf/benchmath on seeded random and tied
// samples and check ShiftCI against brute-force enumeration.
package stats
