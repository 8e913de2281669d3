// Package changepoint finds where a performance history changed level:
// the entries of one series (a published headline or a batch's ceiling,
// one regime) at which the values after differ from the values before by
// more than noise, so that a slope of small regressions over several
// merges, each inside its pull request's noise, is seen as the change it
// adds up to.
//
// # Method
//
// It is E-divisive means (Matteson & James, JASA 2014) as Hunter
// (DataStax, ICPE 2023) and its successor Apache Otava run it over CI
// performance series:
//
//  1. Split. Within a segment, the split is placed where the energy
//     distance between the values before it and a run of values after it
//     is largest (the E-divisive statistic with exponent 1, over the
//     split and the end of the run after it, each side at least
//     MinSegment values long: a change undone soon after is seen too).
//  2. Keep. A split is kept when Welch's t-test between those two sides
//     gives p below MaxP (Hunter's change: a t-test, deterministic where
//     E-divisive's permutation test is not) and the means differ by at
//     least the least change, relative: MinMagnitude, and with
//     DetectFloored each side's own noise, the median of the noise
//     floors its values know (an A-A floor, what a repeat of that entry
//     measured), so that a real but tiny shift does not flood anyone,
//     and a run of entries each of which its own repeat disowned is not
//     a level. Kept splits divide their segment, and each side is split
//     again, until none is kept.
//  3. Re-test. Each change point is tested again between its neighbours
//     (the segments it now separates), and the weakest that no longer
//     holds is dropped, until all hold (Hunter's pass: two nearby changes
//     are both kept, and a split that held only inside a larger segment
//     is not).
//
// The package is pure and deterministic: no randomness, no clock, no
// I/O. What a series is (which entries, which are lower bounds to leave
// out) is the caller's.
package changepoint

import (
	"math"
	"slices"

	"github.com/ceiling-bench/ceiling/internal/stats"
)

// Options are the detector's parameters.
type Options struct {
	// MaxP: a split is kept when Welch's t-test gives p below it.
	MaxP float64
	// MinMagnitude: ... and when |mean after / mean before − 1| is at
	// least it (a fraction: 0.05 is 5%), and at least each side's median
	// floor (DetectFloored).
	MinMagnitude float64
	// MinSegment is the fewest values a segment keeps on each side of a
	// split (at least 2: a t-test needs two values on a side).
	MinSegment int
}

// Defaults are the parameters fixed before the validation in
// docs/report.md ran: MaxP as Otava's default, MinMagnitude 0 (the caller
// sets it from the A-A floors), 3 values on a side.
var Defaults = Options{MaxP: 0.001, MinMagnitude: 0, MinSegment: 3}

// ChangePoint is one change: Index is the first value after it.
type ChangePoint struct {
	Index           int
	MeanBefore      float64
	MeanAfter       float64
	Change          float64 // MeanAfter/MeanBefore − 1
	P               float64 // Welch's t-test between the two segments
	NBefore, NAfter int     // the values of the two segments
	// MinMagnitude is the least |Change| it had to show: the larger of
	// Options.MinMagnitude and the two segments' median floors.
	MinMagnitude float64
}

// Detect returns the change points of xs (in order of Index), each with
// the segments it separates: the values from the change point before it
// (or the start) and to the one after it (or the end).
func Detect(xs []float64, o Options) []ChangePoint { return DetectFloored(xs, nil, o) }

// DetectFloored is Detect where each value knows its own noise: floors[i]
// is the relative noise floor of xs[i] (a fraction; 0, negative or NaN:
// unknown), and a split must also change the mean by at least the median
// of the known floors on each side of it (a side that knows none asks
// only MinMagnitude). floors nil is Detect; otherwise it is as long as
// xs.
func DetectFloored(xs, floors []float64, o Options) []ChangePoint {
	o.MinSegment = max(o.MinSegment, 2)
	if len(xs) < 2*o.MinSegment {
		return nil
	}
	if floors != nil && len(floors) != len(xs) {
		panic("changepoint: floors and values differ in length")
	}
	s := series{xs: xs, floors: floors}
	e := newEnergy(xs)
	var cuts []int
	var split func(lo, hi int)
	split = func(lo, hi int) {
		tau, kappa, ok := bestSplit(e, lo, hi, o.MinSegment)
		if !ok {
			return
		}
		if _, kept := s.test(lo, tau, kappa, o); !kept {
			return
		}
		cuts = append(cuts, tau)
		split(lo, tau)
		split(tau, hi)
	}
	split(0, len(xs))
	slices.Sort(cuts)
	// Re-test each between its neighbours; drop the weakest that fails.
	for {
		weakest, worst := -1, -1.0
		for i, c := range cuts {
			lo, hi := around(cuts, i, len(xs))
			cp, kept := s.test(lo, c, hi, o)
			if kept {
				continue
			}
			// The weakest: the highest p; below MaxP, the smallest change.
			score := cp.P
			if !(cp.P >= o.MaxP) {
				score = o.MaxP - math.Abs(cp.Change)
			}
			if score > worst {
				weakest, worst = i, score
			}
		}
		if weakest < 0 {
			break
		}
		cuts = slices.Delete(cuts, weakest, weakest+1)
	}
	out := make([]ChangePoint, len(cuts))
	for i, c := range cuts {
		lo, hi := around(cuts, i, len(xs))
		out[i], _ = s.test(lo, c, hi, o)
	}
	return out
}

// around is the segment that cut i of cuts (sorted) splits: from the cut
// before it (or 0) to the cut after it (or n).
func around(cuts []int, i, n int) (lo, hi int) {
	lo, hi = 0, n
	if i > 0 {
		lo = cuts[i-1]
	}
	if i+1 < len(cuts) {
		hi = cuts[i+1]
	}
	return lo, hi
}

// series is the values and, where known, each one's noise floor.
type series struct{ xs, floors []float64 }

// test is the change at tau between xs[lo:tau] and xs[tau:hi], and
// whether it holds (p below MaxP, magnitude at least the least change:
// MinMagnitude and each side's median floor).
func (s series) test(lo, tau, hi int, o Options) (ChangePoint, bool) {
	a, b := s.xs[lo:tau], s.xs[tau:hi]
	_, _, p := stats.WelchT(a, b)
	ma, mb := meanOf(a), meanOf(b)
	least := max(o.MinMagnitude, s.medianFloor(lo, tau), s.medianFloor(tau, hi))
	cp := ChangePoint{Index: tau, MeanBefore: ma, MeanAfter: mb, Change: mb/ma - 1, P: p, NBefore: len(a), NAfter: len(b), MinMagnitude: least}
	return cp, p < o.MaxP && math.Abs(cp.Change) >= least
}

// medianFloor is the median of the known floors of values [lo, hi), or 0.
func (s series) medianFloor(lo, hi int) float64 {
	if s.floors == nil {
		return 0
	}
	var fs []float64
	for _, f := range s.floors[lo:hi] {
		if f > 0 { // NaN and unknown (0, negative) are left out
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return 0
	}
	slices.Sort(fs)
	n := len(fs)
	return (fs[(n-1)/2] + fs[n/2]) / 2
}

// energy holds the 2-D prefix sums of |xs[a] − xs[b]|, so that the sum
// of the distances within a segment, or across two, is had in O(1):
// p[i][j] = Σ |xs[a] − xs[b]| over a < i, b < j.
type energy struct{ p [][]float64 }

func newEnergy(xs []float64) energy {
	n := len(xs)
	p := make([][]float64, n+1)
	for i := range p {
		p[i] = make([]float64, n+1)
	}
	for a := 1; a <= n; a++ {
		row := 0.0
		for b := 1; b <= n; b++ {
			row += math.Abs(xs[a-1] - xs[b-1])
			p[a][b] = p[a-1][b] + row
		}
	}
	return energy{p}
}

// block is Σ |xs[a] − xs[b]| over a in [i, j), b in [k, l).
func (e energy) block(i, j, k, l int) float64 {
	return e.p[j][l] - e.p[i][l] - e.p[j][k] + e.p[i][k]
}

// bestSplit is E-divisive's split of [lo, hi) (Matteson & James, exponent
// 1): the tau, with the end kappa of the segment after it, that maximize
//
//	Q = mn/(m+n) · (2/(mn)·B − W_L/C(m,2) − W_R/C(n,2))
//
// between [lo, tau) and [tau, kappa), m and n their sizes, B the sum of
// the distances across them and W_L, W_R those within each; both at
// least minSeg long. The end kappa need not be hi, so that a change
// that is undone soon after (a dip) is seen against what follows it. A
// tie goes to the earliest tau, then kappa. false: too short to split.
func bestSplit(e energy, lo, hi, minSeg int) (tau, kappa int, ok bool) {
	bestQ := math.Inf(-1)
	for t := lo + minSeg; t+minSeg <= hi; t++ {
		m := float64(t - lo)
		wl := e.block(lo, t, lo, t) / 2
		for k := t + minSeg; k <= hi; k++ {
			n := float64(k - t)
			b := e.block(lo, t, t, k)
			wr := e.block(t, k, t, k) / 2
			q := m * n / (m + n) * (2/(m*n)*b - wl/(m*(m-1)/2) - wr/(n*(n-1)/2))
			if q > bestQ {
				tau, kappa, bestQ, ok = t, k, q, true
			}
		}
	}
	return tau, kappa, ok
}

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
