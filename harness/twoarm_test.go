package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/plancost"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// fakeArms keeps no server up: it records the warm arms' boots and stops
// it was asked for, each of cost; a test embeds it in its runner.
type fakeArms struct {
	mu           sync.Mutex
	cost         time.Duration
	boots, stops []string
	profiled     []result.Point
	unable       string // ProfileUnable's answer
}

func (f *fakeArms) BootArm(_ context.Context, arm string) ArmOutcome {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.boots = append(f.boots, arm)
	return ArmOutcome{Cost: f.cost}
}

// ProfileUnable is the machine's profiler as the test sets it.
func (f *fakeArms) ProfileUnable() string { return f.unable }

// ProfileDiff records the profiled points it was given and compares
// nothing (harness/cpuprof's tests do).
func (f *fakeArms) ProfileDiff(_ context.Context, points []result.Point, dir, _ string) *result.ProfileDiff {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profiled = append(f.profiled, points...)
	return &result.ProfileDiff{Reason: "faked", FlamegraphFile: dir}
}

func (f *fakeArms) StopArm(_ context.Context, arm string) ArmOutcome {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops = append(f.stops, arm)
	return ArmOutcome{Cost: f.cost}
}

// armScripted replays a throughput per (arm, batch, conns), scaled by a
// small deterministic jitter per call, and records what it was asked.
// With a clock, each point takes its warm-up and window (the plan's when
// the spec has none), over, and its server's ready and stop when it boots
// its own; a warm arm's boot takes ready and its stop stop.
type armScripted struct {
	fakeArms
	clock             *fakeClock
	plan              *Plan
	over, ready, stop time.Duration
	// timeline, when set, is each point's load.Timeline.
	timeline func(spec PointSpec) *load.Timeline
	thr      map[schedule.ArmPoint]float64 // Key.Rep 0
	asked    []PointSpec
	cancel   func()
	at       int
}

func (s *armScripted) RunPoint(ctx context.Context, spec PointSpec) verdict.Outcome {
	s.asked = append(s.asked, spec)
	defer func() {
		if s.cancel != nil && len(s.asked) == s.at {
			s.cancel()
		}
	}()
	k := spec.Key
	k.Rep = 0
	v := s.thr[schedule.ArmPoint{Arm: spec.Arm, Key: k}]
	if v == 0 {
		return verdict.Outcome{FailReason: "server exited during the point"}
	}
	v *= 1 + float64(len(s.asked)%7)/1000 // ±0.3%: noise, not a change
	srv := result.CPUStats{Samples: 4, MeanCores: 0.95, PinnedCores: 1, FractionMean: 0.95}
	gen := result.CPUStats{Samples: 4, MeanCores: 0.5, PinnedCores: 1, FractionMean: 0.5}
	out := verdict.Outcome{Load: &load.Result{Summary: load.Summary{Mode: "closed", ThroughputPerS: v, MeasuredNs: 1e9,
		Latency: load.Latency{P99: 1_000_000}}}, ServerCPU: srv, GeneratorCPU: gen}
	if s.timeline != nil {
		out.Load.Summary.Timeline = s.timeline(spec)
	}
	s.pass(spec, &out)
	return out
}

// pass moves the clock by the point's time.
func (s *armScripted) pass(spec PointSpec, out *verdict.Outcome) {
	if s.clock == nil {
		return
	}
	load := spec.Duration + spec.Warmup
	if spec.Duration == 0 {
		load = s.plan.Point.Duration + s.plan.Point.Warmup
	}
	wall := load + s.over
	if !spec.Warm {
		out.ReadyCost, out.StopCost = s.ready, s.stop
		wall += s.ready + s.stop
	}
	out.Wall = wall
	s.clock.Sleep(wall)
}

func (s *armScripted) BootArm(ctx context.Context, arm string) ArmOutcome {
	out := s.fakeArms.BootArm(ctx, arm)
	if s.clock != nil {
		out.Cost = s.ready
		s.clock.Sleep(s.ready / 2) // both arms at once
	}
	return out
}

func (s *armScripted) StopArm(ctx context.Context, arm string) ArmOutcome {
	out := s.fakeArms.StopArm(ctx, arm)
	if s.clock != nil {
		out.Cost = s.stop
		s.clock.Sleep(s.stop / 2)
	}
	return out
}

func twoArmOpts(t *testing.T) *Plan {
	t.Helper()
	o := knob.DefaultOptions(false)
	o.SetTwoArmDefaults(result.ScopeCurve)
	o.BaseTargetFile = "base.json"
	o.BatchLadder, o.ConnsLadders = knob.Ladder{10, 100}, knob.ConnsLadders{10: {4, 8}, 100: {2, 4}}
	o.CompareReps, o.CompareStop, o.CompareScope = 8, result.StopFixed, result.ScopeCurve
	o.CompareProfile = knob.ProfileOff // TestSweepTwoArmProfiles has the profiled blocks
	p, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ap(arm string, b, c int) schedule.ArmPoint {
	return schedule.ArmPoint{Arm: arm, Key: result.PointKey{Batch: b, Connections: c}}
}

func TestSweepTwoArm(t *testing.T) {
	o := twoArmOpts(t)
	thr := map[schedule.ArmPoint]float64{}
	for _, arm := range []string{result.ArmBase, result.ArmHead} {
		f := 1.0
		if arm == result.ArmHead {
			f = 0.8 // a 20% regression everywhere
		}
		thr[ap(arm, 10, 4)], thr[ap(arm, 10, 8)] = 100_000*f, 150_000*f
		thr[ap(arm, 100, 2)], thr[ap(arm, 100, 4)] = 60_000*f, 50_000*f
	}
	run := &armScripted{thr: thr}
	r := &result.Result{}
	var progress bytes.Buffer
	if err := SweepTwoArm(context.Background(), o, run, r, &progress, verdict.DefaultThresholds, nil); err != nil {
		t.Fatal(err)
	}
	// 8 first-pass points, then 2 rungs x 2 arms x 8 blocks.
	if len(run.asked) != 8+32 || len(r.Curve) != 40 {
		t.Fatalf("%d points asked, %d in the curve, want 40", len(run.asked), len(r.Curve))
	}
	for i, s := range run.asked {
		p := r.Curve[i]
		if s.Index != i+1 || p.Index != i+1 || p.Arm != s.Arm || p.Role != s.Role {
			t.Errorf("point %d: asked %+v, curve %d %s %s", i, s, p.Index, p.Role, p.Arm)
		}
		switch {
		case i < 8 && (s.Role != result.RoleSweep || s.Duration != 0):
			t.Errorf("point %d: %+v, want a first-pass point with the options' window", i, s)
		case i >= 8 && (s.Role != result.RoleCompare || s.Duration != o.Compare.Duration || s.Warmup != o.Compare.Warmup):
			t.Errorf("point %d: %+v, want a compare repeat with COMPARE_DURATION and COMPARE_WARMUP", i, s)
		case i >= 8 && !(s.Key.Connections == 8 && s.Key.Batch == 10 || s.Key.Connections == 2 && s.Key.Batch == 100):
			t.Errorf("point %d: compared at %+v, want the ceiling rungs 10x8 and 100x2", i, s.Key)
		}
	}
	if r.Config.CompareReps != 8 || r.Config.Alpha != 0.05 || r.Config.CompareDurationNs != int64(o.Compare.Duration) || r.Config.DurationNs != int64(knob.FirstPassDuration) {
		t.Errorf("config %+v", r.Config)
	}
	// The head's figures only.
	if r.Headline.Connections != 8 || r.Headline.ThroughputPerS > 150_000*0.8*1.01 {
		t.Errorf("headline %+v, want the head's 120000 at 8", r.Headline)
	}
	c := r.Comparison
	if c == nil || len(c.Points) != 2 || c.Headline.Batch != 10 || c.Headline.Verdict != result.CompareSlower || c.Points[1].Verdict != result.CompareSlower {
		t.Fatalf("comparison %+v", c)
	}
	if c.Headline.NBase != 8 || c.Headline.NHead != 8 || c.Headline.NPairs != 8 || *c.Headline.ChangePct > -19 || *c.Headline.ChangePct < -21 {
		t.Errorf("headline comparison %+v", c.Headline)
	}
	if r.NoiseFloorPct != nil {
		t.Errorf("noise floor %v from a two-arm sweep, which runs no A-A repeat", *r.NoiseFloorPct)
	}
	if !strings.Contains(progress.String(), "point 40, block 8 (clean 7 of 8 planned): ") || !strings.Contains(progress.String(), "point 1, first pass 1 of at most 8: ") {
		t.Errorf("progress:\n%s", progress.String())
	}

	var table bytes.Buffer
	if err := result.WriteTable(&table, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "table_twoarm.txt", table.Bytes())
	for _, want := range []string{"comparison, head against base: batch 10 at 8 connections: slower, -20.0%", "p = 0.008, 8 pairs); could have detected ±", " cmp head", "gate: headline", "head's headline: ", "the median of the head's 8 clean repeats at the compared rung"} {
		if !strings.Contains(flat(table.String()), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if got, want := result.OutcomeLine(r.Comparison), "✗ slower at batch 10, 8 connections (change -20.0%, 95% CI -20.1 .. -19.7, p = 0.008, 8 pairs)"; got != want {
		t.Errorf("outcome line %q, want %q", got, want)
	}
	if !strings.Contains(progress.String(), "plan: 40 points (a first pass of ") {
		t.Errorf("no plan line up front:\n%s", progress.String())
	}
}

// Sequential stopping: a clear regression stops at the first look that
// can decide it (6 blocks, Pocock), an A/A point runs every block, and
// the document's comparison re-derives the same verdicts at the levels
// of the looks where each stopped.
func TestSweepTwoArmSequential(t *testing.T) {
	o := twoArmOpts(t)
	o.Compare.Stop = result.StopPocock
	thr := map[schedule.ArmPoint]float64{}
	for _, arm := range []string{result.ArmBase, result.ArmHead} {
		f := 1.0
		if arm == result.ArmHead {
			f = 0.8
		}
		thr[ap(arm, 10, 4)], thr[ap(arm, 10, 8)] = 100_000*f, 150_000*f
		thr[ap(arm, 100, 2)], thr[ap(arm, 100, 4)] = 60_000, 50_000 // A/A
	}
	run := &armScripted{thr: thr}
	r := &result.Result{}
	if err := SweepTwoArm(context.Background(), o, run, r, &bytes.Buffer{}, verdict.DefaultThresholds, nil); err != nil {
		t.Fatal(err)
	}
	c := r.Comparison
	if c == nil || c.Stop != result.StopPocock || r.Config.CompareStop != result.StopPocock {
		t.Fatalf("comparison %+v", c)
	}
	h, aa := c.Points[0], c.Points[1]
	if h.Verdict != result.CompareSlower || h.Blocks != 6 || h.NPairs != 6 || h.Level != result.SequentialLevel(result.StopPocock, 6, 8, 0.05) {
		t.Errorf("the 20%% regression: %s after %d blocks at level %v: %s", h.Verdict, h.Blocks, h.Level, h.Reason)
	}
	if aa.Blocks != 8 || aa.Verdict == result.CompareSlower || aa.Verdict == result.CompareFaster {
		t.Errorf("A/A: %s after %d blocks", aa.Verdict, aa.Blocks)
	}
	if len(r.Curve) != 8+2*6+2*8 {
		t.Errorf("%d points, want 8 first-pass, 12 and 16 compare", len(r.Curve))
	}
	again := result.DecideComparison(r.Curve, r.Config)
	if again.Headline.Verdict != h.Verdict || again.Headline.Level != h.Level {
		t.Errorf("re-derived %+v", again.Headline)
	}
}

// The levels: a fixed design holds the last look to alpha; a sequential
// one spends it, never above alpha, and cannot stop where the smallest p
// is above what was spent.
func TestSequentialLevel(t *testing.T) {
	if l := result.SequentialLevel(result.StopFixed, 8, 8, 0.05); l != 0.05 {
		t.Errorf("fixed: %v", l)
	}
	if l := result.SequentialLevel("", 8, 8, 0.05); l != 0.05 {
		t.Errorf("a document from before sequential stopping: %v", l)
	}
	for _, stop := range []string{result.StopPocock, result.StopOBF} {
		for n := 6; n <= 16; n++ {
			l := result.SequentialLevel(stop, n, 16, 0.05)
			if l < 0 || l >= 0.05 {
				t.Errorf("%s look %d of 16: level %v", stop, n, l)
			}
		}
		if l := result.SequentialLevel(stop, 5, 16, 0.05); l != 0 {
			t.Errorf("%s: a look before the 6th stops at %v", stop, l)
		}
	}
	if l := result.SequentialLevel(result.StopOBF, 6, 16, 0.05); l != 0 {
		t.Errorf("O'Brien-Fleming spends almost nothing early: level %v at 6 of 16", l)
	}
}

// The head without a clean headline point: the comparison cannot be
// made, the run is not publishable (exit 1), yet the other batch is still
// compared and the result complete.
func TestSweepTwoArmNoCleanHeadline(t *testing.T) {
	o := twoArmOpts(t)
	thr := map[schedule.ArmPoint]float64{
		ap(result.ArmBase, 10, 4): 100, ap(result.ArmBase, 10, 8): 150,
		ap(result.ArmBase, 100, 2): 60, ap(result.ArmHead, 100, 2): 60, ap(result.ArmBase, 100, 4): 50, ap(result.ArmHead, 100, 4): 50,
	}
	r := &result.Result{}
	err := SweepTwoArm(context.Background(), o, &armScripted{thr: thr}, r, &bytes.Buffer{}, verdict.DefaultThresholds, nil)
	if !errors.Is(err, ErrNoCleanHeadline) {
		t.Fatalf("err = %v, want ErrNoCleanHeadline", err)
	}
	c := r.Comparison
	// Batch 10 is compared at the base's ceiling rung: the head fails
	// there, so it cannot be concluded. Its blocks are re-run until even
	// the budget left (16 blocks) could not bring 6 pairs: 11 blocks.
	if c == nil || c.Headline.Verdict != result.CompareCannotConclude || c.Headline.NHead != 0 || c.Headline.Head.Failed != 11 || c.Headline.Reruns != 11 {
		t.Fatalf("comparison headline %+v", c.Headline)
	}
	if len(c.Points) != 2 || c.Points[1].Verdict != result.CompareWithinNoise {
		t.Errorf("points %+v", c.Points)
	}
}

func TestSweepTwoArmInterrupted(t *testing.T) {
	o := twoArmOpts(t)
	thr := map[schedule.ArmPoint]float64{}
	for _, arm := range []string{result.ArmBase, result.ArmHead} {
		thr[ap(arm, 10, 4)], thr[ap(arm, 10, 8)], thr[ap(arm, 100, 2)], thr[ap(arm, 100, 4)] = 1, 2, 3, 4
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := &armScripted{thr: thr, cancel: cancel, at: 11}
	r := &result.Result{}
	err := SweepTwoArm(ctx, o, run, r, &bytes.Buffer{}, verdict.DefaultThresholds, nil)
	if !errors.Is(err, ErrInterrupted) || !r.Partial || len(r.Curve) != 11 || r.Comparison == nil {
		t.Fatalf("err %v, partial %v, %d points, comparison %v", err, r.Partial, len(r.Curve), r.Comparison)
	}
	if !strings.Contains(r.PartialReason, "11 of 40") {
		t.Errorf("partial reason %q", r.PartialReason)
	}
}

func TestCompareOptions(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	o := knob.DefaultOptions(false)
	if o.CompareReps != 8 || o.Alpha != 0.05 || o.CompareDuration != knob.HeadlineCompareDuration || o.TwoArm() {
		t.Fatalf("defaults %+v", o)
	}
	if err := o.ApplyEnv(env("BASE_TARGET", "b.json", "COMPARE_REPS", "7", "ALPHA", "0.01", "COMPARE_DURATION", "4", "COMPARE_WARMUP", "500ms"), nil); err != nil {
		t.Fatal(err)
	}
	if !o.TwoArm() || o.CompareReps != 7 || o.Alpha != 0.01 || o.CompareDuration != 4*time.Second || o.CompareWarmup != 500*time.Millisecond {
		t.Errorf("after env: %+v", o)
	}
	for _, tc := range []struct{ name, value string }{
		{"COMPARE_REPS", "1"}, {"COMPARE_REPS", "five"}, {"ALPHA", "0"}, {"ALPHA", "1"}, {"ALPHA", "NaN"}, {"ALPHA", "x"},
		{"COMPARE_DURATION", "-3"}, {"COMPARE_WARMUP", "soon"},
	} {
		o := knob.DefaultOptions(false)
		if err := o.ApplyEnv(env(tc.name, tc.value), nil); err == nil || !strings.Contains(err.Error(), tc.name+":") {
			t.Errorf("%s=%s: %v, want an error naming it", tc.name, tc.value, err)
		}
	}
	for _, tc := range []struct {
		edit func(*knob.Options)
		want string
	}{
		{func(o *knob.Options) { o.CompareReps = 1 }, "COMPARE_REPS (--compare-reps)"},
		{func(o *knob.Options) { o.Alpha = 1.5 }, "ALPHA (--alpha)"},
		{func(o *knob.Options) { o.CompareDuration = 0 }, "COMPARE_DURATION (--compare-duration)"},
		{func(o *knob.Options) { o.BaseTargetFile, o.HeadroomProbe = "b.json", 0.5 }, "HEADROOM_PROBE (--headroom-probe): not available in a two-arm sweep"},
	} {
		o := knob.DefaultOptions(false)
		tc.edit(&o)
		if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve = %v, want %q", err, tc.want)
		}
	}
	// Five blocks cannot reach 0.05 with the paired test: refused in a
	// two-arm sweep, naming the knob and the least that can.
	o = knob.DefaultOptions(false)
	o.BaseTargetFile, o.CompareReps = "b.json", 5
	if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), "COMPARE_REPS (--compare-reps): 5 blocks cannot reach p < 0.05") || !strings.Contains(err.Error(), "use at least 6") {
		t.Errorf("Resolve with 5 blocks = %v", err)
	}
	// The compare windows follow the scope the run will have: short
	// under the default headline scope, QUICK or not; the curve keeps
	// its longer ones.
	for _, tc := range []struct {
		quick            bool
		scope            string
		first, win, warm time.Duration
	}{
		{false, "", knob.FirstPassDuration, knob.HeadlineCompareDuration, knob.HeadlineCompareWarmup},
		{false, result.ScopeHeadline, knob.FirstPassDuration, knob.HeadlineCompareDuration, knob.HeadlineCompareWarmup},
		{true, "", knob.QuickFirstPassDuration, knob.HeadlineCompareDuration, knob.HeadlineCompareWarmup},
		{false, result.ScopeCurve, knob.FirstPassDuration, knob.CurveCompareDuration, knob.CurveCompareWarmup},
		{true, result.ScopeCurve, knob.QuickFirstPassDuration, knob.QuickCurveCompareDuration, knob.QuickCurveCompareWarmup},
	} {
		q := knob.DefaultOptions(tc.quick)
		q.SetTwoArmDefaults(tc.scope)
		if q.Duration != tc.first || q.CompareDuration != tc.win || q.CompareWarmup != tc.warm {
			t.Errorf("quick %v, scope %q: first pass %s, compare %s after %s; want %s, %s after %s", tc.quick, tc.scope, q.Duration, q.CompareDuration, q.CompareWarmup, tc.first, tc.win, tc.warm)
		}
	}
}

// COMPARE_SCOPE=headline under COMPARE_BUDGET, the default: the first
// pass searches the headline batch's rungs and runs the other batch once
// per arm at the rung found; the blocks (what the budget bought, OBF
// looks) are at that rung only, and a clear change stops them early; config.order lists the first pass as run, the search's
// points carry their step, and the notes say how each part ended.
func TestSweepTwoArmHeadlineScope(t *testing.T) {
	o := knob.DefaultOptions(false)
	o.SetTwoArmDefaults("")
	o.BaseTargetFile = "base.json"
	o.BatchLadder, o.ConnsLadders = knob.Ladder{10, 100}, knob.ConnsLadders{10: {8, 16, 32, 64, 128}, 100: {2, 4}}
	p, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	// (300 s - 12 first-pass points x 4.7 s) / 5.4 s per block.
	if p.Compare.Reps != 45 || p.Compare.Stop != result.StopOBF {
		t.Fatalf("the budget bought %d blocks, stop %s; want 45, obf", p.Compare.Reps, p.Compare.Stop)
	}
	// Lost blocks are run again while the budget lasts: no count caps
	// them at the blocks planned.
	if tp := p.twoArmPlan(nil); tp.Budget != 5*time.Minute || tp.MaxBlocks != 0 || tp.Costs.Block(tp.Compare, true, false) != 2*(2*time.Second+plancost.PointOverhead) {
		t.Errorf("schedule plan: budget %s, most blocks %d, block %s", tp.Budget, tp.MaxBlocks, tp.Costs.Block(tp.Compare, true, false))
	}
	thr := map[schedule.ArmPoint]float64{}
	for _, arm := range []string{result.ArmBase, result.ArmHead} {
		f := 1.0
		if arm == result.ArmHead {
			f = 0.8
		}
		for c, v := range map[int]float64{8: 50_000, 16: 90_000, 32: 140_000, 64: 150_000, 128: 120_000} {
			thr[ap(arm, 10, c)] = v * f
		}
		thr[ap(arm, 100, 64)] = 70_000 * f
	}
	// Each point takes its warm-up, window and refserver's boot, stop
	// and overhead, on a clock that moves only by them.
	clock := newFakeClock(0)
	run := &armScripted{thr: thr, clock: clock, plan: p, over: 400 * time.Millisecond, ready: 150 * time.Millisecond, stop: 150 * time.Millisecond}
	r := &result.Result{}
	var progress bytes.Buffer
	start := clock.Now()
	if err := SweepTwoArm(context.Background(), p, run, r, &progress, verdict.DefaultThresholds, clock); err != nil {
		t.Fatal(err)
	}
	if took := clock.Now().Sub(start); took > o.CompareBudget {
		t.Errorf("the run took %s of its %s", took, o.CompareBudget)
	}
	// Replanned from the first pass as it ran: fewer points than its
	// most buy a block or two more.
	if r.Config.CompareReps < 45 || r.Arms == nil || r.Arms.Mode != result.ArmsFresh || r.Arms.CostsFrom != schedule.CostsMeasured {
		t.Errorf("%d blocks planned, arms %+v: want 45 or more, fresh on measured costs", r.Config.CompareReps, r.Arms)
	}
	var first []result.PointKey
	for i, s := range run.asked {
		if s.Role == result.RoleSweep {
			if i%2 == 0 {
				first = append(first, s.Key)
			}
			continue
		}
		if s.Key.Batch != 10 || s.Key.Connections != 64 {
			t.Errorf("point %d compared at %+v, want batch 10 at 64 only", i, s.Key)
		}
	}
	if len(first) != len(r.Config.Order) || first[len(first)-1] != (result.PointKey{Batch: 100, Connections: 64}) {
		t.Errorf("first pass %v, config.order %v; want the search's rungs, then batch 100 at 64", first, r.Config.Order)
	}
	for i, k := range first {
		if r.Config.Order[i] != k {
			t.Errorf("config.order[%d] %v, ran %v", i, r.Config.Order[i], k)
		}
		if p := r.Curve[2*i]; k.Batch == 10 && (p.SearchStep == 0 || p.SearchReason == "") {
			t.Errorf("search point %+v has no step or reason", p)
		}
	}
	// The look that stops it: the first of the looks 6..planned whose
	// O'Brien-Fleming level the smallest p of n pairs (2/2^n) is below.
	var looks []int
	for n := 6; n <= r.Config.CompareReps; n++ {
		looks = append(looks, n)
	}
	stop := 0
	for i, lv := range stats.SequentialLevels(looks, 0.05, stats.SpendOBF) {
		if 2/math.Pow(2, float64(looks[i])) < lv {
			stop = looks[i]
			break
		}
	}
	c := r.Comparison
	if stop == 0 || c == nil || len(c.Points) != 1 || c.Headline.Connections != 64 || c.Headline.Verdict != result.CompareSlower || c.Headline.NPairs != stop {
		t.Fatalf("comparison %+v, want batch 10 at 64 slower at look %d", c, stop)
	}
	if r.Config.CompareScope != result.ScopeHeadline || r.Config.CompareBudgetNs != int64(5*time.Minute) {
		t.Errorf("config %+v", r.Config)
	}
	var table bytes.Buffer
	if err := result.WriteTable(&table, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flat(table.String()), fmt.Sprintf("stopped: decided after %d of the %d blocks planned (%d with both arms clean)", stop, r.Config.CompareReps, stop)) {
		t.Errorf("table:\n%s", table.String())
	}
	// The publisher reads it back: its checks (the comparison re-derived
	// from the curve, the config against the points) hold.
	r.Meta.Generator, r.Meta.GitRef = "ceiling-load", "0123456789abcdef"
	if data, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	} else if _, err := publish.Read(data, "headline.json"); err != nil {
		t.Errorf("publish cannot read the document: %v", err)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, w := range []string{"first pass: batch 10 searched on its ladder's rungs", fmt.Sprintf("comparison at batch 10, 64 connections: decided after %d of the %d blocks planned", stop, r.Config.CompareReps)} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
}

// A budgeted comparison sizes its blocks' windows from the first pass's
// timelines: a server whose collector takes a third of its replies for
// 200 ms every 2 s gets windows of 2 s or more, which hold a pause each,
// as long as the time left still buys the paired test's blocks with them,
// and the blocks run with them; the result records the choice and why.
// Given COMPARE_DURATION, the windows are the knob's.
func TestSweepTwoArmSizesWindows(t *testing.T) {
	collector := func(spec PointSpec) *load.Timeline {
		tl := &load.Timeline{TickNs: int64(load.TimelineTick), StartTick: 10, EndTick: 40, Counts: make([]int64, 42)}
		for i := range 40 {
			tl.Counts[i] = 10_000
			if (i+spec.Index)%20 < 2 {
				tl.Counts[i] = 6_600
			}
		}
		return tl
	}
	for _, given := range []bool{false, true} {
		o := knob.DefaultOptions(false)
		o.SetTwoArmDefaults("")
		o.BaseTargetFile = "base.json"
		o.ConnsLadders = knob.ConnsLadders{10: {8, 16, 32}}
		// QUICK's budget, whose time left after the first pass buys
		// the paired test's blocks at 3-s windows and not at 4-s ones:
		// the sizing once chose 4 s and ran no block at all. (It also
		// keeps the test short: each block's look is simulated afresh,
		// stats.FinalLevels.)
		o.CompareBudget = knob.QuickCompareBudget
		if given {
			o.CompareWindowsGiven = true
		}
		p, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
		if err != nil {
			t.Fatal(err)
		}
		thr := map[schedule.ArmPoint]float64{}
		for _, arm := range []string{result.ArmBase, result.ArmHead} {
			for c, v := range map[int]float64{8: 50_000, 16: 90_000, 32: 140_000} {
				thr[ap(arm, 10, c)] = v
			}
			for _, b := range p.Schedule.BatchLadder {
				if b != 10 {
					thr[ap(arm, b, 32)] = 100_000
				}
			}
		}
		clock := newFakeClock(0)
		run := &armScripted{thr: thr, clock: clock, plan: p, over: 400 * time.Millisecond, ready: 150 * time.Millisecond, stop: 150 * time.Millisecond, timeline: collector}
		r := &result.Result{}
		if err := SweepTwoArm(context.Background(), p, run, r, io.Discard, verdict.DefaultThresholds, clock); err != nil {
			t.Fatal(err)
		}
		var windows []time.Duration
		for _, s := range run.asked {
			if s.Role == result.RoleCompare && !slices.Contains(windows, s.Duration) {
				windows = append(windows, s.Duration)
			}
		}
		w := r.Arms.Windows
		switch {
		case given:
			if w != nil || len(windows) != 1 || windows[0] != o.CompareDuration {
				t.Errorf("COMPARE_DURATION given: windows %v, record %+v", windows, w)
			}
		case w == nil || !w.Sized || len(windows) != 1 || windows[0] < 2*time.Second || time.Duration(w.WindowNs) != windows[0] ||
			r.Config.CompareDurationNs != w.WindowNs || !strings.Contains(w.Reason, "below the default"):
			t.Errorf("sized windows %v, record %+v, config %d", windows, w, r.Config.CompareDurationNs)
		}
		if took := clock.Now().Sub(newFakeClock(0).Now()); took > o.CompareBudget {
			t.Errorf("the run took %s of %s", took, o.CompareBudget)
		}
	}
}

// COMPARE_PROFILE: a slower headline (auto) gets 3 profiled blocks after
// the compared ones, at the headline's rung, each point profiled (role
// profile: never compared), and the runner's ProfileDiff of their 6
// points is the headline's profile_diff; an unchanged one (auto) gets
// none; on profiles whatever the verdict, the budget keeping their time;
// a machine that can take no profile (perf missing) runs no profiled
// block, and the diff says why. (Profiled blocks that do not fit:
// TestTwoArmProfiledBlocks.)
func TestSweepTwoArmProfiles(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		head       float64
		budget     time.Duration
		profiled   int
		why        string
		unable     string // the runner's ProfileUnable
	}{
		{"slower, auto", knob.ProfileAuto, 0.8, 0, 6, "", ""},
		{"same, auto", knob.ProfileAuto, 1, 0, 0, "", ""},
		{"slower, off", knob.ProfileOff, 0.8, 0, 0, "", ""},
		{"on, an unchanged head, within a budget that keeps their time", knob.ProfileOn, 1, 100 * time.Second, 6, "", ""},
		{"slower, auto, no perf here", knob.ProfileAuto, 0.8, 0, 0, "no profile taken: perf is not installed", "perf is not installed"},
		{"on, no perf here, a budget that keeps nothing for them", knob.ProfileOn, 1, 100 * time.Second, 0, "no profile taken: perf is not installed", "perf is not installed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := knob.DefaultOptions(false)
			o.SetTwoArmDefaults("")
			o.BaseTargetFile = "base.json"
			o.BatchLadder, o.ConnsLadders = knob.Ladder{10}, knob.ConnsLadders{10: {8, 16}}
			o.CompareProfile, o.Out = tc.mode, filepath.Join(t.TempDir(), "out.json")
			if tc.budget > 0 {
				o.CompareBudget = tc.budget
			} else {
				o.CompareBudget, o.CompareReps = 0, 8
			}
			p, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
			if err != nil {
				t.Fatal(err)
			}
			thr := map[schedule.ArmPoint]float64{}
			for c, v := range map[int]float64{8: 90_000, 16: 140_000} {
				thr[ap(result.ArmBase, 10, c)], thr[ap(result.ArmHead, 10, c)] = v, v*tc.head
			}
			clock := newFakeClock(0)
			run := &armScripted{thr: thr, clock: clock, plan: p, over: 400 * time.Millisecond, ready: 150 * time.Millisecond, stop: 150 * time.Millisecond}
			run.unable = tc.unable
			r := &result.Result{}
			if err := SweepTwoArm(context.Background(), p, run, r, io.Discard, verdict.DefaultThresholds, clock); err != nil {
				t.Fatal(err)
			}
			var specs []PointSpec
			for i, s := range run.asked {
				if s.Profile != (s.Role == result.RoleProfile) {
					t.Errorf("point %d: role %s, profiled %v", i+1, s.Role, s.Profile)
				}
				if s.Role == result.RoleProfile {
					specs = append(specs, s)
					if i < len(run.asked)-2*plancost.ProfileBlocks {
						t.Errorf("profiled point %d before the compared blocks ended", i+1)
					}
				}
			}
			d := r.Comparison.Headline.ProfileDiff
			switch {
			case len(specs) != tc.profiled || len(run.profiled) != tc.profiled:
				t.Errorf("%d points profiled, %d diffed; want %d", len(specs), len(run.profiled), tc.profiled)
			case tc.profiled > 0 && (d == nil || d.Reason != "faked" || d.FlamegraphFile != strings.TrimSuffix(o.Out, ".json")+"-profile"):
				t.Errorf("profile diff %+v", d)
			case tc.why != "" && (d == nil || !strings.Contains(d.Reason, tc.why)):
				t.Errorf("profile diff %+v, want %q", d, tc.why)
			case tc.profiled == 0 && tc.why == "" && d != nil:
				t.Errorf("profile diff %+v unasked", d)
			}
			if c := r.Comparison.Headline; c.NPairs > 0 && c.Blocks != c.NPairs+c.Reruns {
				t.Errorf("compared blocks %d, pairs %d: the profiled ones counted?", c.Blocks, c.NPairs)
			}
			if tc.budget > 0 {
				if took := clock.Now().Sub(newFakeClock(0).Now()); took > tc.budget {
					t.Errorf("took %s of %s", took, tc.budget)
				}
			}
		})
	}
}
