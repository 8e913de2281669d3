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
// Paired (pair i is base repeat i and head repeat i, run back to back in
// the compare phase's ABBA order):
//
//	d := stats.LogRatios(base, head)    // ln(head_i/base_i), NaN if missing
//	p := stats.SignedRank(d)            // Wilcoxon signed-rank, two-sided p
//	est, lo, hi, ok := stats.PairedShiftCI(d, 0.95)
//	                                    // log ratio and its CI (exp them)
//	stats.MinSignedRankP(n)             // smallest p n pairs can give
//	stats.MinPairs(0.05)                // 6: fewer can never give p < 0.05
//	stats.MinUnpairedN(0.05)            // 4: the same per arm for the U test
//	mdc := stats.PairedMDC(d, 0.05, 0.8)
//	                                    // smallest log ratio detectable
//	mdc = stats.UnpairedMDC(logBase, logHead, 0.05, 0.8)
//	t := stats.StudentTQuantile(0.975, 7)
//	levels := stats.SequentialLevels([]int{6, 8, 10, 12}, 0.05, stats.SpendOBF)
//	                                    // stop at look k if p < levels[k]
//	                                    // (or stats.SpendPocock)
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
// # Why paired methods
//
//   - Pairs see through drift. The compare phase runs the arms back to
//     back, in ABBA order, so the two runs of a pair share the machine's
//     state of the moment: its clock, its temperature, its neighbours'
//     load. The log ratio of a pair cancels whatever changes more slowly
//     than a pair takes, and alternating which arm goes first cancels a
//     steady trend within a block instead of handing it to one arm.
//     MannWhitneyU pools each arm's repeats, so a drift over the run adds
//     to both arms' spread and hides a change smaller than the drift:
//     docs/compare.md has a run whose five pairs read 0.63, 0.53, 0.54,
//     0.59 and 1.01 and whose U test found nothing (five pairs are too
//     few for the paired test as well, see below). The paired test sees
//     only the noise within a pair. Pairing has a price: with n pairs the
//     smallest possible p is 2/2^n, against 2/C(2n, n) for n repeats per
//     arm unpaired, so it takes 6 pairs (MinPairs) where the U test can
//     reach 0.05 from 4+4 (MinUnpairedN).
//   - SignedRank: the Wilcoxon signed-rank test of the log ratios. If
//     the arms do not differ, which run of a pair is base does not
//     matter, so each ratio is as likely to be r as 1/r and the log
//     ratios are symmetric about 0; the test assumes nothing else. A t
//     test on the log ratios would assume them normal, and one pair that
//     lost a core drags their mean; the signed-rank test uses each pair's
//     rank, not its size, and under normality it loses only 5% of the t
//     test's efficiency (3/pi), and it gains on heavier tails. Pairs that
//     measured the same are dropped, as R's wilcox.test drops them, and
//     tied magnitudes get their mid-rank. The p-value is exact, given the
//     ties, up to 50 non-zero pairs (the normal approximation with tie and
//     continuity correction beyond, as R). The smallest p, every pair
//     going the same way, is 2/2^n (MinSignedRankP): 0.0625 for 5 pairs,
//     0.031 for 6, 0.016 for 7, 0.0078 for 8. So 5 pairs can never show
//     a change at 0.05 however large it is, 6 show it only if every pair
//     agrees, and 8 still do with one or two pairs going the other way
//     if they are among the smallest (ranks summing to at most 3: p =
//     0.039).
//   - PairedShiftCI: the size of the change with an interval, the
//     paired counterpart of ShiftCI. The Hodges-Lehmann estimate is the
//     median of the Walsh averages (d_i+d_j)/2, i <= j, and Tukey's
//     interval takes order statistics of them whose ranks come from the
//     same exact distribution as the test, so without ties or zeros it
//     excludes a ratio of 1 exactly when SignedRank's p <= 1-conf. At 95%
//     it needs 6 pairs (1/2^n <= 0.025), at 99% 8. The values are log
//     ratios; exp gives head/base.
//   - PairedMDC and UnpairedMDC: the minimum detectable change, the
//     smallest true change that the test at alpha would catch with the
//     given power in a run like this one. It reads the noise from the
//     run robustly (1.4826*MAD, a normal sigma) and plans as for a t test
//     with Student quantiles, divided by the rank test's efficiency
//     sqrt(3/pi). A change reported as "within noise" means little
//     without it: with 8 pairs of 1% noise the MDC at 80% power is 1.2%,
//     and a 0.5% change would go unseen most of the time. It is +Inf when
//     there are too few pairs for any p < alpha, and 0 when the run shows
//     no noise at all (then only the measurements' resolution limits).
//     Its assumptions are those of any power calculation: the next run's
//     noise is this one's, the differences are about normal, a change
//     moves every pair alike. With few pairs the noise estimate is itself
//     noisy and low on average (1.4826*MAD averages 0.89 sigma at 8
//     pairs), so read it as the order of the smallest visible change, not
//     a guarantee; the tests check by simulation that at a known sigma the
//     power it plans is the power SignedRank gets (0.75 and 0.78 planned
//     at 0.8, for 8 and 12 pairs). UnpairedMDC does the same for the U
//     test, with Welch's degrees of freedom; next to PairedMDC on the same
//     run it shows what pairing buys.
//   - SequentialLevels, SpendOBF, SpendPocock: stopping early. Testing
//     after every few pairs and stopping at the first p < 0.05 raises the
//     false-alarm rate (looking at 6, 8, ..., 20 pairs: 14%, not 5%). A
//     group-sequential test gives each look a stricter level, so that the
//     chance of a false alarm by look k is at most an alpha-spending
//     function of the fraction of pairs seen (Lan and DeMets), and at
//     most alpha over the run. SpendOBF (O'Brien-Fleming type) spends
//     almost nothing early: a run stops early only on a large change, and
//     its last look keeps most of alpha (levels 0, 0, 0.004, 0.009, ...,
//     0.033 at 6, 8, 10, 12, ..., 20 pairs), so it costs little power
//     against one test of all the pairs (at a shift of 0.6 sigma: power
//     0.67 against 0.70, with 16.8 pairs used on average). SpendPocock
//     spends evenly: earlier stops, a stricter last look (about 0.012
//     throughout; power 0.56, 15.9 pairs). Under the null hypothesis the
//     joint law of the signed-rank statistics at the looks does not
//     depend on the data's distribution (fair signs, a random order of
//     magnitudes), so the levels come from a deterministic Monte Carlo of
//     that law and hold for any continuous data.
//
// # Conventions
//
// Inputs are never modified. A NaN among the values makes the result NaN
// (Summarize, MannWhitneyU, RelSpreadPct, SignedRank, PairedMDC,
// UnpairedMDC) or not ok (ShiftCI, PairedShiftCI): nothing is invented
// for a missing figure, and LogRatios keeps a missing pair as NaN at its
// index. Where benchmath reports an error (an empty sample, all values
// equal) MannWhitneyU returns p = 1, as benchmath's Compare does;
// SignedRank likewise returns 1 for no non-zero pairs. Significance is p
// < alpha, strictly, throughout. The package has no dependencies; the
// tests check it against golang.org/x/perf/benchmath on seeded random
// and tied samples, check ShiftCI, SignedRank and PairedShiftCI against
// brute-force enumeration, StudentTQuantile against tables and
// go-moremath's t distribution, and PairedMDC and SequentialLevels by
// simulation.
package stats
