package harness

import (
	"math"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// arm builds one arm's repeats at a compared point: clean, not capped,
// p99 1 ms, unless the options say otherwise.
type armOpt func(i int, p *result.Point)

func capped(i int, p *result.Point) { p.Verdict, p.LowerBound = result.VerdictGeneratorCapped, true }

func failedAt(idx ...int) armOpt {
	return func(i int, p *result.Point) {
		for _, j := range idx {
			if i == j {
				p.Status, p.Clean, p.Verdict, p.FailReason = result.StatusFailed, false, result.VerdictFailed, "boom"
				p.ThroughputPerS = 0
			}
		}
	}
}

func erroredAt(idx ...int) armOpt {
	return func(i int, p *result.Point) {
		for _, j := range idx {
			if i == j {
				p.Errors, p.Clean = 3, false
			}
		}
	}
}

func withP99(ns ...int64) armOpt {
	return func(i int, p *result.Point) { p.LatencyNs.P99 = ns[i] }
}

func armPoints(arm string, batch, conns int, thr []float64, opts ...armOpt) []result.Point {
	ps := make([]result.Point, len(thr))
	for i, v := range thr {
		ps[i] = result.Point{
			Role: result.RoleCompare, Arm: arm, Batch: batch, Connections: conns, Rep: i,
			Status: result.StatusOK, Clean: true, ThroughputPerS: v,
			LatencyNs: load.Latency{P99: 1_000_000},
			Verdict:   result.VerdictServerSaturated,
		}
		for _, o := range opts {
			o(i, &ps[i])
		}
	}
	return ps
}

// interleave puts base and head repeats into one curve, numbered in run
// order (ABBA...).
func interleave(base, head []result.Point) []result.Point {
	var curve []result.Point
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

var aaBase = []float64{100_000, 101_000, 99_000, 100_500, 99_500, 100_800, 99_200, 100_300}
var aaHead = []float64{100_200, 99_800, 100_700, 99_300, 100_100, 99_600, 100_900, 99_400}

// drift is a machine whose throughput wanders by ±25% over the run, the
// same for both arms of a block (they ran seconds apart).
var drift = []float64{1.00, 0.80, 1.20, 0.75, 1.25, 0.90, 1.10, 0.85}

func times(xs, fs []float64) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		out[i] = xs[i] * fs[i]
	}
	return out
}

func TestComparePoint(t *testing.T) {
	tests := []struct {
		name       string
		base, head []result.Point
		verdict    string
		atLeast    bool
		p99        string
		nullP      bool
		nullChange bool
		reason     string // a word the reason must hold
	}{
		{name: "A/A", base: armPoints(result.ArmBase, 10, 64, aaBase), head: armPoints(result.ArmHead, 10, 64, aaHead),
			verdict: result.CompareWithinNoise, p99: result.CompareWithinNoise, reason: "could have detected a change of ±"},
		{name: "head 20% slower", base: armPoints(result.ArmBase, 10, 64, aaBase), head: armPoints(result.ArmHead, 10, 64, scale(aaHead, 0.8)),
			verdict: result.CompareSlower, p99: result.CompareWithinNoise, reason: "slower"},
		{name: "head 20% faster", base: armPoints(result.ArmBase, 10, 64, aaBase), head: armPoints(result.ArmHead, 10, 64, scale(aaHead, 1.2)),
			verdict: result.CompareFaster, p99: result.CompareWithinNoise, reason: "faster"},
		{name: "head 10% slower under ±25% drift: the pairs see it",
			base: armPoints(result.ArmBase, 10, 64, times(aaBase, drift)), head: armPoints(result.ArmHead, 10, 64, scale(times(aaHead, drift), 0.9)),
			verdict: result.CompareSlower, p99: result.CompareWithinNoise, reason: "unpaired"},
		{name: "capped head significantly above: at least faster",
			base: armPoints(result.ArmBase, 10, 64, aaBase), head: armPoints(result.ArmHead, 10, 64, scale(aaHead, 1.3), capped),
			verdict: result.CompareFaster, atLeast: true, p99: result.CompareCannotConclude, reason: "at least"},
		{name: "capped head below: cannot conclude",
			base: armPoints(result.ArmBase, 10, 64, aaBase), head: armPoints(result.ArmHead, 10, 64, scale(aaHead, 0.7), capped),
			verdict: result.CompareCannotConclude, p99: result.CompareCannotConclude, reason: "head is generator-capped"},
		{name: "capped head level: cannot conclude",
			base: armPoints(result.ArmBase, 10, 64, aaBase), head: armPoints(result.ArmHead, 10, 64, aaHead, capped),
			verdict: result.CompareCannotConclude, p99: result.CompareCannotConclude},
		{name: "capped base, head significantly below: at least slower",
			base: armPoints(result.ArmBase, 10, 64, aaBase, capped), head: armPoints(result.ArmHead, 10, 64, scale(aaHead, 0.7)),
			verdict: result.CompareSlower, atLeast: true, p99: result.CompareCannotConclude, reason: "at least"},
		{name: "capped base, head above: cannot conclude",
			base: armPoints(result.ArmBase, 10, 64, aaBase, capped), head: armPoints(result.ArmHead, 10, 64, scale(aaHead, 1.3)),
			verdict: result.CompareCannotConclude, p99: result.CompareCannotConclude, reason: "base is generator-capped"},
		{name: "both capped: cannot conclude",
			base: armPoints(result.ArmBase, 10, 64, aaBase, capped), head: armPoints(result.ArmHead, 10, 64, scale(aaHead, 0.5), capped),
			verdict: result.CompareCannotConclude, p99: result.CompareCannotConclude, reason: "both arms"},
		{name: "5 pairs cannot reach 0.05, even at -50%", base: armPoints(result.ArmBase, 10, 64, aaBase[:5]), head: armPoints(result.ArmHead, 10, 64, scale(aaHead[:5], 0.5)),
			verdict: result.CompareCannotConclude, p99: result.CompareCannotConclude, reason: "cannot reach p < 0.05 (the smallest p it can give is 0.0625; 6 are needed)"},
		{name: "no base sample", base: nil, head: armPoints(result.ArmHead, 10, 64, aaHead),
			verdict: result.CompareCannotConclude, p99: result.CompareCannotConclude, nullP: true, nullChange: true, reason: "0 of 8 blocks"},
		{name: "all base repeats failed", base: armPoints(result.ArmBase, 10, 64, aaBase, failedAt(0, 1, 2, 3, 4, 5, 6, 7)), head: armPoints(result.ArmHead, 10, 64, aaHead),
			verdict: result.CompareCannotConclude, p99: result.CompareCannotConclude, nullP: true, nullChange: true, reason: "failed: boom"},
		{name: "failed and errored repeats left out", // 6 pairs left, all 20% down: p = 2/64
			base: armPoints(result.ArmBase, 10, 64, aaBase, failedAt(1), erroredAt(3)), head: armPoints(result.ArmHead, 10, 64, scale(aaHead, 0.8)),
			verdict: result.CompareSlower, p99: result.CompareWithinNoise, reason: "left out: point"},
		{name: "p99 doubled at equal throughput",
			base:    armPoints(result.ArmBase, 10, 64, aaBase, withP99(1_000_000, 1_050_000, 980_000, 1_020_000, 990_000, 1_010_000, 1_030_000, 970_000)),
			head:    armPoints(result.ArmHead, 10, 64, aaHead, withP99(2_000_000, 2_100_000, 1_950_000, 2_050_000, 1_990_000, 2_020_000, 2_060_000, 1_940_000)),
			verdict: result.CompareWithinNoise, p99: result.P99Worse},
		{name: "p99 halved at equal throughput",
			base:    armPoints(result.ArmBase, 10, 64, aaBase, withP99(2_000_000, 2_100_000, 1_950_000, 2_050_000, 1_990_000, 2_020_000, 2_060_000, 1_940_000)),
			head:    armPoints(result.ArmHead, 10, 64, aaHead, withP99(1_000_000, 1_050_000, 980_000, 1_020_000, 990_000, 1_010_000, 1_030_000, 970_000)),
			verdict: result.CompareWithinNoise, p99: result.P99Better},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			curve := interleave(tc.base, tc.head)
			cp := result.ComparePoint(10, 64, curve, 0.05, result.StopFixed, 8)
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
			if cp.Verdict == result.CompareWithinNoise && cp.MDCPct == nil {
				t.Errorf("within_noise without a minimum detectable change")
			}
			// Every clean repeat is a sample, in run order, and only those.
			for _, side := range []struct {
				arm string
				got result.ArmStats
			}{{result.ArmBase, cp.Base}, {result.ArmHead, cp.Head}} {
				var want []int
				failed := 0
				for _, p := range curve {
					switch {
					case p.Arm != side.arm:
					case p.Clean:
						want = append(want, p.Index)
					default:
						failed++
					}
				}
				if side.got.N != len(want) || side.got.Failed != failed || !equalInts(side.got.Points, want) ||
					len(side.got.SamplesPerS) != len(want) || len(side.got.P99SamplesNs) != len(want) {
					t.Errorf("%s: n %d failed %d points %v, want n %d failed %d points %v",
						side.arm, side.got.N, side.got.Failed, side.got.Points, len(want), failed, want)
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

// The drift case's precondition: pooled, the arms cannot tell a 10% fall
// under ±25% drift from noise; paired, they can.
func TestPairedSeesThroughDriftUnpairedDoesNot(t *testing.T) {
	curve := interleave(armPoints(result.ArmBase, 10, 64, times(aaBase, drift)), armPoints(result.ArmHead, 10, 64, scale(times(aaHead, drift), 0.9)))
	cp := result.ComparePoint(10, 64, curve, 0.05, result.StopFixed, 8)
	if cp.Unpaired.PValue == nil || *cp.Unpaired.PValue < 0.05 {
		t.Errorf("unpaired p %v: want no significance under this drift", deref(cp.Unpaired.PValue))
	}
	if cp.PValue == nil || *cp.PValue >= 0.05 || cp.Verdict != result.CompareSlower {
		t.Errorf("paired p %v, %s: want slower", deref(cp.PValue), cp.Verdict)
	}
	if cp.Unpaired.MDCPct == nil || cp.MDCPct == nil || *cp.MDCPct >= *cp.Unpaired.MDCPct {
		t.Errorf("MDC paired %v, unpaired %v: want the pairs to detect less", deref(cp.MDCPct), deref(cp.Unpaired.MDCPct))
	}
}

// contendedAt marks repeats as contended by a named process.
func contendedAt(idx ...int) armOpt {
	return func(i int, p *result.Point) {
		for _, j := range idx {
			if i == j {
				p.Clean, p.Contended = false, true
				p.ServerCPU.Attribution = &result.Attribution{Foreign: 0.2, Tasks: []result.ForeignTask{{Comm: "stress", Pid: 4242, Fraction: 0.2}}}
			}
		}
	}
}

// Lost evidence never reads as fine: a -85% fall whose head repeats were
// mostly contended cannot be concluded, names the hog, and says what the
// left-out repeats would have given.
func TestComparePointLostEvidence(t *testing.T) {
	base := armPoints(result.ArmBase, 10, 32, aaBase)
	head := armPoints(result.ArmHead, 10, 32, scale(aaHead, 0.15), contendedAt(0, 2, 4))
	cp := result.ComparePoint(10, 32, interleave(base, head), 0.05, result.StopFixed, 8)
	if cp.Verdict != result.CompareCannotConclude || cp.NPairs != 5 {
		t.Fatalf("%s with %d pairs: %s", cp.Verdict, cp.NPairs, cp.Reason)
	}
	for _, want := range []string{"5 of 8 blocks", "stress (pid 4242) 20%"} {
		if !strings.Contains(cp.Reason, want) {
			t.Errorf("reason %q lacks %q", cp.Reason, want)
		}
	}
	if !strings.Contains(cp.Sensitivity, "counting the 3 repeats left out, the verdict would be slower") {
		t.Errorf("sensitivity %q", cp.Sensitivity)
	}
	if cp.Reruns != 3 || cp.Blocks != 8 {
		t.Errorf("blocks %d reruns %d", cp.Blocks, cp.Reruns)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func TestComparePointFigures(t *testing.T) {
	base := armPoints(result.ArmBase, 10, 64, aaBase)
	head := armPoints(result.ArmHead, 10, 64, scale(aaBase, 0.8))
	cp := result.ComparePoint(10, 64, interleave(base, head), 0.05, result.StopFixed, 8)
	// 8 pairs all down: the exact two-sided signed-rank p is 2/2^8.
	if cp.PValue == nil || math.Abs(*cp.PValue-2.0/256) > 1e-9 {
		t.Errorf("p = %v, want 2/256", deref(cp.PValue))
	}
	if cp.ChangePct == nil || math.Abs(*cp.ChangePct-(-20)) > 1e-9 {
		t.Errorf("change = %v%%, want -20%%", deref(cp.ChangePct))
	}
	// Every head sample is exactly 0.8 of its base: the interval is -20%.
	if cp.CILowPct == nil || cp.CIHighPct == nil || math.Abs(*cp.CILowPct+20) > 1e-9 || math.Abs(*cp.CIHighPct+20) > 1e-9 {
		t.Errorf("CI %v .. %v, want -20%% .. -20%%", deref(cp.CILowPct), deref(cp.CIHighPct))
	}
	if cp.Unpaired.PValue == nil || math.Abs(*cp.Unpaired.PValue-2.0/12870) > 1e-9 {
		t.Errorf("unpaired p = %v, want 2/C(16,8)", deref(cp.Unpaired.PValue))
	}
	if cp.Base.MedianPerS != 100_150 || cp.Head.MedianPerS != 80_120 {
		t.Errorf("medians %v %v", cp.Base.MedianPerS, cp.Head.MedianPerS)
	}
	if cp.NPairs != 8 || cp.Test != result.ComparePrimary || cp.MDCPct == nil {
		t.Errorf("pairs %d test %q mdc %v", cp.NPairs, cp.Test, cp.MDCPct)
	}
}

func TestDecideComparison(t *testing.T) {
	if c := result.DecideComparison([]result.Point{{Role: result.RoleSweep, Batch: 10}}, result.Config{HeadlineBatch: 10, CompareReps: 5, Alpha: 0.05}); c != nil {
		t.Fatalf("single-arm curve gave a comparison: %+v", c)
	}

	var curve []result.Point
	// First-pass points (role sweep) are not samples.
	curve = append(curve, armPoints(result.ArmBase, 10, 64, []float64{1})...)
	curve = append(curve, armPoints(result.ArmHead, 10, 64, []float64{1_000_000})...)
	for i := range curve {
		curve[i].Role = result.RoleSweep
	}
	// Batch 100 listed first, batch 10 (the headline) slower.
	curve = append(curve, interleave(armPoints(result.ArmBase, 100, 32, aaBase), armPoints(result.ArmHead, 100, 32, aaHead))...)
	curve = append(curve, interleave(armPoints(result.ArmBase, 10, 64, aaBase), armPoints(result.ArmHead, 10, 64, scale(aaHead, 0.7)))...)
	for i := range curve {
		curve[i].Index = i + 1
	}
	c := result.DecideComparison(curve, result.Config{HeadlineBatch: 10, CompareReps: 5, Alpha: 0.05})
	if c == nil {
		t.Fatal("no comparison")
	}
	if c.Alpha != 0.05 || c.Confidence != 0.95 || c.Reps != 5 || c.Gate == "" || c.Method == "" {
		t.Errorf("header %+v", *c)
	}
	if len(c.Points) != 2 || c.Points[0].Batch != 10 || c.Points[1].Batch != 100 {
		t.Fatalf("points %+v, want batches 10 and 100 in that order", c.Points)
	}
	if c.Headline.Batch != 10 || c.Headline.Connections != 64 || c.Headline.Verdict != result.CompareSlower || c.Headline.NBase != 8 {
		t.Errorf("headline %+v", c.Headline)
	}
	if c.Points[1].Verdict != result.CompareWithinNoise {
		t.Errorf("batch 100: %s, want within_noise", c.Points[1].Verdict)
	}
	for _, i := range c.Headline.Base.Points {
		if curve[i-1].Role != result.RoleCompare {
			t.Errorf("sample from point %d, role %s", i, curve[i-1].Role)
		}
	}

	// No compared point at the headline batch.
	c = result.DecideComparison(curve, result.Config{HeadlineBatch: 512, CompareReps: 5, Alpha: 0.05})
	if c.Headline.Batch != 512 || c.Headline.Verdict != result.CompareCannotConclude || !strings.Contains(c.Headline.Reason, "headline batch 512") {
		t.Errorf("missing headline: %+v", c.Headline)
	}
}

// In a two-arm sweep the ceilings and the headline are the head arm's
// alone, however high the base went, and Summarize derives the comparison.
func TestSummarizeTwoArm(t *testing.T) {
	r := &result.Result{Config: result.Config{BatchLadder: knob.Ladder{10}, HeadlineBatch: 10, ConnsLadders: map[string][]int{"10": {32, 64}}, CompareReps: 5, Alpha: 0.05}}
	first := append(armPoints(result.ArmBase, 10, 32, []float64{900_000}), armPoints(result.ArmHead, 10, 32, []float64{100_000})...)
	first = append(first, armPoints(result.ArmHead, 10, 64, []float64{120_000})...)
	for i := range first {
		first[i].Role = result.RoleSweep
	}
	r.Curve = append(first, interleave(armPoints(result.ArmBase, 10, 64, aaBase), armPoints(result.ArmHead, 10, 64, scale(aaHead, 1.2)))...)
	for i := range r.Curve {
		r.Curve[i].Index = i + 1
	}
	r.Summarize()
	if !r.Headline.Clean || r.Headline.ThroughputPerS != 120_000 || r.Headline.Connections != 64 {
		t.Errorf("headline %+v, want the head's 120000 at 64 connections", r.Headline)
	}
	if r.Comparison == nil || r.Comparison.Headline.Verdict != result.CompareFaster || r.Comparison.Reps != 5 {
		t.Fatalf("comparison %+v, want the headline faster", r.Comparison)
	}
	again := *r
	again.Summarize()
	if again.Comparison.Headline.Verdict != result.CompareFaster || len(again.Comparison.Points) != 1 {
		t.Errorf("Summarize is not idempotent: %+v", again.Comparison)
	}
}
