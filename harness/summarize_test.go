package harness

import (
	"math"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

func TestNoiseFloorPct(t *testing.T) {
	tests := []struct {
		peak, repeat float64
		want         float64 // NaN: nil
	}{
		{100, 100, 0},
		{100, 90, 10},
		{100, 112.5, 12.5},
		{200000, 150000, 25},
		{0, 10, math.NaN()},
		{10, 0, math.NaN()},
	}
	for _, tt := range tests {
		got := result.NoiseFloorPct(tt.peak, tt.repeat)
		if math.IsNaN(tt.want) {
			if got != nil {
				t.Errorf("NoiseFloorPct(%v, %v) = %v, want nil", tt.peak, tt.repeat, *got)
			}
			continue
		}
		if got == nil || math.Abs(*got-tt.want) > 1e-9 {
			t.Errorf("NoiseFloorPct(%v, %v) = %v, want %v", tt.peak, tt.repeat, got, tt.want)
		}
	}
}

func TestRegime(t *testing.T) {
	if got, want := result.Regime("echo", 10, 256, 3, 1), "echo, batch 10, 256 B, 3 server cores, 1 generator core"; got != want {
		t.Errorf("Regime = %q, want %q", got, want)
	}
}

// pt builds a clean ok point.
func pt(role string, batch, conns int, thr float64, verdict string) result.Point {
	return result.Point{Role: role, Batch: batch, Connections: conns, Status: result.StatusOK, Clean: true,
		ThroughputPerS: thr, Verdict: verdict, LowerBound: result.IsLowerBound(verdict), LatencyNs: load.Latency{P99: int64(thr)}}
}

func TestSummarize(t *testing.T) {
	r := &result.Result{Config: result.Config{
		BatchLadder:   []int{10, 100, 4096},
		ConnsLadders:  map[string][]int{"10": {32, 64, 128}, "100": {16, 32}, "4096": {4}},
		HeadlineBatch: 10,
	}}
	dirty := pt(result.RoleSweep, 10, 128, 999999, result.VerdictNeither)
	dirty.Clean, dirty.Errors = false, 3
	failed := result.Point{Role: result.RoleSweep, Batch: 4096, Connections: 4, Status: result.StatusFailed, Verdict: result.VerdictFailed}
	r.Curve = []result.Point{
		pt(result.RoleSweep, 10, 32, 1000, result.VerdictNeither),
		pt(result.RoleSweep, 100, 16, 500, result.VerdictNeither),
		failed,
		pt(result.RoleSweep, 10, 64, 1500, result.VerdictServerSaturated),
		pt(result.RoleSweep, 100, 32, 800, result.VerdictGeneratorCapped),
		dirty, // highest, but has errors: not a ceiling
		pt(result.RoleAARepeat, 10, 64, 1400, result.VerdictServerSaturated),
	}
	r.Summarize()
	r.Summarize() // idempotent

	want := []result.BatchCeiling{
		{Batch: 10, Found: true, ThroughputPerS: 1500, Connections: 64, LatencyNs: load.Latency{P99: 1500}, Verdict: result.VerdictServerSaturated},
		{Batch: 100, Found: true, ThroughputPerS: 800, Connections: 32, LatencyNs: load.Latency{P99: 800}, Verdict: result.VerdictGeneratorCapped, LowerBound: true, AtLadderTop: true},
		{Batch: 4096},
	}
	if diff := cmp.Diff(want, r.Ceilings); diff != "" {
		t.Errorf("Ceilings (-want +got):\n%s", diff)
	}
	wantHead := result.Headline{Clean: true, ThroughputPerS: 1500, Batch: 10, Connections: 64, LatencyNs: load.Latency{P99: 1500}, Verdict: result.VerdictServerSaturated}
	if diff := cmp.Diff(wantHead, r.Headline); diff != "" {
		t.Errorf("Headline (-want +got):\n%s", diff)
	}
	if r.NoiseFloorPct == nil || math.Abs(*r.NoiseFloorPct-100.0/15) > 1e-9 {
		t.Errorf("NoiseFloorPct = %v, want 6.67", r.NoiseFloorPct)
	}
	wantWarn := []string{
		"batch 100 peaked at the top of its connection ladder (32 connections): widen CONNS_LADDER_100, the knee may lie beyond it",
		"batch 4096 has no clean point (every point failed, had errors, was saturated or was contended)",
	}
	if diff := cmp.Diff(wantWarn, r.Warnings); diff != "" {
		t.Errorf("Warnings (-want +got):\n%s", diff)
	}
}

func TestSummarizeNoCleanHeadline(t *testing.T) {
	r := &result.Result{Config: result.Config{BatchLadder: []int{10}, ConnsLadders: map[string][]int{"10": {32}}, HeadlineBatch: 10}}
	sat := pt(result.RoleSweep, 10, 32, 1000, result.VerdictServerSaturated)
	sat.Clean, sat.Saturated = false, true
	r.Curve = []result.Point{sat}
	r.Summarize()
	if r.Headline.Clean || r.Headline.Batch != 10 || r.NoiseFloorPct != nil {
		t.Errorf("headline %+v, noise %v: want not clean, batch 10, no noise floor", r.Headline, r.NoiseFloorPct)
	}
}

func TestSummarizeUncleanRepeatIsNoNoiseFloor(t *testing.T) {
	r := &result.Result{Config: result.Config{BatchLadder: []int{10}, ConnsLadders: map[string][]int{"10": {32, 64}}, HeadlineBatch: 10}}
	rep := pt(result.RoleAARepeat, 10, 32, 990, result.VerdictServerSaturated)
	rep.Clean, rep.Errors = false, 4
	r.Curve = []result.Point{pt(result.RoleSweep, 10, 32, 1000, result.VerdictServerSaturated), rep}
	r.Summarize()
	if r.NoiseFloorPct != nil {
		t.Errorf("NoiseFloorPct = %v from a repeat with errors, want nil", *r.NoiseFloorPct)
	}
	want := []string{"the A-A repeat of the headline failed (it had 4 errors): no noise floor"}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("Warnings (-want +got):\n%s", diff)
	}
}

func TestHeadroomProbeConclusion(t *testing.T) {
	base := func(probe result.Point, noise float64) *result.Result {
		r := &result.Result{Config: result.Config{BatchLadder: []int{10}, ConnsLadders: map[string][]int{"10": {32, 64}}, HeadlineBatch: 10, HeadroomProbeFraction: 0.5}}
		r.Curve = []result.Point{pt(result.RoleSweep, 10, 32, 1000, result.VerdictServerSaturated), pt(result.RoleAARepeat, 10, 32, 1000*(1-noise/100), result.VerdictServerSaturated), probe}
		r.Curve[2].Index = 3
		r.Summarize()
		return r
	}
	tests := []struct {
		name     string
		probe    result.Point
		noise    float64
		headroom bool
		change   float64
		tol      float64
	}{
		{"held within the 5% floor", pt(result.RoleHeadroom, 10, 32, 970, result.VerdictNeither), 1, true, -3, 5},
		{"fell beyond the noise", pt(result.RoleHeadroom, 10, 32, 600, result.VerdictGeneratorCapped), 8, false, -40, 8},
		{"fell within a large noise floor", pt(result.RoleHeadroom, 10, 32, 850, result.VerdictNeither), 20, true, -15, 20},
		{"rose", pt(result.RoleHeadroom, 10, 32, 1100, result.VerdictNeither), 1, true, 10, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := base(tt.probe, tt.noise).HeadroomProbe
			if h == nil {
				t.Fatal("no headroom probe summary")
			}
			if h.GeneratorHadHeadroom != tt.headroom || math.Abs(h.ChangePct-tt.change) > 1e-9 || math.Abs(h.TolerancePct-tt.tol) > 1e-9 {
				t.Errorf("headroom %v change %v tol %v (%s); want %v %v %v", h.GeneratorHadHeadroom, h.ChangePct, h.TolerancePct, h.Conclusion, tt.headroom, tt.change, tt.tol)
			}
			if h.Index != 3 || h.QuotaFraction != 0.5 {
				t.Errorf("index %d fraction %v", h.Index, h.QuotaFraction)
			}
		})
	}
	dirty := pt(result.RoleHeadroom, 10, 32, 400, result.VerdictNeither)
	dirty.Clean, dirty.Errors = false, 7
	if h := base(dirty, 1).HeadroomProbe; h == nil || h.GeneratorHadHeadroom || h.ChangePct != 0 || !strings.Contains(h.Conclusion, "not clean") {
		t.Errorf("probe with errors summarized as %+v", h)
	}
	failed := result.Point{Role: result.RoleHeadroom, Status: result.StatusFailed, FailReason: "cgroup v2: permission denied"}
	if h := base(failed, 1).HeadroomProbe; h == nil || h.GeneratorHadHeadroom || !strings.Contains(h.Conclusion, "permission denied") {
		t.Errorf("failed probe summarized as %+v", h)
	}
}
