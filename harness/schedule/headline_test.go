package schedule

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

// curveAt gives both arms a throughput at every rung of batch b: rising
// to peak, then falling; the head's peak may sit elsewhere (headPeak).
func curveAt(m map[ArmPoint]float64, b int, rungs []int, peak, headPeak int) {
	at := func(c, pk int) float64 {
		if c <= pk {
			return 1000 * float64(c) / float64(pk)
		}
		return 1000 * float64(pk) / float64(c) * 0.9
	}
	for _, c := range rungs {
		m[ap(result.ArmBase, b, c)] = at(c, peak)
		m[ap(result.ArmHead, b, c)] = at(c, headPeak)
	}
}

// peakAt64 is the servers most tests here measure: both arms peak at 64
// connections of batch 10's ladder, and batches 1 and 100 answer at 64.
func peakAt64() ([]int, map[ArmPoint]float64) {
	ladder := []int{8, 16, 32, 64, 128}
	thr := map[ArmPoint]float64{}
	curveAt(thr, 10, ladder, 64, 64)
	both(thr, 1, 64, 500, 1)
	both(thr, 100, 64, 300, 1)
	return ladder, thr
}

func headlinePlan(ladder []int) TwoArmPlan {
	return TwoArmPlan{Batches: []int{1, 10, 100}, HeadlineBatch: 10, Ladder: ladder, Scope: result.ScopeHeadline,
		Reps: 8, Alpha: 0.05, Stop: result.StopFixed}
}

// COMPARE_SCOPE=headline: the first pass searches the headline batch's
// rungs (both arms at each, the first arm alternating), runs every other
// batch once per arm at the rung found, and the compare phase's blocks
// are at that rung only, in ABBA order.
func TestTwoArmHeadlineScope(t *testing.T) {
	ladder, thr := peakAt64()
	s := NewTwoArm(headlinePlan(ladder))
	if s.FirstPass() != 2*(5+2) {
		t.Errorf("first pass at most %d points, want 14", s.FirstPass())
	}
	got := driveArms(t, s, &armServer{thr: thr})
	first := armsOf(got, result.RoleSweep)
	var searched []int
	for i, p := range first {
		want := result.ArmBase // the first of every other block
		if (i/2)%2 == 1 != (i%2 == 1) {
			want = result.ArmHead
		}
		if p.Arm != want {
			t.Errorf("first-pass point %d is the %s's, want the %s's first in its block", i, p.Arm, want)
		}
		if p.Key.Batch == 10 && i%2 == 0 {
			searched = append(searched, p.Key.Connections)
		}
		if !slices.Contains(ladder, p.Key.Connections) {
			t.Errorf("point %+v is not on the ladder", p)
		}
	}
	if !slices.Contains(searched, 64) || len(searched) >= len(ladder)+1 {
		t.Errorf("searched %v: want the peak, 64, and no rung twice", searched)
	}
	tail := first[len(first)-4:]
	want := []ArmPoint{ap(result.ArmBase, 1, 64), ap(result.ArmHead, 1, 64), ap(result.ArmHead, 100, 64), ap(result.ArmBase, 100, 64)}
	if len(searched)%2 == 1 {
		want[0], want[1], want[2], want[3] = want[1], want[0], want[3], want[2]
	}
	if diff := cmp.Diff(want, tail); diff != "" {
		t.Errorf("the other batches (-want +got):\n%s", diff)
	}
	rungs, skipped, _ := s.Rungs()
	if !cmp.Equal(rungs, []result.PointKey{{Batch: 10, Connections: 64}}) || len(skipped) != 0 {
		t.Fatalf("rungs %v, skipped %q", rungs, skipped)
	}
	if diff := cmp.Diff(CompareSchedule(rungs, 8), armsOf(got, result.RoleCompare)); diff != "" {
		t.Errorf("compare phase (-want +got):\n%s", diff)
	}
	for _, b := range got {
		if b[0].Key.Batch == 10 && b[0].Role == result.RoleSweep && (b[0].Step == 0 || b[0].Phase == "" || b[0].Reason == "") {
			t.Errorf("search block %+v has no step, phase or reason", b[0])
		}
	}
	notes := strings.Join(s.Notes(), "\n")
	for _, w := range []string{"first pass: batch 10 searched on its ladder's rungs", "ran the 8 blocks planned with both arms clean"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q lack %q", notes, w)
		}
	}
}

// The rung compared is the arms' ceiling rung when they agree; where
// they do not, the last published headline's rung when both ran clean
// there, else the highest mean where both ran clean, with a note.
func TestHeadlineRung(t *testing.T) {
	ladder := []int{8, 16, 32, 64, 128}
	seen := func(basePeak, headPeak int) []Observed {
		thr := map[ArmPoint]float64{}
		curveAt(thr, 10, ladder, basePeak, headPeak)
		var out []Observed
		for _, c := range ladder {
			for _, arm := range []string{result.ArmBase, result.ArmHead} {
				v := thr[ap(arm, 10, c)]
				out = append(out, Observed{Point: Point{Role: result.RoleSweep, Arm: arm, Key: result.PointKey{Batch: 10, Connections: c}}, Clean: true, Good: true, ThroughputPerS: v})
			}
		}
		return out
	}
	for _, tc := range []struct {
		name               string
		base, head, prefer int
		want               int
		note               string
	}{
		{"agree", 64, 64, 32, 64, ""},
		{"agree, prefer ignored", 32, 32, 64, 32, ""},
		{"differ, prefer", 32, 64, 32, 32, "the arms' ceiling rungs differ (base 32, head 64): compared at 32 connections, the last published headline's rung"},
		// At 32 the arms make 1000 and 500, at 64 450 and 1000.
		{"differ, prefer off the ladder", 32, 64, 40, 32, "where both ran clean with the highest mean"},
		{"differ, no prefer", 32, 64, 0, 32, "differ (base 32, head 64): compared at 32 connections, where both ran clean with the highest mean"},
		{"differ, prefer", 64, 32, 64, 64, "(base 64, head 32): compared at 64 connections, the last published"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, note := HeadlineRung(seen(tc.base, tc.head), 10, tc.prefer)
			if got != tc.want || !strings.Contains(note, tc.note) || (tc.note == "") != (note == "") {
				t.Errorf("rung %d, note %q; want %d, %q", got, note, tc.want, tc.note)
			}
		})
	}
	if got, _ := HeadlineRung(nil, 10, 32); got != 0 {
		t.Errorf("nothing clean: rung %d, want none", got)
	}
}

// Nothing clean at the headline batch: no other batch is run and nothing
// is compared, and the skipped list says so.
func TestTwoArmHeadlineNothingClean(t *testing.T) {
	s := NewTwoArm(headlinePlan([]int{8, 16, 32, 64, 128}))
	got := driveArms(t, s, &armServer{thr: map[ArmPoint]float64{}})
	if n := len(armsOf(got, result.RoleCompare)); n != 0 {
		t.Errorf("%d compare points", n)
	}
	for _, p := range armsOf(got, result.RoleSweep) {
		if p.Key.Batch != 10 {
			t.Errorf("batch %d run with no rung found", p.Key.Batch)
		}
	}
	rungs, skipped, ok := s.Rungs()
	if !ok || len(rungs) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0], "batch 10 not compared") {
		t.Errorf("rungs %v, skipped %q", rungs, skipped)
	}
}

// A first pass whose every rung ran on contended CPUs runs its best rung
// again (FirstRetries at most, each out of the budget) and compares there
// once a block is clean in both arms; when contention lasts, or the
// points were unclean for the server's own reasons, the batch is not
// compared, and the warning says why.
func TestTwoArmHeadlineContendedFirstPass(t *testing.T) {
	ladder, thr := peakAt64()
	searched := func() int { // the blocks the search itself runs
		s := NewTwoArm(headlinePlan(ladder))
		n := 0
		for _, b := range driveArms(t, s, &armServer{thr: thr}) {
			if b[0].Role == result.RoleSweep && b[0].Key.Batch == 10 {
				n++
			}
		}
		return n
	}()
	for _, tc := range []struct {
		name            string
		busy            int
		unclean         bool
		retries, blocks int
		skipped         string
	}{
		{"one retry clean", searched, false, 1, 8, ""},
		{"clean on the last retry", searched + FirstRetries - 1, false, FirstRetries, 8, ""},
		{"contended throughout", 100, false, FirstRetries, 0, "(its best rung run again 3 times, contended each time)"},
		{"unclean, not contended", 0, true, 0, 0, "neither arm ran clean at any rung of the first pass"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewTwoArm(headlinePlan(ladder))
			got := driveArms(t, s, &armServer{thr: thr, busy: tc.busy, unclean: tc.unclean})
			var retried []Point
			for _, b := range got {
				if b[0].Phase == PhaseRetry {
					retried = append(retried, b[0], b[1])
				}
			}
			if len(retried) != 2*tc.retries {
				t.Fatalf("%d points run again, want %d blocks", len(retried), tc.retries)
			}
			for _, p := range retried {
				if p.Key != (result.PointKey{Batch: 10, Connections: 64}) || p.Role != result.RoleSweep || !strings.Contains(p.Reason, "contended") {
					t.Errorf("retry %+v: want the best rung (64), a sweep point, saying why", p)
				}
			}
			if n := len(armsOf(got, result.RoleCompare)) / 2; n != tc.blocks {
				t.Errorf("%d compare blocks, want %d", n, tc.blocks)
			}
			if s.FirstPass() != 2*(len(ladder)+2+tc.retries) {
				t.Errorf("first pass at most %d points after %d retries", s.FirstPass(), tc.retries)
			}
			rungs, skipped, _ := s.Rungs()
			if tc.skipped == "" {
				notes := strings.Join(s.Notes(), "\n")
				if !cmp.Equal(rungs, []result.PointKey{{Batch: 10, Connections: 64}}) || !strings.Contains(notes, "64 connections, run again") {
					t.Errorf("rungs %v, notes %q", rungs, notes)
				}
				return
			}
			if len(rungs) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0], tc.skipped) {
				t.Errorf("rungs %v, skipped %q; want %q", rungs, skipped, tc.skipped)
			}
		})
	}
	// Under a budget a retry is given only while the blocks the paired
	// test needs still fit after it: here 2.6 s a block (1 s windows, a
	// server booted and stopped in 0.3 s per point), the search's 4
	// blocks, then retries until 6 blocks and the other batches' 4
	// points would not fit 40 s: 2 of them.
	p := headlinePlan(ladder)
	p.Budget, p.First, p.Compare = 40*time.Second, Window{Duration: time.Second}, Window{Duration: time.Second}
	p.Costs.Overhead = time.Nanosecond
	s := NewTwoArm(p)
	sv := &armServer{thr: thr, cost: time.Second, busy: 100, ready: 100 * time.Millisecond, stop: 200 * time.Millisecond}
	got := driveArms(t, s, sv)
	retries := 0
	for _, b := range got {
		if b[0].Phase == PhaseRetry {
			retries++
		}
	}
	_, skipped, _ := s.Rungs()
	if retries == 0 || retries >= FirstRetries || sv.now > p.Budget || len(skipped) != 1 || !strings.Contains(skipped[0], "no time left to run its best rung again") {
		t.Errorf("%d retries, ended at %s of %s; skipped %q", retries, sv.now, p.Budget, skipped)
	}
}

// COMPARE_BUDGET: the blocks are planned from the costs the first pass
// measured, no block is given that would end past the budget (by the
// blocks' mean time so far), and the rung's end says the budget ended
// it; without a budget, Reps blocks run.
func TestTwoArmBudget(t *testing.T) {
	ladder, thr := peakAt64()
	for _, tc := range []struct {
		name          string
		budget, cost  time.Duration
		cmpCost       time.Duration
		planned, runs int
	}{
		// The first pass here is 12 points of 1 s (plus 0.3 s of boot
		// and stop each): 4 rungs searched and 2 other batches, both
		// arms. It leaves 84.4 s, and a block takes 2 × 5.3 s.
		{"planned from the first pass", 100 * time.Second, time.Second, 5 * time.Second, 7, 7},
		{"no budget", 0, time.Second, time.Second, 20, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := headlinePlan(ladder)
			p.Reps, p.Budget = 20, tc.budget
			p.First, p.Compare = Window{Duration: time.Second}, Window{Duration: 5 * time.Second}
			p.Costs.Overhead = time.Nanosecond // the fake's points have none
			s := NewTwoArm(p)
			sv := &armServer{thr: thr, cost: tc.cost, cmpCost: tc.cmpCost, ready: 100 * time.Millisecond, stop: 200 * time.Millisecond}
			got := driveArms(t, s, sv)
			n := len(armsOf(got, result.RoleCompare)) / 2
			if n != tc.runs || s.Planned() != tc.planned {
				t.Errorf("%d blocks run, %d planned; want %d, %d", n, s.Planned(), tc.runs, tc.planned)
			}
			if tc.budget > 0 && sv.now > tc.budget {
				t.Errorf("the run ended at %s, past the budget %s", sv.now, tc.budget)
			}
		})
	}
	// A budget the blocks run slower than planned: they stop when the
	// next would end past it, and the rung's end says so.
	p := headlinePlan(ladder)
	p.Budget, p.First, p.Compare = 100*time.Second, Window{Duration: time.Second}, Window{Duration: 2 * time.Second}
	p.Costs.Overhead = time.Nanosecond
	s := NewTwoArm(p)
	sv := &armServer{thr: thr, cost: time.Second, cmpCost: 5 * time.Second}
	n := len(armsOf(driveArms(t, s, sv), result.RoleCompare)) / 2
	end := s.Ended()[result.PointKey{Batch: 10, Connections: 64}]
	if sv.now > p.Budget || sv.now+10*time.Second <= p.Budget || !s.Budgeted() || end.Kind != result.EndBudget || end.Blocks != n {
		t.Errorf("%d blocks end at %s of %s; budgeted %v, ended %+v", n, sv.now, p.Budget, s.Budgeted(), end)
	}
	if !strings.Contains(end.Text, "COMPARE_BUDGET 1m40s spent after") || !strings.Contains(strings.Join(s.Notes(), "\n"), end.Text) {
		t.Errorf("end %q, notes %q", end.Text, s.Notes())
	}
}

// The headline search measures only the ladder's rungs, whatever the
// ladder's spacing, and none twice.
func TestRungSearchStaysOnTheLadder(t *testing.T) {
	for _, l := range [][]int{{8, 16, 32, 64, 128}, {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, {1, 10, 100, 1000}, {5, 6, 7}, {50}} {
		for peak := range l {
			s := newRungSearcher(10, l)
			var seen []int
			for {
				c, _, _, ok := s.Next()
				if !ok {
					break
				}
				if !slices.Contains(l, c) || slices.Contains(seen, c) {
					t.Fatalf("ladder %v, peak %d: %d after %v", l, l[peak], c, seen)
				}
				seen = append(seen, c)
				thr := float64(c)
				if c > l[peak] {
					thr = float64(l[peak]) * 0.8
				}
				s.Record(probe{conns: c, thr: thr, good: true})
			}
			if len(seen) == 0 {
				t.Fatalf("ladder %v: nothing searched", l)
			}
		}
	}
}

// Under a budget lost blocks are run again while it lasts (up to
// MaxBlocks of the blocks planned): a rung that lost its first blocks to
// contention still reaches its planned clean blocks when the time allows.
func TestTwoArmBudgetReruns(t *testing.T) {
	ladder, thr := peakAt64()
	p := headlinePlan(ladder)
	p.Budget, p.MaxReps = time.Hour, 6
	s := NewTwoArm(p)
	got := driveArms(t, s, &armServer{thr: thr, cost: time.Second, lose: map[int]bool{0: true, 1: true, 2: true, 3: true}})
	if n := len(armsOf(got, result.RoleCompare)) / 2; n != 10 || s.Budgeted() || s.Planned() != 6 {
		t.Errorf("%d blocks, %d planned, budgeted %v; want 4 lost and 6 clean", n, s.Planned(), s.Budgeted())
	}
}
