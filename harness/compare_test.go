package harness

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
)

// arm builds one arm's repeats at a compared point: clean, not capped,
// p99 1 ms, unless the options say otherwise.
type armOpt func(i int, p *Point)

func capped(i int, p *Point) { p.Verdict, p.LowerBound = VerdictGeneratorCapped, true }

func failedAt(idx ...int) armOpt {
	return func(i int, p *Point) {
		for _, j := range idx {
			if i == j {
				p.Status, p.Clean, p.Verdict, p.FailReason = StatusFailed, false, VerdictFailed, "boom"
				p.ThroughputPerS = 0
			}
		}
	}
}

func erroredAt(idx ...int) armOpt {
	return func(i int, p *Point) {
		for _, j := range idx {
			if i == j {
				p.Errors, p.Clean = 3, false
			}
		}
	}
}

func withP99(ns ...int64) armOpt {
	return func(i int, p *Point) { p.LatencyNs.P99 = ns[i] }
}

func armPoints(arm string, batch, conns int, thr []float64, opts ...armOpt) []Point {
	ps := make([]Point, len(thr))
	for i, v := range thr {
		ps[i] = Point{
			Role: RoleCompare, Arm: arm, Batch: batch, Connections: conns, Rep: i,
			Status: StatusOK, Clean: true, ThroughputPerS: v,
			LatencyNs: load.Latency{P99: 1_000_000},
			Verdict:   VerdictServerSaturated,
		}
		for _, o := range opts {
			o(i, &ps[i])
		}
	}
	return ps
}

// interleave puts base and head repeats into one curve, numbered in run
// order (ABBA...).
func interleave(base, head []Point) []Point {
	var curve []Point
	for i := 0; i < max(len(base), len(head)); i++ {
		first, second := base, head
		if i%2 == 1 {
			first, second = head, base
		}
		if i < len(first) {
			curve = append(curve, first[i])
		}
		if i < len(second) {
			curve = append(curve, second[i])
		}
	}
	for i := range curve {
		curve[i].Index = i + 1
	}
	return curve
}

func scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

var aaBase = []float64{100_000, 101_000, 99_000, 100_500, 99_500}
var aaHead = []float64{100_200, 99_800, 100_700, 99_300, 100_100}

func TestComparePoint(t *testing.T) {
	// 30 + 30 samples, uniform over ±20% of the median: spread (MAD) 10%,
	// with the head 8% up: significant at 0.05, yet not beyond the spread.
	rng := rand.New(rand.NewPCG(1, 2))
	var wideBase, wideHead []float64
	for range 30 {
		wideBase = append(wideBase, 80_000+rng.Float64()*40_000)
		wideHead = append(wideHead, 88_000+rng.Float64()*40_000)
	}

	tests := []struct {
		name       string
		base, head []Point
		verdict    string
		atLeast    bool
		p99        string
		nullP      bool
		nullChange bool
		reason     string // a word the reason must hold
	}{
		{name: "A/A", base: armPoints(ArmBase, 10, 64, aaBase), head: armPoints(ArmHead, 10, 64, aaHead),
			verdict: CompareWithinNoise, p99: CompareWithinNoise, reason: "p ≥"},
		{name: "head 20% slower", base: armPoints(ArmBase, 10, 64, aaBase), head: armPoints(ArmHead, 10, 64, scale(aaHead, 0.8)),
			verdict: CompareSlower, p99: CompareWithinNoise, reason: "slower"},
		{name: "head 20% faster", base: armPoints(ArmBase, 10, 64, aaBase), head: armPoints(ArmHead, 10, 64, scale(aaHead, 1.2)),
			verdict: CompareFaster, p99: CompareWithinNoise, reason: "faster"},
		{name: "significant but within the spread", base: armPoints(ArmBase, 10, 64, wideBase), head: armPoints(ArmHead, 10, 64, wideHead),
			verdict: CompareWithinNoise, p99: CompareWithinNoise, reason: "spread"},
		{name: "capped head significantly above: at least faster",
			base: armPoints(ArmBase, 10, 64, aaBase), head: armPoints(ArmHead, 10, 64, scale(aaHead, 1.3), capped),
			verdict: CompareFaster, atLeast: true, p99: CompareCannotConclude, reason: "at least"},
		{name: "capped head below: cannot conclude",
			base: armPoints(ArmBase, 10, 64, aaBase), head: armPoints(ArmHead, 10, 64, scale(aaHead, 0.7), capped),
			verdict: CompareCannotConclude, p99: CompareCannotConclude, reason: "head is generator-capped"},
		{name: "capped head level: cannot conclude",
			base: armPoints(ArmBase, 10, 64, aaBase), head: armPoints(ArmHead, 10, 64, aaHead, capped),
			verdict: CompareCannotConclude, p99: CompareCannotConclude},
		{name: "capped base, head significantly below: at least slower",
			base: armPoints(ArmBase, 10, 64, aaBase, capped), head: armPoints(ArmHead, 10, 64, scale(aaHead, 0.7)),
			verdict: CompareSlower, atLeast: true, p99: CompareCannotConclude, reason: "at least"},
		{name: "capped base, head above: cannot conclude",
			base: armPoints(ArmBase, 10, 64, aaBase, capped), head: armPoints(ArmHead, 10, 64, scale(aaHead, 1.3)),
			verdict: CompareCannotConclude, p99: CompareCannotConclude, reason: "base is generator-capped"},
		{name: "both capped: cannot conclude",
			base: armPoints(ArmBase, 10, 64, aaBase, capped), head: armPoints(ArmHead, 10, 64, scale(aaHead, 0.5), capped),
			verdict: CompareCannotConclude, p99: CompareCannotConclude, reason: "both arms"},
		{name: "one clean base sample", base: armPoints(ArmBase, 10, 64, aaBase[:1]), head: armPoints(ArmHead, 10, 64, scale(aaHead, 0.5)),
			verdict: CompareCannotConclude, p99: CompareCannotConclude, nullP: true, reason: "too few"},
		{name: "no base sample", base: nil, head: armPoints(ArmHead, 10, 64, aaHead),
			verdict: CompareCannotConclude, p99: CompareCannotConclude, nullP: true, nullChange: true, reason: "n = 0 + 5"},
		{name: "all base repeats failed", base: armPoints(ArmBase, 10, 64, aaBase, failedAt(0, 1, 2, 3, 4)), head: armPoints(ArmHead, 10, 64, aaHead),
			verdict: CompareCannotConclude, p99: CompareCannotConclude, nullP: true, nullChange: true, reason: "5 base repeats failed"},
		{name: "failed and errored repeats left out", // 3 + 5 clean: a 20% drop is still significant (p = 2/56)
			base: armPoints(ArmBase, 10, 64, aaBase, failedAt(1), erroredAt(3)), head: armPoints(ArmHead, 10, 64, scale(aaHead, 0.8)),
			verdict: CompareSlower, p99: CompareWithinNoise, reason: "2 base repeats failed"},
		{name: "p99 doubled at equal throughput",
			base:    armPoints(ArmBase, 10, 64, aaBase, withP99(1_000_000, 1_050_000, 980_000, 1_020_000, 990_000)),
			head:    armPoints(ArmHead, 10, 64, aaHead, withP99(2_000_000, 2_100_000, 1_950_000, 2_050_000, 1_990_000)),
			verdict: CompareWithinNoise, p99: P99Worse},
		{name: "p99 halved at equal throughput",
			base:    armPoints(ArmBase, 10, 64, aaBase, withP99(2_000_000, 2_100_000, 1_950_000, 2_050_000, 1_990_000)),
			head:    armPoints(ArmHead, 10, 64, aaHead, withP99(1_000_000, 1_050_000, 980_000, 1_020_000, 990_000)),
			verdict: CompareWithinNoise, p99: P99Better},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			curve := interleave(tc.base, tc.head)
			var base, head []Point
			for _, p := range curve {
				if p.Arm == ArmBase {
					base = append(base, p)
				} else {
					head = append(head, p)
				}
			}
			cp := ComparePoint(10, 64, base, head, 0.05)
			if cp.Verdict != tc.verdict || cp.AtLeast != tc.atLeast || cp.P99Verdict != tc.p99 {
				t.Fatalf("verdict %s at_least %v p99 %s, want %s %v %s; reason: %s",
					cp.Verdict, cp.AtLeast, cp.P99Verdict, tc.verdict, tc.atLeast, tc.p99, cp.Reason)
			}
			if !strings.Contains(cp.Reason, tc.reason) {
				t.Errorf("reason %q does not say %q", cp.Reason, tc.reason)
			}
			if (cp.PValue == nil) != tc.nullP {
				t.Errorf("p_value %v, want null %v", cp.PValue, tc.nullP)
			}
			if (cp.ChangePct == nil) != tc.nullChange {
				t.Errorf("change_pct %v, want null %v", cp.ChangePct, tc.nullChange)
			}
			// Every clean repeat is a sample, in run order, and only those.
			for _, side := range []struct {
				name string
				in   []Point
				got  ArmStats
			}{{"base", base, cp.Base}, {"head", head, cp.Head}} {
				var want []int
				failed := 0
				for _, p := range side.in {
					if p.Clean {
						want = append(want, p.Index)
					} else {
						failed++
					}
				}
				if side.got.N != len(want) || side.got.Failed != failed || !equalInts(side.got.Points, want) ||
					len(side.got.SamplesPerS) != len(want) || len(side.got.P99SamplesNs) != len(want) {
					t.Errorf("%s: n %d failed %d points %v, want n %d failed %d points %v",
						side.name, side.got.N, side.got.Failed, side.got.Points, len(want), failed, want)
				}
			}
			if cp.NBase != cp.Base.N || cp.NHead != cp.Head.N {
				t.Errorf("n_base %d n_head %d, arms say %d %d", cp.NBase, cp.NHead, cp.Base.N, cp.Head.N)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The precondition of the "within the spread" case: the test must be
// significant there, or the case tests nothing.
func TestComparePointWithinSpreadIsSignificant(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b, h []float64
	for range 30 {
		b = append(b, 80_000+rng.Float64()*40_000)
		h = append(h, 88_000+rng.Float64()*40_000)
	}
	cp := ComparePoint(10, 64, armPoints(ArmBase, 10, 64, b), armPoints(ArmHead, 10, 64, h), 0.05)
	if cp.PValue == nil || *cp.PValue >= 0.05 || math.Abs(*cp.ChangePct) > cp.SpreadPct {
		t.Fatalf("p %v change %v spread %v: want p < 0.05 and |change| <= spread", deref(cp.PValue), deref(cp.ChangePct), cp.SpreadPct)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func TestComparePointFigures(t *testing.T) {
	base := armPoints(ArmBase, 10, 64, aaBase)
	head := armPoints(ArmHead, 10, 64, scale(aaBase, 0.8))
	cp := ComparePoint(10, 64, base, head, 0.05)
	// Fully separated 5 + 5: the exact two-sided p is 2/C(10,5) = 2/252.
	if cp.PValue == nil || math.Abs(*cp.PValue-2.0/252) > 1e-9 {
		t.Errorf("p = %v, want 2/252", deref(cp.PValue))
	}
	if cp.ChangePct == nil || math.Abs(*cp.ChangePct-(-20)) > 1e-9 {
		t.Errorf("change = %v%%, want -20%%", deref(cp.ChangePct))
	}
	// Every head sample is exactly 0.8 of a base sample, so the ratio's
	// interval holds -20% and lies below zero.
	if cp.CILowPct == nil || cp.CIHighPct == nil || *cp.CILowPct > -20 || *cp.CIHighPct < -20 || *cp.CIHighPct >= 0 {
		t.Errorf("CI %v .. %v, want around -20%% and below 0", deref(cp.CILowPct), deref(cp.CIHighPct))
	}
	if cp.Base.MedianPerS != 100_000 || cp.Head.MedianPerS != 80_000 {
		t.Errorf("medians %v %v, want 100000 80000", cp.Base.MedianPerS, cp.Head.MedianPerS)
	}
	// 5 samples are too few for a 95% interval of the median: null.
	if cp.Base.CILowPerS != nil || cp.Base.CIHighPerS != nil {
		t.Errorf("base median CI %v .. %v with n = 5, want null", cp.Base.CILowPerS, cp.Base.CIHighPerS)
	}
	// The spread is the larger arm's MAD/median: base MAD 500 of 100000.
	if math.Abs(cp.SpreadPct-0.5) > 1e-9 {
		t.Errorf("spread %v%%, want 0.5%%", cp.SpreadPct)
	}
}

func TestDecideComparison(t *testing.T) {
	if c := DecideComparison([]Point{{Role: RoleSweep, Batch: 10}}, 10, 5, 0.05); c != nil {
		t.Fatalf("single-arm curve gave a comparison: %+v", c)
	}

	var curve []Point
	// First-pass points (role sweep) are not samples.
	curve = append(curve, armPoints(ArmBase, 10, 64, []float64{1})...)
	curve = append(curve, armPoints(ArmHead, 10, 64, []float64{1_000_000})...)
	for i := range curve {
		curve[i].Role = RoleSweep
	}
	// Batch 100 listed first, batch 10 (the headline) slower.
	curve = append(curve, interleave(armPoints(ArmBase, 100, 32, aaBase), armPoints(ArmHead, 100, 32, aaHead))...)
	curve = append(curve, interleave(armPoints(ArmBase, 10, 64, aaBase), armPoints(ArmHead, 10, 64, scale(aaHead, 0.7)))...)
	for i := range curve {
		curve[i].Index = i + 1
	}
	c := DecideComparison(curve, 10, 5, 0.05)
	if c == nil {
		t.Fatal("no comparison")
	}
	if c.Alpha != 0.05 || c.Confidence != 0.95 || c.Reps != 5 || c.Gate == "" || c.Method == "" {
		t.Errorf("header %+v", *c)
	}
	if len(c.Points) != 2 || c.Points[0].Batch != 10 || c.Points[1].Batch != 100 {
		t.Fatalf("points %+v, want batches 10 and 100 in that order", c.Points)
	}
	if c.Headline.Batch != 10 || c.Headline.Connections != 64 || c.Headline.Verdict != CompareSlower || c.Headline.NBase != 5 {
		t.Errorf("headline %+v", c.Headline)
	}
	if c.Points[1].Verdict != CompareWithinNoise {
		t.Errorf("batch 100: %s, want within_noise", c.Points[1].Verdict)
	}
	for _, i := range c.Headline.Base.Points {
		if curve[i-1].Role != RoleCompare {
			t.Errorf("sample from point %d, role %s", i, curve[i-1].Role)
		}
	}

	// No compared point at the headline batch.
	c = DecideComparison(curve, 512, 5, 0.05)
	if c.Headline.Batch != 512 || c.Headline.Verdict != CompareCannotConclude || !strings.Contains(c.Headline.Reason, "headline batch 512") {
		t.Errorf("missing headline: %+v", c.Headline)
	}
}

// In a two-arm sweep the ceilings and the headline are the head arm's
// alone, however high the base went, and Summarize derives the comparison.
func TestSummarizeTwoArm(t *testing.T) {
	r := &Result{Config: Config{BatchLadder: Ladder{10}, HeadlineBatch: 10, ConnsLadders: map[string][]int{"10": {32, 64}}, CompareReps: 5, Alpha: 0.05}}
	first := append(armPoints(ArmBase, 10, 32, []float64{900_000}), armPoints(ArmHead, 10, 32, []float64{100_000})...)
	first = append(first, armPoints(ArmHead, 10, 64, []float64{120_000})...)
	for i := range first {
		first[i].Role = RoleSweep
	}
	r.Curve = append(first, interleave(armPoints(ArmBase, 10, 64, aaBase), armPoints(ArmHead, 10, 64, scale(aaHead, 1.2)))...)
	for i := range r.Curve {
		r.Curve[i].Index = i + 1
	}
	r.Summarize()
	if !r.Headline.Clean || r.Headline.ThroughputPerS != 120_000 || r.Headline.Connections != 64 {
		t.Errorf("headline %+v, want the head's 120000 at 64 connections", r.Headline)
	}
	if r.Comparison == nil || r.Comparison.Headline.Verdict != CompareFaster || r.Comparison.Reps != 5 {
		t.Fatalf("comparison %+v, want the headline faster", r.Comparison)
	}
	again := *r
	again.Summarize()
	if again.Comparison.Headline.Verdict != CompareFaster || len(again.Comparison.Points) != 1 {
		t.Errorf("Summarize is not idempotent: %+v", again.Comparison)
	}
}
