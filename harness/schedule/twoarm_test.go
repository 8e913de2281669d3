package schedule

import (
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

// armServer is what a two-arm point measures: a throughput per arm and
// key (Rep 0); lose says which blocks (by their place in the compare
// phase, from 0) lose their head repeat.
type armServer struct {
	thr  map[ArmPoint]float64
	lose map[int]bool
	n    int // compare blocks so far
	// busy is how many first-pass blocks, from the first, ran on
	// contended CPUs (measured, not clean); unclean is every first-pass
	// point unclean for the server's own reasons (a capped generator,
	// say), not contention.
	busy    int
	unclean bool
	// cost is each point's time on the run's clock (Observed.Elapsed),
	// and cmpCost a compare point's when set; ready and stop are a
	// server's boot and stop, paid by a fresh point and by BootArms and
	// StopArms (both arms at once).
	cost, cmpCost time.Duration
	ready, stop   time.Duration
	// over is each point's time beside its load (cost) and its boot
	// and stop.
	over time.Duration
	// slowing is added to over after every block: a machine whose
	// points take longer than the first block's timed.
	slowing time.Duration
	now     time.Duration
	steps   []Step // every step given
}

func (sv *armServer) measure(s Step) []Observed {
	b := s.Block
	lost, busy := false, false
	if b[0].Role == result.RoleCompare {
		lost = sv.lose[sv.n]
		sv.n++
	}
	if b[0].Role == result.RoleSweep && sv.busy > 0 {
		busy = true
		sv.busy--
	}
	var out []Observed
	for _, p := range b {
		k := p.Key
		k.Rep = 0
		v := sv.thr[ArmPoint{Arm: p.Arm, Key: k}]
		wall := sv.cost
		if p.Role == result.RoleCompare && sv.cmpCost > 0 {
			wall = sv.cmpCost
		}
		o := Observed{Point: p, Failed: v == 0, Good: v > 0, Clean: v > 0, ThroughputPerS: v, Load: wall}
		if b[0].Role == result.RoleSweep && (busy || sv.unclean) {
			o.Clean, o.Contended = false, busy
		}
		wall += sv.over
		if !s.Warm {
			o.ReadyCost, o.StopCost = sv.ready, sv.stop
			wall += sv.ready + sv.stop
		}
		sv.now += wall
		o.Wall, o.Elapsed = wall, sv.now
		if lost && p.Arm == result.ArmHead {
			o = Observed{Point: p, Failed: true, Elapsed: sv.now, Wall: wall}
		}
		out = append(out, o)
	}
	return out
}

// do is what the step did.
func (sv *armServer) do(s Step) Report {
	sv.steps = append(sv.steps, s)
	switch s.Kind {
	case RunBlock:
		defer func() { sv.over += sv.slowing }()
		return Report{Points: sv.measure(s)}
	case BootArms, StopArms:
		cost := sv.ready
		if s.Kind == StopArms {
			cost = sv.stop
		}
		sv.now += cost
		var r Report
		for _, a := range s.Arms {
			r.Arms = append(r.Arms, ArmEvent{Arm: a, Cost: cost})
		}
		r.Elapsed = sv.now
		return r
	}
	return Report{}
}

// driveArms runs the schedule to its end and returns the blocks it gave.
func driveArms(t *testing.T, s *TwoArm, sv *armServer) []Block {
	t.Helper()
	var got []Block
	var last Report
	for i := 0; ; i++ {
		st := s.Next(last)
		if st.Kind == Done {
			return got
		}
		if i > 2000 {
			t.Fatal("the schedule does not end")
		}
		if st.Kind == RunBlock {
			got = append(got, st.Block)
		}
		last = sv.do(st)
	}
}

// both is a throughput for both arms at (batch, conns), the head's
// scaled by f.
func both(m map[ArmPoint]float64, b, c int, v, f float64) {
	m[ap(result.ArmBase, b, c)], m[ap(result.ArmHead, b, c)] = v, v*f
}

func armsOf(bs []Block, role string) []ArmPoint {
	var out []ArmPoint
	for _, b := range bs {
		for _, p := range b {
			if p.Role == role {
				out = append(out, ArmPoint{Arm: p.Arm, Key: p.Key})
			}
		}
	}
	return out
}

// With nothing lost and a fixed design, the first pass is
// FirstPassOrder's and the compare phase CompareSchedule's, at the rungs
// where both arms peaked.
func TestTwoArmABBA(t *testing.T) {
	thr := map[ArmPoint]float64{}
	both(thr, 10, 4, 100, 1)
	both(thr, 10, 8, 150, 1)
	both(thr, 100, 2, 60, 1)
	both(thr, 100, 4, 50, 1)
	order := Order([]int{10, 100}, ladder(map[int][]int{10: {4, 8}, 100: {2, 4}}), 1)
	s := NewTwoArm(TwoArmPlan{Batches: []int{10, 100}, Order: order, Reps: 4, Alpha: 0.05, Stop: result.StopFixed})
	if _, _, ok := s.Rungs(); ok || s.FirstPass() != 8 {
		t.Fatalf("rungs known before the first pass, or a first pass of %d", s.FirstPass())
	}
	got := driveArms(t, s, &armServer{thr: thr})
	if diff := cmp.Diff(FirstPassOrder(order), armsOf(got, result.RoleSweep)); diff != "" {
		t.Errorf("first pass (-want +got):\n%s", diff)
	}
	rungs, skipped, ok := s.Rungs()
	want := []result.PointKey{{Batch: 10, Connections: 8}, {Batch: 100, Connections: 2}}
	if !ok || len(skipped) != 0 || !cmp.Equal(want, rungs) {
		t.Fatalf("rungs %v, skipped %q", rungs, skipped)
	}
	if diff := cmp.Diff(CompareSchedule(rungs, 4), armsOf(got, result.RoleCompare)); diff != "" {
		t.Errorf("compare phase (-want +got):\n%s", diff)
	}
}

// A block that lost a repeat runs again at the rung's next rep, keeping
// the ABBA order, until reps blocks are clean; a rung that cannot reach
// the pairs its test needs within MaxBlocks stops.
func TestTwoArmReruns(t *testing.T) {
	thr := map[ArmPoint]float64{}
	both(thr, 10, 4, 100, 1)
	order := []result.PointKey{{Batch: 10, Connections: 4}}
	s := NewTwoArm(TwoArmPlan{Batches: []int{10}, Order: order, Reps: 6, Alpha: 0.05, Stop: result.StopFixed})
	got := armsOf(driveArms(t, s, &armServer{thr: thr, lose: map[int]bool{1: true, 2: true}}), result.RoleCompare)
	if len(got) != 2*8 || got[14].Key.Rep != 7 {
		t.Fatalf("%d compare points, want 6 clean blocks and 2 lost: %v", len(got), got)
	}
	for i := 0; i < len(got); i += 2 {
		first := result.ArmBase
		if (i/2)%2 == 1 {
			first = result.ArmHead
		}
		if got[i].Arm != first || got[i].Key.Rep != i/2 {
			t.Errorf("block %d: %+v first, want %s at rep %d", i/2, got[i], first, i/2)
		}
	}

	// Lose every block: 6 pairs cannot be had once more than
	// MaxBlocks-6 are lost.
	lose := map[int]bool{}
	for i := range 100 {
		lose[i] = true
	}
	s = NewTwoArm(TwoArmPlan{Batches: []int{10}, Order: order, Reps: 6, Alpha: 0.05, Stop: result.StopFixed})
	got = armsOf(driveArms(t, s, &armServer{thr: thr, lose: lose}), result.RoleCompare)
	if n := len(got) / 2; n != MaxBlocks(6)-6+1 {
		t.Errorf("%d blocks, want %d", n, MaxBlocks(6)-6+1)
	}
}

// A sequential rule stops a rung whose test is decided at a look (a clear
// change), while an A/A rung runs every block asked.
func TestTwoArmSequentialStop(t *testing.T) {
	thr := map[ArmPoint]float64{}
	both(thr, 10, 8, 150, 0.8)
	both(thr, 100, 2, 60, 1)
	order := []result.PointKey{{Batch: 10, Connections: 8}, {Batch: 100, Connections: 2}}
	s := NewTwoArm(TwoArmPlan{Batches: []int{10, 100}, Order: order, Reps: 8, Alpha: 0.05, Stop: result.StopPocock})
	// Jitter the head so the A/A rung's ratios are not all one.
	sv := &armServer{thr: thr}
	var got []Block
	var last Report
	for i := 0; ; i++ {
		st := s.Next(last)
		if st.Kind == Done {
			break
		}
		got = append(got, st.Block)
		last = sv.do(st)
		for j := range last.Points {
			if last.Points[j].Arm == result.ArmHead {
				last.Points[j].ThroughputPerS *= 1 + float64(i%5-2)/1000
			}
		}
	}
	n := map[int]int{}
	for _, p := range armsOf(got, result.RoleCompare) {
		n[p.Key.Batch]++
	}
	if n[10] != 2*6 || n[100] != 2*8 {
		t.Errorf("compare points per batch %v, want 12 (stopped at the 6th look) and 16", n)
	}
}
