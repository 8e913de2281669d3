package main

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ceiling-bench/ceiling/publish"
)

func TestJudge(t *testing.T) {
	step := span{first: 30, last: 30, ok: true}
	slope := span{first: 30, last: 34, ok: true}
	for _, tc := range []struct {
		name  string
		dets  []int
		truth span
		want  outcome
	}{
		{"A/A: every detection false", []int{5, 40}, span{}, outcome{detections: 2}},
		{"A/A: none", nil, span{}, outcome{}},
		{"on the step", []int{30}, step, outcome{found: true, detections: 1, matched: 1}},
		{"two after", []int{32}, step, outcome{found: true, detections: 1, matched: 1, err: 2}},
		{"two before", []int{28}, step, outcome{found: true, detections: 1, matched: 1, err: 2}},
		{"three after: missed", []int{33}, step, outcome{detections: 1}},
		{"the nearest counts, once", []int{29, 31, 30}, step, outcome{found: true, detections: 3, matched: 1}},
		{"one near, one far", []int{10, 31}, step, outcome{found: true, detections: 2, matched: 1, err: 1}},
		{"inside a slope", []int{33}, slope, outcome{found: true, detections: 1, matched: 1}},
		{"every step of a slope: found once", []int{30, 31, 32, 33, 34}, slope, outcome{found: true, detections: 5, matched: 1}},
		{"two past a slope", []int{36}, slope, outcome{found: true, detections: 1, matched: 1, err: 2}},
		{"three past a slope: missed", []int{37}, slope, outcome{detections: 1}},
	} {
		if got := judge(tc.dets, tc.truth); got != tc.want {
			t.Errorf("%s: judge(%v) = %+v, want %+v", tc.name, tc.dets, got, tc.want)
		}
	}
}

func TestScenarioLevel(t *testing.T) {
	for _, tc := range []struct {
		sc   scenario
		want []float64 // entries 8 to 12, planted at 9
	}{
		{scenario{"A/A", 0, 1}, []float64{1, 1, 1, 1, 1}},
		{scenario{"step", -0.1, 1}, []float64{1, 0.9, 0.9, 0.9, 0.9}},
		{scenario{"up", 0.1, 1}, []float64{1, 1.1, 1.1, 1.1, 1.1}},
		{scenario{"slope", -0.06, 3}, []float64{1, 0.98, 0.96, 0.94, 0.94}},
	} {
		for i, want := range tc.want {
			if got := tc.sc.level(8+i, 9); math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: level(%d) = %g, want %g", tc.sc.name, 8+i, got, want)
			}
		}
	}
	for _, sc := range scenarios[1:] {
		if sc.level(entries-1, lastAt) != 1+sc.change {
			t.Errorf("%s planted at the last position does not reach its full change by the last entry", sc.name)
		}
	}
}

func TestAggregate(t *testing.T) {
	if got := aggregate([]float64{3, 9, 6}, statMax); got != 9 {
		t.Errorf("max = %g, want 9", got)
	}
	if got := aggregate([]float64{3, 9, 6}, statMean); got != 6 {
		t.Errorf("mean = %g, want 6", got)
	}
}

// handMade is 40 entries of a fixed ±1% zigzag around 1000, floors of
// 3%, then −10% from entry 20 on, and a 6% spike at entry 10.
func handMade() []publish.HistoryEntry {
	h := make([]publish.HistoryEntry, 40)
	for i := range h {
		v := 1000 * (1 + 0.01*float64(1-2*(i%2)))
		if i >= 20 {
			v *= 0.9
		}
		if i == 10 {
			v *= 1.06
		}
		floor := 3.0
		h[i] = publish.HistoryEntry{GitRef: fmt.Sprintf("entry-%02d", i), Generator: "changesim", Regime: "r",
			Batch: 10, ThroughputPerS: v, NoiseFloorPct: &floor}
	}
	return h
}

// Each rule on a history whose answer is known: the detector sees the
// step and not the spike; the floor rule sees the step and the spike
// going and coming back; so does the 5% ratio, and the zigzag is inside
// both thresholds.
func TestRulesOnAKnownHistory(t *testing.T) {
	h := handMade()
	for _, tc := range []struct {
		rule string
		want []int
	}{
		{"changes", []int{20}},
		{"floor *", []int{10, 11, 20}},
		{"5% ratio", []int{10, 11, 20}},
	} {
		i := slices.IndexFunc(rules, func(r rule) bool { return r.name == tc.rule })
		if got := rules[i].detect(h); !slices.Equal(got, tc.want) {
			t.Errorf("%s: detections %v, want %v", tc.rule, got, tc.want)
		}
	}
}

func TestTallyScores(t *testing.T) {
	var tl tally
	tl.add(outcome{found: true, detections: 2, matched: 1, err: 0})
	tl.add(outcome{found: true, detections: 1, matched: 1, err: 2})
	tl.add(outcome{detections: 1})
	tl.add(outcome{})
	if tl.recall() != 0.5 || tl.precision() != 0.5 || tl.falsePerHistory() != 0.5 || tl.medianErr() != 1 {
		t.Errorf("recall %g precision %g false/history %g error %g, want 0.5 0.5 0.5 1",
			tl.recall(), tl.precision(), tl.falsePerHistory(), tl.medianErr())
	}
	var none tally
	none.add(outcome{})
	if !math.IsNaN(none.precision()) || !math.IsNaN(none.medianErr()) || none.falsePerHistory() != 0 {
		t.Errorf("no detection: precision %g error %g false %g, want NaN NaN 0", none.precision(), none.medianErr(), none.falsePerHistory())
	}
}
