package harness

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/stats"
)

// The comparison of a two-arm sweep (docs/compare.md).
//
// The harness measures both arms at each compared (batch, connections)
// CompareReps times, interleaved; DecideComparison turns those repeats —
// the curve's points with role "compare" — into verdicts. It is pure and
// reads nothing but the curve, so the publisher re-derives a document's
// comparison with the same function and refuses one that was edited.
//
// The rule, per compared point, on the clean repeats of each arm:
//
//   - An arm with fewer than 2 clean samples: cannot_conclude.
//   - The change is median(head)/median(base) - 1; the test is the
//     two-sided Mann-Whitney U (benchstat's); the spread is the larger of
//     the two arms' MAD/median.
//   - faster or slower only when p < alpha AND |change| > spread; else
//     within_noise.
//   - A generator-capped sample makes its arm a lower bound. A capped head
//     significantly above the base is still provably faster, a capped base
//     with a significantly slower head is still provably slower: both with
//     AtLeast. Every other case with a capped arm is cannot_conclude, since
//     the capped arm's true figure may lie anywhere above its own.
//   - p99 gets the same test on each repeat's p99 ("worse" when higher).
//     A capped arm's p99 includes the generator's own queueing, so with one
//     it is cannot_conclude.
//
// Only the headline gates; the other points are reported without a
// multiple-comparison correction (Comparison.Gate says so).

// Gate and Method are the Comparison's fixed descriptions.
const (
	CompareGate   = "headline: only the headline batch's compared point gates; the other points are reported, uncorrected for multiple comparisons"
	CompareMethod = "two-sided Mann-Whitney U test (as benchstat); medians with distribution-free confidence intervals; Hodges-Lehmann estimate and Moses interval of the head/base ratio on log values; a change must exceed the arms' MAD/median spread"
)

// DefaultAlpha and DefaultCompareReps are the two-arm sweep's defaults.
const (
	DefaultAlpha       = 0.05
	DefaultCompareReps = 5
)

// DecideComparison builds the comparison from a two-arm sweep's curve: one
// ComparedPoint per (batch, connections) that has points with role
// "compare", in ascending batch, and the headline batch's as Headline.
// reps is what was asked per arm (COMPARE_REPS) and alpha the test's
// level; the intervals are at confidence 1 - alpha. It returns nil when
// the curve has no point with an arm (a single-arm sweep).
func DecideComparison(curve []Point, headlineBatch, reps int, alpha float64) *Comparison {
	if !slices.ContainsFunc(curve, func(p Point) bool { return p.Arm != "" }) {
		return nil
	}
	c := &Comparison{
		Alpha: alpha, Confidence: 1 - alpha, Reps: reps,
		Gate: CompareGate, Method: CompareMethod,
		Points: []ComparedPoint{},
	}
	type key struct{ batch, conns int }
	var keys []key
	for _, p := range curve {
		k := key{p.Batch, p.Connections}
		if p.Role == RoleCompare && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.batch, b.batch), cmp.Compare(a.conns, b.conns))
	})
	found := false
	for _, k := range keys {
		var base, head []Point
		for _, p := range curve {
			if p.Role != RoleCompare || p.Batch != k.batch || p.Connections != k.conns {
				continue
			}
			switch p.Arm {
			case ArmBase:
				base = append(base, p)
			case ArmHead:
				head = append(head, p)
			}
		}
		cp := ComparePoint(k.batch, k.conns, base, head, alpha)
		c.Points = append(c.Points, cp)
		if k.batch == headlineBatch && !found {
			c.Headline, found = cp, true
		}
	}
	if !found {
		c.Headline = ComparePoint(headlineBatch, 0, nil, nil, alpha)
		c.Headline.Reason = fmt.Sprintf("no compared point at the headline batch %d: the first pass found no rung to compare there", headlineBatch)
	}
	return c
}

// ComparePoint applies the rule to one compared point's repeats (each
// arm's points with role "compare", in run order).
func ComparePoint(batch, conns int, base, head []Point, alpha float64) ComparedPoint {
	conf := 1 - alpha
	cp := ComparedPoint{
		Batch: batch, Connections: conns,
		Base: armStats(base, conf), Head: armStats(head, conf),
	}
	b, h := cp.Base, cp.Head
	cp.NBase, cp.NHead = b.N, h.N
	if b.N > 0 && h.N > 0 && b.MedianPerS > 0 {
		cp.ChangePct = fptr((h.MedianPerS/b.MedianPerS - 1) * 100)
	}
	cp.SpreadPct = max(stats.RelSpreadPct(b.SamplesPerS), stats.RelSpreadPct(h.SamplesPerS))
	if b.N < 2 || h.N < 2 {
		cp.Verdict, cp.P99Verdict = CompareCannotConclude, CompareCannotConclude
		cp.Reason = fmt.Sprintf("too few clean repeats to test: %s", counts(b, h))
		return cp
	}
	cp.PValue = fptr(stats.MannWhitneyU(b.SamplesPerS, h.SamplesPerS))
	if _, lo, hi, ok := stats.ShiftCI(b.SamplesPerS, h.SamplesPerS, conf); ok {
		cp.CILowPct, cp.CIHighPct = fptr((lo-1)*100), fptr((hi-1)*100)
	}
	p, change := *cp.PValue, *cp.ChangePct
	sig, big := p < alpha, math.Abs(change) > cp.SpreadPct
	test := fmt.Sprintf("change %+.1f%%, p = %.3g, spread %.1f%%, %s", change, p, cp.SpreadPct, counts(b, h))
	switch {
	case !b.LowerBound && !h.LowerBound:
		switch {
		case sig && big && change > 0:
			cp.Verdict, cp.Reason = CompareFaster, fmt.Sprintf("faster: p < %g and the change exceeds the spread (%s)", alpha, test)
		case sig && big:
			cp.Verdict, cp.Reason = CompareSlower, fmt.Sprintf("slower: p < %g and the change exceeds the spread (%s)", alpha, test)
		case !sig:
			cp.Verdict, cp.Reason = CompareWithinNoise, fmt.Sprintf("within noise: p ≥ %g (%s)", alpha, test)
		default:
			cp.Verdict, cp.Reason = CompareWithinNoise, fmt.Sprintf("within noise: significant but no larger than the arms' spread (%s)", test)
		}
	case h.LowerBound && !b.LowerBound && sig && big && change > 0:
		cp.Verdict, cp.AtLeast = CompareFaster, true
		cp.Reason = fmt.Sprintf("faster, at least %+.1f%%: the head is generator-capped (a lower bound) and still significantly above the base (%s)", change, test)
	case b.LowerBound && !h.LowerBound && sig && big && change < 0:
		cp.Verdict, cp.AtLeast = CompareSlower, true
		cp.Reason = fmt.Sprintf("slower, at least %.1f%%: the base is generator-capped (a lower bound) and the head is still significantly below it (%s)", change, test)
	default:
		cp.Verdict = CompareCannotConclude
		cp.Reason = fmt.Sprintf("cannot conclude: %s generator-capped (a lower bound), and the figures do not prove a change in the direction the bound allows (%s)", cappedArms(b, h), test)
	}

	bp, hp := p99s(b.P99SamplesNs), p99s(h.P99SamplesNs)
	cp.P99PValue = fptr(stats.MannWhitneyU(bp, hp))
	mb, mh := stats.Summarize(bp, conf).Median, stats.Summarize(hp, conf).Median
	if mb > 0 {
		cp.P99ChangePct = fptr((mh/mb - 1) * 100)
	}
	switch {
	case b.LowerBound || h.LowerBound:
		cp.P99Verdict = CompareCannotConclude
	case cp.P99ChangePct == nil:
		cp.P99Verdict = CompareCannotConclude
	case *cp.P99PValue < alpha && math.Abs(*cp.P99ChangePct) > max(stats.RelSpreadPct(bp), stats.RelSpreadPct(hp)):
		cp.P99Verdict = P99Better
		if *cp.P99ChangePct > 0 {
			cp.P99Verdict = P99Worse
		}
	default:
		cp.P99Verdict = CompareWithinNoise
	}
	return cp
}

// armStats summarizes one arm's repeats: the clean ones are samples, the
// others are counted as failed.
func armStats(ps []Point, confidence float64) ArmStats {
	a := ArmStats{SamplesPerS: []float64{}, P99SamplesNs: []int64{}, Points: []int{}}
	for _, p := range ps {
		if p.Status != StatusOK || !p.Clean {
			a.Failed++
			continue
		}
		a.SamplesPerS = append(a.SamplesPerS, p.ThroughputPerS)
		a.P99SamplesNs = append(a.P99SamplesNs, p.LatencyNs.P99)
		a.Points = append(a.Points, p.Index)
		a.LowerBound = a.LowerBound || p.LowerBound
	}
	a.N = len(a.SamplesPerS)
	if a.N == 0 {
		return a
	}
	s := stats.Summarize(a.SamplesPerS, confidence)
	a.MedianPerS = s.Median
	if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) && !math.IsNaN(s.Lo) && !math.IsNaN(s.Hi) {
		a.CILowPerS, a.CIHighPerS = fptr(s.Lo), fptr(s.Hi)
	}
	return a
}

func p99s(ns []int64) []float64 {
	out := make([]float64, len(ns))
	for i, v := range ns {
		out[i] = float64(v)
	}
	return out
}

// counts says n per arm and how many repeats did not count.
func counts(b, h ArmStats) string {
	s := fmt.Sprintf("n = %d + %d", b.N, h.N)
	var lost []string
	if b.Failed > 0 {
		lost = append(lost, fmt.Sprintf("%d base", b.Failed))
	}
	if h.Failed > 0 {
		lost = append(lost, fmt.Sprintf("%d head", h.Failed))
	}
	if len(lost) > 0 {
		s += "; " + strings.Join(lost, " and ") + " repeats failed or were not clean"
	}
	return s
}

func cappedArms(b, h ArmStats) string {
	switch {
	case b.LowerBound && h.LowerBound:
		return "both arms are"
	case b.LowerBound:
		return "the base is"
	}
	return "the head is"
}

func fptr[T any](v T) *T { return &v }
