package main

import (
	"math"
	"slices"

	"github.com/ceiling-bench/ceiling/internal/stats"
)

// The common-mode model (-common-mode): what a duet arrangement (both
// arms measured at the same time, Bulej et al., ICPE 2020) would do to
// the spread of the pair ratio, against the interleaved pairs the harness
// records (base and head back to back). It is a model: this machine has
// two cores, too few to run two servers and two generators at once, so
// no duet was measured. See the package comment and modelCommonMode.

// commonFractions are the assumed common-mode fractions c of the model's
// duet rows (each raised to a sequence's own lower bound rho1).
var commonFractions = []float64{0.5, 0.9}

// cmSequence is one sequence's time-scale decomposition.
type cmSequence struct {
	name string
	// total, fast and pair are MADs of log throughput, in percent
	// (about MAD/median*100): one run about the sequence's median, one
	// run's fast part (what neighbouring blocks do not share; see
	// decompose), and the recorded pair's log ratio.
	total, fast, pair float64
	// rho1 is the correlation of a block's two runs' fast parts: the
	// share of the fast variation that back-to-back runs already cancel.
	rho1 float64
}

// cmRow is one arrangement's pair ratios over the same windows as the
// main table, judged by the paired rule at n blocks.
type cmRow struct {
	label  string
	spread float64 // MAD of the log ratio over every block, percent
	mdc    float64 // median PairedMDC over the windows at shift 0, log
	power  [nShifts]float64
}

type commonMode struct {
	seqs []cmSequence
	rows []cmRow
}

// modelCommonMode decomposes each sequence's variation by time scale and
// models duet pairs from it.
//
// A run's log throughput is taken as slow + fast: slow is what
// neighbouring blocks share (it cancels in any pair, interleaved or
// duet), fast the rest, a disturbance with a shorter memory (a
// neighbour's burst, a frequency change) and the run's own noise. Let
// sigma^2 be the fast part's variance, rho(tau) the correlation of two
// runs' fast parts at a time gap tau. An interleaved pair has tau = one
// run, so its log ratio has variance 2 sigma^2 (1 - rho1); a duet pair
// has tau = 0 and variance 2 sigma^2 (1 - c), c = rho(0) being the
// fraction of the fast variance that two simultaneous runs would see
// alike. The recorded blocks estimate rho1; nothing recorded one run
// after another can estimate c, since what c adds over rho1 is exactly
// what changes faster than one run. If a disturbance's correlation does
// not grow with the gap, c >= rho1, so duet is at least as good as
// interleaving, and that is all the data bound. The duet rows assume a c
// and scale each sequence's recorded log ratios by sqrt((1-c)/(1-rho1)),
// c raised to the sequence's rho1 where it is below it. Scaling leaves
// the signed-rank test's false alarms as they are (its p does not depend
// on scale), so the rows show spread, MDC and power.
func modelCommonMode(seqs []sequence, windows []window, o options) *commonMode {
	cm := &commonMode{}
	var allD [][]float64
	for _, s := range seqs {
		d := stats.LogRatios(s.base, s.head)
		allD = append(allD, d)
		cm.seqs = append(cm.seqs, decompose(s, d))
	}
	scales := [][]float64{make([]float64, len(seqs))} // interleaved: as recorded
	for i := range seqs {
		scales[0][i] = 1
	}
	labels := []string{"interleaved (recorded pairs)"}
	for _, c := range commonFractions {
		k := make([]float64, len(seqs))
		for i, cs := range cm.seqs {
			k[i] = duetScale(c, cs.rho1)
		}
		scales = append(scales, k)
		labels = append(labels, "duet model, c = "+fmtFrac(c))
	}
	for ri, k := range scales {
		row := cmRow{label: labels[ri]}
		var pooled []float64
		for i, d := range allD {
			for _, x := range d {
				pooled = append(pooled, k[i]*x)
			}
		}
		row.spread = mad(pooled) * 100
		var mdcs []float64
		calls := [nShifts]int{}
		dw := make([]float64, o.n)
		for _, w := range windows {
			d := allD[w.seq]
			for si, s := range shifts {
				for j := range dw {
					x := k[w.seq] * d[(w.start+j)%len(d)]
					if w.swap {
						x = -x
					}
					dw[j] = x + math.Log1p(-s)
				}
				dec := pairedDecision(dw, stats.SignedRank(dw) < o.alpha, o.alpha)
				if dec.called && (si == 0 || dec.dir < 0) {
					calls[si]++
				}
				if si == 0 {
					mdcs = append(mdcs, dec.mdc)
				}
			}
		}
		for si := range shifts {
			row.power[si] = float64(calls[si]) / float64(len(windows))
		}
		row.mdc = medianOf(mdcs)
		cm.rows = append(cm.rows, row)
	}
	return cm
}

// duetScale is sqrt((1-c)/(1-rho1)) with c raised to rho1: the factor by
// which a duet pair's log ratio is smaller than an interleaved one's.
func duetScale(c, rho1 float64) float64 {
	if !(rho1 < 1) {
		return 1
	}
	c = max(c, rho1)
	return math.Sqrt((1 - c) / (1 - rho1))
}

// decompose is a sequence's spread by time scale, and rho1.
//
// With a run's log throughput slow + fast (the fast part: whatever
// neighbouring blocks do not share, a disturbance and the run's own
// noise, of variance sigma^2, its two runs' fast parts correlated by
// rho1), two contrasts separate sigma^2 and rho1 without estimating the
// slow level itself (whose own noise both runs of a block would share,
// which would read as correlation):
//
//   - the pair's log ratio d = fast_h - fast_b: Var = 2 sigma^2 (1 - rho1);
//   - the block's level against its neighbours', L_i - (L_{i-1} +
//     L_{i+1})/2 with L the mean log of a block's two runs: Var = 1.5 *
//     Var(L) = 0.75 sigma^2 (1 + rho1), if the fast parts of different
//     blocks are independent and the slow level is locally linear (a
//     curve or a step leaks in; the robust scale keeps a few steps out).
//
// The scales are MADs, so a few disturbed blocks do not dominate; their
// ratios are those of the variances for normal data.
func decompose(s sequence, d []float64) cmSequence {
	n := len(s.base)
	lb, lh := logs(s.base), logs(s.head)
	level := make([]float64, n)
	for i := range n {
		level[i] = (lb[i] + lh[i]) / 2
	}
	var curv []float64
	for i := 1; i+1 < n; i++ {
		curv = append(curv, level[i]-(level[i-1]+level[i+1])/2)
	}
	cs := cmSequence{
		name:  s.name,
		total: mad(append(slices.Clone(lb), lh...)) * 100,
		pair:  mad(d) * 100,
	}
	a := sq(mad(curv)) / 0.75 // sigma^2 (1 + rho1)
	b := sq(mad(d)) / 2       // sigma^2 (1 - rho1)
	if a+b > 0 {
		cs.rho1 = (a - b) / (a + b)
		cs.fast = math.Sqrt((a+b)/2) * 100
	}
	return cs
}

func sq(x float64) float64 { return x * x }

// mad is the raw median absolute deviation about the median.
func mad(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m := medianOf(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return medianOf(dev)
}

// medianOf is the median (mean of the middle two for an even count); NaN
// for none. xs is not modified.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
