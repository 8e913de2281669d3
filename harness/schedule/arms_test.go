package schedule

import (
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

func ap(arm string, b, c int) ArmPoint {
	return ArmPoint{arm, result.PointKey{Batch: b, Connections: c}}
}

func TestFirstPassAlternatesArms(t *testing.T) {
	keys := []result.PointKey{{Batch: 10, Connections: 4}, {Batch: 100, Connections: 2}, {Batch: 10, Connections: 8}}
	want := []ArmPoint{ap(result.ArmBase, 10, 4), ap(result.ArmHead, 10, 4), ap(result.ArmHead, 100, 2), ap(result.ArmBase, 100, 2), ap(result.ArmBase, 10, 8), ap(result.ArmHead, 10, 8)}
	if diff := cmp.Diff(want, FirstPassOrder(keys)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Each compared point gets every rep of both arms, the arms in ABBA
// order, and over the whole schedule each arm goes first as often as the
// other (to one, for an odd count).
func TestCompareScheduleIsBalanced(t *testing.T) {
	pts := []result.PointKey{{Batch: 10, Connections: 64}, {Batch: 100, Connections: 32}, {Batch: 512, Connections: 16}}
	for _, reps := range []int{2, 4, 5} {
		s := CompareSchedule(pts, reps)
		if len(s) != 2*reps*len(pts) {
			t.Fatalf("reps %d: %d points, want %d", reps, len(s), 2*reps*len(pts))
		}
		firsts := map[string]int{}
		for i := 0; i < len(s); i += 2 {
			a, b := s[i], s[i+1]
			if a.Key != b.Key || a.Arm == b.Arm {
				t.Fatalf("reps %d: slot %d is %v then %v, want both arms of one point", reps, i, a, b)
			}
			firsts[a.Arm]++
		}
		if d := firsts[result.ArmBase] - firsts[result.ArmHead]; d < 0 || d > 1 {
			t.Errorf("reps %d: base first %d times, head %d", reps, firsts[result.ArmBase], firsts[result.ArmHead])
		}
		// Point 0's arm order over its reps: AB, BA, AB, ...
		var order []string
		for _, x := range s {
			if x.Key.Batch == 10 {
				order = append(order, x.Arm[:1])
			}
		}
		want := strings.Repeat("bhhb", reps)[:2*reps]
		if got := strings.Join(order, ""); got != want {
			t.Errorf("reps %d: batch 10 arms %s, want %s", reps, got, want)
		}
	}
}

func TestCompareRungs(t *testing.T) {
	p := func(arm string, b, c int, thr float64, clean bool) Observed {
		return Observed{Point: Point{Role: result.RoleSweep, Arm: arm, Key: result.PointKey{Batch: b, Connections: c}}, ThroughputPerS: thr, Clean: clean}
	}
	seen := []Observed{
		// batch 10: both peak at 8; base alone higher at 16 (head unclean there).
		p(result.ArmBase, 10, 4, 100, true), p(result.ArmHead, 10, 4, 100, true),
		p(result.ArmBase, 10, 8, 150, true), p(result.ArmHead, 10, 8, 140, true),
		p(result.ArmBase, 10, 16, 400, true), p(result.ArmHead, 10, 16, 300, false),
		// batch 100: only the head clean.
		p(result.ArmBase, 100, 2, 50, false), p(result.ArmHead, 100, 2, 60, true), p(result.ArmHead, 100, 4, 70, true),
		// batch 512: nothing clean.
		p(result.ArmBase, 512, 2, 50, false), p(result.ArmHead, 512, 2, 60, false),
		// compare points do not count.
		{Point: Point{Role: result.RoleCompare, Arm: result.ArmHead, Key: result.PointKey{Batch: 10, Connections: 4}}, ThroughputPerS: 1e9, Clean: true},
		// nor do lost ones.
		{Point: Point{Role: result.RoleSweep, Arm: result.ArmHead, Key: result.PointKey{Batch: 10, Connections: 16}}, Lost: true, ThroughputPerS: 1e9, Clean: true},
	}
	rungs, skipped := CompareRungs(seen, []int{10, 100, 512})
	want := []result.PointKey{{Batch: 10, Connections: 8}, {Batch: 100, Connections: 4}}
	if diff := cmp.Diff(want, rungs); diff != "" {
		t.Errorf("rungs (-want +got):\n%s", diff)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0], "batch 100") || !strings.Contains(skipped[0], "head's ceiling rung") ||
		!strings.Contains(skipped[1], "batch 512 not compared") {
		t.Errorf("skipped %q", skipped)
	}
}
