package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// slowPlan is the default comparison (5 minutes, 1 s windows after 1 s
// of warm-up, first pass 3 s after 1 s) of a server that takes 2 s to
// be ready and 4 s to stop: a Pusher server's costs (issue 47).
func slowPlan(ladder []int) (TwoArmPlan, *armServer) {
	p := headlinePlan(ladder)
	p.Stop, p.Arms, p.Budget, p.MaxReps = result.StopOBF, ArmsAuto, 5*time.Minute, 100
	p.First = Window{Duration: 3 * time.Second, Warmup: time.Second}
	p.Compare = Window{Duration: time.Second, Warmup: time.Second}
	return p, &armServer{ready: 2 * time.Second, stop: 4 * time.Second}
}

// stepsOf counts the steps of kind k given, and the arms they named.
func stepsOf(ss []Step, k StepKind) (n int, arms []string) {
	for _, s := range ss {
		if s.Kind == k {
			n++
			arms = append(arms, s.Arms...)
		}
	}
	return n, arms
}

// A server that boots in 2 s and stops in 4 s, costs unknown before the
// run: the first block boots its own servers and times them; the rule
// then keeps the arms warm (they buy many times the blocks), both arms
// are booted once for the first pass, stopped and booted afresh for the
// blocks, booted afresh every few blocks, and stopped at the end, all
// within the budget. The blocks are planned from what was measured.
func TestTwoArmSlowServerWarm(t *testing.T) {
	ladder, thr := peakAt64()
	p, sv := slowPlan(ladder)
	sv.thr, sv.cost, sv.cmpCost = thr, 4300*time.Millisecond, 2300*time.Millisecond
	s := NewTwoArm(p)
	got := driveArms(t, s, sv)

	first := sv.steps[0]
	if first.Kind != RunBlock || first.Warm {
		t.Fatalf("first step %+v: want a block that boots its own servers, to time them", first)
	}
	rec := s.Record()
	if rec.Mode != ArmsWarm || !strings.HasPrefix(rec.Reason, "warm: ") || rec.CostsFrom != CostsMeasured {
		t.Fatalf("arms %+v: want warm, from measured costs", rec)
	}
	if rec.Base.ReadyNs != int64(2*time.Second) || rec.Head.StopNs != int64(4*time.Second) || rec.Base.Boots < 3 {
		t.Errorf("costs %+v %+v: want 2 s and 4 s, and the arm booted several times", rec.Base, rec.Head)
	}
	for i, st := range sv.steps[1:] {
		if st.Kind == RunBlock && !st.Warm {
			t.Errorf("step %d: a fresh block after the arms were chosen warm", i+1)
		}
	}
	boots, _ := stepsOf(sv.steps, BootArms)
	stops, _ := stepsOf(sv.steps, StopArms)
	if last := sv.steps[len(sv.steps)-1]; last.Kind != StopArms || len(last.Arms) != 2 {
		t.Errorf("last step %+v: want both arms stopped", last)
	}
	if boots != stops || boots < 3 {
		t.Errorf("%d boots and %d stops: want one stop per boot, and reboots between blocks", boots, stops)
	}
	n := len(armsOf(got, result.RoleCompare)) / 2
	if sv.now > p.Budget {
		t.Errorf("the run took %s, over the budget %s", sv.now, p.Budget)
	}
	// The blocks the budget bought: with a server booted per point a
	// block would take 2 × (2.3 + 6) s; warm, 4.6 s plus a share of the
	// reboots.
	if s.Planned() < 30 || n != s.Planned() {
		t.Errorf("%d blocks run of %d planned: want the 30 and more the time buys warm", n, s.Planned())
	}
	if end := s.Ended()[result.PointKey{Batch: 10, Connections: 64}]; end.Kind != result.EndPlanned {
		t.Errorf("blocks ended %+v, want as planned", end)
	}
	if rec.RebootEvery < 2 {
		t.Errorf("reboot every %d blocks", rec.RebootEvery)
	}
	t.Logf("%d blocks in %s, %d boots, reboot every %d", n, sv.now, boots, rec.RebootEvery)
}

// The same server with its costs known before the run (a target file,
// the last published result): warm from the first block, and a clear
// regression stops at an early look; the final stop still comes.
func TestTwoArmSlowServerKnownCostsStopsEarly(t *testing.T) {
	ladder, thr := peakAt64()
	for k, v := range thr {
		if k.Arm == result.ArmHead {
			thr[k] = v * 0.8
		}
	}
	p, sv := slowPlan(ladder)
	p.Costs = Costs{Base: ArmCost{Ready: 2 * time.Second, Stop: 4 * time.Second, Known: true}, Head: ArmCost{Ready: 2 * time.Second, Stop: 4 * time.Second, Known: true}, Source: CostsTarget}
	sv.thr, sv.cost, sv.cmpCost = thr, 4300*time.Millisecond, 2300*time.Millisecond
	s := NewTwoArm(p)
	got := driveArms(t, s, sv)
	if st := sv.steps[0]; st.Kind != BootArms || len(st.Arms) != 2 {
		t.Fatalf("first step %+v: want both arms booted, warm from the start", st)
	}
	n := len(armsOf(got, result.RoleCompare)) / 2
	end := s.Ended()[result.PointKey{Batch: 10, Connections: 64}]
	if end.Kind != result.EndDecided || n >= s.Planned() || n < MinBlocks(0.05) {
		t.Errorf("%d of %d blocks, ended %+v: want decided at an early look", n, s.Planned(), end)
	}
	if last := sv.steps[len(sv.steps)-1]; last.Kind != StopArms {
		t.Errorf("last step %+v: want the arms stopped", last)
	}
}

// A warm arm found down (its server exited during a point) is booted
// again before the next block; a block that lost a repeat is run again.
func TestTwoArmWarmArmDown(t *testing.T) {
	ladder, thr := peakAt64()
	p, sv := slowPlan(ladder)
	p.Arms, p.Budget, p.Reps, p.RebootEvery = ArmsWarm, 0, 8, -1
	sv.thr, sv.cost = thr, time.Second
	s := NewTwoArm(p)
	var last Report
	downAt, rebooted := -1, false
	blocks := 0
	for i := 0; i < 500; i++ {
		st := s.Next(last)
		if st.Kind == Done {
			break
		}
		last = sv.do(st)
		if st.Kind == RunBlock && st.Block[0].Role == result.RoleCompare {
			blocks++
			if blocks == 3 {
				downAt = i
				for j := range last.Points {
					if last.Points[j].Arm == result.ArmHead {
						last.Points[j] = Observed{Point: last.Points[j].Point, Failed: true, ArmDown: true, Elapsed: sv.now}
					}
				}
			}
		}
		if downAt >= 0 && i == downAt+1 {
			rebooted = st.Kind == BootArms && len(st.Arms) == 1 && st.Arms[0] == result.ArmHead
		}
	}
	if !rebooted {
		t.Errorf("the head's server was not booted again after it went down")
	}
	if n := len(armsOf(nil, "")); n != 0 || blocks != 9 {
		t.Errorf("%d compare blocks, want 8 clean and the lost one run again", blocks)
	}
	if r := s.Record(); r.RebootEvery != 0 {
		t.Errorf("COMPARE_REBOOT_EVERY=never rebooted every %d", r.RebootEvery)
	}
}

// A budget that the costs the first block timed show cannot buy the
// blocks the test needs ends the run as soon as that is known, and says
// what budget would.
func TestTwoArmBudgetTooShortForSlowServer(t *testing.T) {
	ladder, thr := peakAt64()
	p, sv := slowPlan(ladder)
	p.Budget = 90 * time.Second
	sv.thr, sv.cost = thr, 4300*time.Millisecond
	s := NewTwoArm(p)
	got := driveArms(t, s, sv)
	if len(got) != 1 || len(sv.steps) != 1 {
		t.Errorf("%d blocks and %d steps: want the first block only", len(got), len(sv.steps))
	}
	end := s.Ended()[result.PointKey{Batch: 10}]
	if end.Kind != result.EndNoTime || end.NeedBudgetNs <= int64(p.Budget) || !strings.Contains(end.Text, "a budget of") {
		t.Fatalf("ended %+v", end)
	}
	if !strings.Contains(strings.Join(s.Notes(), "\n"), end.Text) {
		t.Errorf("notes %q lack %q", s.Notes(), end.Text)
	}
	t.Log(end.Text)

	// The same when the arms were chosen (COMPARE_ARMS=warm): the first
	// block's costs are held against the budget all the same.
	p.Budget, p.Arms = 40*time.Second, ArmsWarm
	s = NewTwoArm(p)
	sv = &armServer{thr: thr, cost: 4 * time.Second, ready: 2 * time.Second, stop: 4 * time.Second}
	driveArms(t, s, sv)
	if end := s.Ended()[result.PointKey{Batch: 10}]; end.Kind != result.EndNoTime || sv.now > p.Budget {
		t.Errorf("COMPARE_ARMS=warm: ended %+v at %s of %s", end, sv.now, p.Budget)
	}

	// A budget the first block showed could do, on a machine that then
	// slows: the first pass's next block is not given once it would end
	// past the budget.
	p.Budget = 2 * time.Minute
	p.Costs = Costs{Base: ArmCost{Ready: 2 * time.Second, Stop: 4 * time.Second, Known: true}, Head: ArmCost{Ready: 2 * time.Second, Stop: 4 * time.Second, Known: true}}
	s = NewTwoArm(p)
	sv = &armServer{thr: thr, cost: 4 * time.Second, slowing: 10 * time.Second, ready: 2 * time.Second, stop: 4 * time.Second}
	driveArms(t, s, sv)
	if sv.now > p.Budget {
		t.Errorf("ran %s of %s", sv.now, p.Budget)
	}
	if end := s.Ended()[result.PointKey{Batch: 10}]; end.Kind != result.EndBudget {
		t.Errorf("ended %+v", end)
	}
	if last := sv.steps[len(sv.steps)-1]; last.Kind != StopArms {
		t.Errorf("last step %+v: want the arms stopped", last)
	}
}

// refserver's costs (about 0.1 s to boot and stop): fresh servers, as
// seed 002 measures, since warm arms would not buy 25% more blocks.
func TestTwoArmFastServerStaysFresh(t *testing.T) {
	ladder, thr := peakAt64()
	p, sv := slowPlan(ladder)
	sv.thr, sv.cost, sv.cmpCost, sv.ready, sv.stop = thr, 4300*time.Millisecond, 2300*time.Millisecond, 60*time.Millisecond, 40*time.Millisecond
	s := NewTwoArm(p)
	driveArms(t, s, sv)
	if r := s.Record(); r.Mode != ArmsFresh || !strings.Contains(r.Reason, "short of the 1.25×") {
		t.Errorf("arms %+v", r)
	}
	if n, _ := stepsOf(sv.steps, BootArms); n != 0 {
		t.Errorf("%d boots of warm arms", n)
	}
}

// Profiled blocks come after the compared ones, at the headline's rung,
// the arm that goes first alternating, when the verdict asks; under a
// budget they run all or none, and none says why.
func TestTwoArmProfiledBlocks(t *testing.T) {
	ladder, thr := peakAt64()
	for _, tc := range []struct {
		name    string
		budget  time.Duration
		maxReps int
		want    int
		why     string
	}{
		{"no budget", 0, 0, 3, ""},
		{"room", 5 * time.Minute, 12, 3, ""},
		// The blocks take the budget to its last block's worth: no
		// room for three more.
		{"no room", 2 * time.Minute, 100, 0, "did not fit COMPARE_BUDGET 2m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := headlinePlan(ladder)
			p.Budget, p.MaxReps, p.ProfileBlocks = tc.budget, tc.maxReps, 3
			if tc.budget == 0 {
				p.Reps = 8
			}
			asked := ""
			p.WantsProfile = func(v string) bool { asked = v; return true }
			sv := &armServer{thr: thr, cost: time.Second, cmpCost: 2 * time.Second}
			s := NewTwoArm(p)
			var last Report
			var prof []Block
			cmpDone := false
			for i := 0; ; i++ {
				st := s.Next(last)
				if st.Kind == Done || i > 500 {
					break
				}
				last = sv.do(st)
				if st.Kind == RunBlock && st.Block[0].Role == result.RoleCompare {
					if cmpDone {
						t.Fatal("a compare block after a profiled one")
					}
					last.Verdict = result.CompareSlower
				}
				if st.Kind == RunBlock && st.Block[0].Role == result.RoleProfile {
					cmpDone = true
					prof = append(prof, st.Block)
				}
			}
			if len(prof) != tc.want || (tc.want > 0 && asked != result.CompareSlower) {
				t.Fatalf("%d profiled blocks (verdict asked with %q), want %d", len(prof), asked, tc.want)
			}
			for i, b := range prof {
				if b[0].Key.Connections != 64 || b[0].Key.Batch != 10 || b[0].Arm == b[1].Arm || (i%2 == 0) != (b[0].Arm == result.ArmBase) {
					t.Errorf("profiled block %d: %+v", i, b)
				}
			}
			if !strings.Contains(s.ProfileWhy(), tc.why) || (tc.why == "") != (s.ProfileWhy() == "") {
				t.Errorf("why %q, want %q", s.ProfileWhy(), tc.why)
			}
			if tc.budget > 0 && sv.now > tc.budget {
				t.Errorf("ran %s of %s", sv.now, tc.budget)
			}
		})
	}
}
