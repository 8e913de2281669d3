package main

import (
	"math"
	"slices"

	"github.com/ceiling-bench/ceiling/publish"
)

// slack is how far, in entries, a detection may lie outside the true
// change and still be it: the issue's ±2.
const slack = 2

// ratioPct is github-action-benchmark's kind of rule: a fixed ratio
// against the previous entry, whatever the noise.
const ratioPct = 5.0

// rule is one way of flagging changes along a history: the indexes of
// the entries it flags as the first after a change.
type rule struct {
	name   string
	detect func(h []publish.HistoryEntry) []int
}

// rules are scored on every history, each through the product's own
// code where it has one, so the validation runs what users run.
var rules = []rule{
	{"changes", detectChanges},
	{"floor *", detectFloorMarks},
	{"5% ratio", detectRatio},
}

// detectChanges is `ceiling history --changes`: publish.Changes, which
// runs changepoint.DetectFloored with changepoint.Defaults and the median A-A
// floor, and each side's, as the least change; a change point's entry is
// its After.
func detectChanges(h []publish.HistoryEntry) []int {
	at := make(map[string]int, len(h))
	for i, e := range h {
		at[e.GitRef] = i
	}
	var out []int
	for _, c := range publish.Changes(h) {
		out = append(out, at[c.After.GitRef])
	}
	slices.Sort(out)
	return out
}

// detectFloorMarks is the history table's `*`: an entry that moved
// against the previous one beyond both entries' A-A floors.
func detectFloorMarks(h []publish.HistoryEntry) []int {
	var out []int
	for i, c := range publish.RowChanges(publish.Trend(h)) {
		if c.Moved {
			out = append(out, i)
		}
	}
	return out
}

// detectRatio flags an entry that differs from the previous one by more
// than ratioPct, either way (the other two rules are two-sided too).
func detectRatio(h []publish.HistoryEntry) []int {
	var out []int
	for i := 1; i < len(h); i++ {
		if math.Abs(h[i].ThroughputPerS/h[i-1].ThroughputPerS-1)*100 > ratioPct {
			out = append(out, i)
		}
	}
	return out
}

// outcome is one rule on one history: whether it found the true change,
// how many of its detections were the change, and the position error of
// the one that was.
type outcome struct {
	found      bool
	detections int
	matched    int // 0 or 1: a change is found once, however often it is flagged
	err        int // entries between the matched detection and the true change
}

// judge matches detections (ascending) against the true change. The
// detection nearest the change, if within slack of it, finds it; every
// other detection is a false one, also one inside the slack (flagging the
// same change twice raises no second alarm the reader needs). The error
// is the distance to the span: 0 anywhere inside a slope.
func judge(dets []int, truth span) outcome {
	o := outcome{detections: len(dets)}
	if !truth.ok {
		return o
	}
	best := -1
	for _, d := range dets {
		if e := distance(d, truth); e <= slack && (best < 0 || e < best) {
			best = e
		}
	}
	if best >= 0 {
		o.found, o.matched, o.err = true, 1, best
	}
	return o
}

// distance is how many entries d lies outside the span [first, last].
func distance(d int, s span) int {
	switch {
	case d < s.first:
		return s.first - d
	case d > s.last:
		return d - s.last
	}
	return 0
}

// tally sums one rule's outcomes over the histories of one recording and
// scenario.
type tally struct {
	histories, found, detections, matched int
	errs                                  []int
}

func (t *tally) add(o outcome) {
	t.histories++
	t.detections += o.detections
	t.matched += o.matched
	if o.found {
		t.found++
		t.errs = append(t.errs, o.err)
	}
}

// recall is the share of histories whose change was found.
func (t tally) recall() float64 { return float64(t.found) / float64(t.histories) }

// precision is the share of detections that found a change; NaN when
// there was none.
func (t tally) precision() float64 {
	if t.detections == 0 {
		return math.NaN()
	}
	return float64(t.matched) / float64(t.detections)
}

// falsePerHistory is the detections that found no change, per history.
func (t tally) falsePerHistory() float64 {
	return float64(t.detections-t.matched) / float64(t.histories)
}

// medianErr is the median position error of the changes found; NaN when
// none was.
func (t tally) medianErr() float64 {
	if len(t.errs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(t.errs)
	slices.Sort(s)
	n := len(s)
	return float64(s[(n-1)/2]+s[n/2]) / 2
}
