package harness

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/supervise/supervisetest"
	"github.com/ceiling-bench/ceiling/result"
)

// warmPlan is a two-arm plan of one rung (batch 10 × 2 connections)
// whose arms run warm, both the faked target, COMPARE_REPS blocks and no
// budget, booted afresh every 3 blocks.
func warmPlan(t *testing.T) *Plan {
	t.Helper()
	return pipelinePlan(t, "", func(o *knob.Options) {
		o.BaseTargetFile = o.TargetFile
		o.SetTwoArmDefaults(result.ScopeHeadline)
		o.CompareArms, o.CompareRebootEvery, o.CompareBudget = result.ArmsWarm, 3, 0
		o.CompareReps, o.CompareStop = 6, result.StopFixed
	})
}

// Warm arms through the real ProcRunner: each arm's server is booted
// once for the first pass and afresh for the blocks and every 3 blocks,
// frozen whenever none of its points runs, thawed for each, never
// stopped by a point, and stopped at the end; no point records a boot of
// its own, and the result says how the arms ran.
func TestPipelineWarmArms(t *testing.T) {
	var mu sync.Mutex
	var thawedInWindow []bool
	var srvs []*supervisetest.Proc
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"server": func(_ supervise.Spec, p *supervisetest.Proc) {
			p.Log("listening")
			mu.Lock()
			srvs = append(srvs, p)
			mu.Unlock()
		},
		"generator": measuringGenerator(50_000),
	}}
	m := newRecordedMeter(t)
	m.hook = func() {
		// As each window starts: every live server but one is frozen,
		// the point's is not.
		mu.Lock()
		defer mu.Unlock()
		running := 0
		for _, s := range srvs {
			if frozen, _ := s.Frozen(); !s.Exited() && !frozen {
				running++
			}
		}
		thawedInWindow = append(thawedInWindow, running == 1)
	}
	res := runPipeline(t, warmPlan(t), st, m, newFakeClock(0))
	if res.err != nil {
		t.Fatalf("Run: %v\n%s", res.err, res.stderr)
	}
	r := res.r
	if r.Arms == nil || r.Arms.Mode != result.ArmsWarm || r.Arms.RebootEvery != 3 {
		t.Fatalf("arms %+v", r.Arms)
	}
	// First pass (1 rung, both arms), then 6 blocks: boots at the
	// start, for the blocks, and after blocks 3: three per arm.
	if n := len(st.named("server")); n != 6 {
		t.Errorf("%d servers booted, want 3 per arm", n)
	}
	if r.Arms.Base.Boots != 3 || r.Arms.Head.Boots != 3 || r.Arms.Base.Stops != 3 {
		t.Errorf("costs %+v %+v", r.Arms.Base, r.Arms.Head)
	}
	for i, ok := range thawedInWindow {
		if !ok {
			t.Errorf("window %d: not exactly the point's own server thawed", i)
		}
	}
	if len(thawedInWindow) != len(r.Curve) || len(r.Curve) != 2+12 {
		t.Errorf("%d windows, %d points; want 14", len(thawedInWindow), len(r.Curve))
	}
	for _, p := range r.Curve {
		if p.Status != result.StatusOK || p.ReadyNs != 0 || p.StopNs != 0 {
			t.Errorf("point %d: %s %q, ready %d stop %d", p.Index, p.Status, p.FailReason, p.ReadyNs, p.StopNs)
		}
	}
	for _, p := range st.started {
		if !p.Exited() {
			t.Errorf("%s left running", p.Name())
		}
		if p.Name() == "server" {
			if _, n := p.Frozen(); n == 0 || p.Stops() != 1 {
				t.Errorf("a server frozen %d times, stopped %d: want frozen between points, stopped once", n, p.Stops())
			}
		}
	}
	if c := r.Comparison; c == nil || c.Headline.Ended == nil || c.Headline.Ended.Kind != result.EndPlanned {
		t.Errorf("comparison %+v", c)
	}
}

// A warm arm's server that dies during a point fails that point with its
// last words; the arm is booted again before the next block, the block
// is run again, and the comparison still gets its blocks.
func TestPipelineWarmArmDies(t *testing.T) {
	var mu sync.Mutex
	windows := 0
	var live []*supervisetest.Proc
	st := &fakeStarter{}
	st.script = map[string]func(supervise.Spec, *supervisetest.Proc){
		"server": func(_ supervise.Spec, p *supervisetest.Proc) {
			p.Log("listening")
			mu.Lock()
			live = append(live, p)
			mu.Unlock()
		},
		"generator": measuringGenerator(50_000),
	}
	m := newRecordedMeter(t)
	m.hook = func() {
		mu.Lock()
		defer mu.Unlock()
		windows++
		if windows != 5 { // the second block's first point
			return
		}
		for _, s := range live {
			if frozen, _ := s.Frozen(); !s.Exited() && !frozen {
				s.Log("crashed on purpose").Exit(errors.New("exit status 2"))
			}
		}
	}
	res := runPipeline(t, warmPlan(t), st, m, newFakeClock(0))
	if res.err != nil {
		t.Fatalf("Run: %v\n%s", res.err, res.stderr)
	}
	var failed []result.Point
	for _, p := range res.r.Curve {
		if p.Status != result.StatusOK {
			failed = append(failed, p)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0].FailReason, "exited") || !strings.Contains(failed[0].LogTail, "crashed on purpose") {
		t.Fatalf("failed points %+v: want the one whose server died, with its last words", failed)
	}
	c := res.r.Comparison
	if c == nil || c.Headline.NPairs != 6 || c.Headline.Reruns != 1 {
		t.Errorf("comparison %+v: want 6 clean blocks and the lost one run again", c.Headline)
	}
	// Both arms at the start, for the blocks and after blocks 3 and 6
	// (the seventh runs the lost one again), and the dead one again.
	if n := len(st.named("server")); n != 9 {
		t.Errorf("%d servers booted, want 8 and the one booted again", n)
	}
	for _, p := range st.started {
		if !p.Exited() {
			t.Errorf("%s left running", p.Name())
		}
	}
}
