//go:build e2e

package harness_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

// slowTarget is refserver made slow to boot and to stop, as a Pusher or
// Node server is: it listens ready after 1 s, and drains 2 s after
// SIGTERM (--ready-delay, --stop-delay; the server takes 2 s and
// 4 s, halved here for the lane's time).
func slowTarget(t *testing.T) target.Spec {
	t.Helper()
	tg := refTarget(t)
	tg.Name = "refserver-slow"
	tg.Command = append(slices.Clone(tg.Command), "--ready-delay", "1s", "--stop-delay", "2s")
	tg.StopGrace = "6s"
	return tg
}

// slowOptions is the default comparison (the headline's rung, COMPARE_
// ARMS=auto, sized windows) on a two-rung ladder, under budget.
func slowOptions(t *testing.T, budget time.Duration) *testSweep {
	t.Helper()
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {16, 32}})
	o.BaseTargetFile = "base"
	o.SetTwoArmDefaults(result.ScopeHeadline)
	o.Duration, o.Warmup = time.Second, 300*time.Millisecond
	o.CompareBudget = budget
	return o
}

// A server that boots in 1 s and drains for 2 s, compared with a
// planted regression under the default rule: the first block times its
// boot and stop, the arms run warm (kept up, frozen between their
// points, booted afresh after the first pass and every few blocks), every
// compared point measures a thawed server, the run ends within its budget
// with the verdict the servers deserve, the slower one profiled after
// its verdict, and no server outlives it.
//
// The same server on both arms is not run here: what an A/A run of the
// default rule may call is its false-alarm rate, measured by resampling
// recorded runs (benchmark/comparesim), and the schedule's warm-arm rules
// (when to boot afresh, what to freeze, what the budget buys) are the
// unit lane's (warmarm_test.go, twoarm_test.go), with a fake server.
func TestTwoArmSlowServerWarmArms(t *testing.T) {
	needProcs(t)
	slow := slowTarget(t)
	spin := slow
	spin.Name = "refserver-slow-spin"
	spin.Command = append(slices.Clone(slow.Command), "--spin", "30us")
	// The run ends when the paired test decides, and its profiled blocks
	// (about 16 s) follow within the budget: 90 s leave them room after
	// a few blocks lost to the hypervisor's steal are run again (a CI
	// machine's decided at 68 s of 75 s).
	o := slowOptions(t, 90*time.Second)
	r, table, err := runTwoArm(t, o, slow, spin)
	skipIfContended(t, r, err)
	a := r.Arms
	if a == nil || a.Mode != result.ArmsWarm || a.CostsFrom != "measured" {
		t.Fatalf("arms %+v: want warm, on measured costs", a)
	}
	// Lower bounds only: a busy machine makes them later.
	if a.Base.ReadyNs < int64(time.Second) || a.Head.StopNs < int64(2*time.Second) || a.Base.Boots < 2 {
		t.Errorf("costs base %+v head %+v: want ready 1 s and stop 2 s or more, booted twice or more", a.Base, a.Head)
	}
	// The budget holds the whole run (the last attempt's, when
	// contention made the test run it again); the harness's own start
	// and the result's last write lie outside it.
	if d, ok := r.Took(); !ok || d > o.CompareBudget+5*time.Second {
		t.Errorf("the run took %s of its %s budget", d, o.CompareBudget)
	}
	for _, p := range r.Curve {
		if p.Role != result.RoleCompare {
			continue
		}
		if p.ReadyNs != 0 || p.StopNs != 0 {
			t.Errorf("point %d booted its own server in warm arms", p.Index)
		}
		// A server left frozen in its window answers nothing: the
		// point would fail, or count no message, or its server would
		// spend no CPU.
		if p.Status != result.StatusOK || p.Errors != 0 || !(p.ThroughputPerS > 0) || !(p.ServerCPU.MeanCores > 0.05) {
			t.Errorf("point %d (%s): %s, %d errors, %.0f msg/s, server CPU %.2f cores: want a thawed server answering",
				p.Index, p.Arm, p.Status, p.Errors, p.ThroughputPerS, p.ServerCPU.MeanCores)
		}
	}
	h := r.Comparison.Headline
	t.Logf("%s; %s", result.ComparedLine(h, r.Comparison.Confidence), result.WhyStopped(r))
	if h.Ended == nil || !strings.Contains(flatText(table), "stopped: "+h.Ended.Text[:20]) {
		t.Errorf("why the blocks stopped is not in the table: %+v\n%s", h.Ended, table)
	}
	switch {
	case h.NPairs < 6 && contendedAt(r, 10):
		notQuiet(t, "%d pairs, the others on contended CPUs: %s", h.NPairs, contendedReasons(r))
	case h.Verdict != result.CompareSlower:
		t.Errorf("A/B called %s: %s", h.Verdict, h.Reason)
	}
	// A slower headline is profiled (COMPARE_PROFILE=auto) in blocks
	// after those that decided, on the warm arms: the planted spin grows
	// most.
	d := h.ProfileDiff
	switch {
	case cpuprof.Check(cpuprof.Real()).Reason != "":
		notQuiet(t, "perf cannot profile here: %s (.ci/run installs linux-perf)", cpuprof.Check(cpuprof.Real()).Reason)
	case d != nil && strings.Contains(d.Reason, "did not fit") && contendedAt(r, 10):
		// Blocks lost to other work spent the budget the profiled
		// blocks would have had: rightly none.
		notQuiet(t, "%s, the blocks having run on contended CPUs: %s", d.Reason, contendedReasons(r))
	case d == nil || d.Reason != "":
		t.Errorf("no profile diff: %+v", d)
	default:
		grew := d.Listed(result.FrameGrew, 3)
		if !slices.ContainsFunc(grew, func(f result.ProfileFrame) bool { return strings.HasSuffix(f.Function, "refserver.spin") }) {
			t.Errorf("spin is not among the 3 frames that grew most: %+v", grew)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(o.Out), d.FlamegraphFile)); err != nil {
			t.Errorf("flame graph: %v", err)
		}
		if n := slices.IndexFunc(r.Curve, func(p result.Point) bool { return p.Role == result.RoleProfile }); n < 0 ||
			slices.ContainsFunc(r.Curve[n:], func(p result.Point) bool { return p.Role == result.RoleCompare }) {
			t.Errorf("the profiled points do not follow the compared blocks")
		}
		checkProfiledWindows(t, r)
	}
	checkNoneLeft(t, "--stop-delay")
}

// checkProfiledWindows: each profiled point's perf sampled about its
// window, never a multiple of it (the span is perf's acknowledged enable
// to its acknowledged disable, each answered within what a busy machine
// lets it), and the messages it divides by are the point's throughput
// over that span. Which frames a diff lists is the rule's, on recorded
// blocks (internal/profdiff's TestSpinLeadsTheGrowth, TestAAListsNothing).
func checkProfiledWindows(t *testing.T, r *result.Result) {
	t.Helper()
	window := time.Duration(r.Config.CompareDurationNs)
	if r.Arms != nil && r.Arms.Windows != nil && r.Arms.Windows.WindowNs > 0 {
		window = time.Duration(r.Arms.Windows.WindowNs)
	}
	for _, p := range r.Curve {
		if p.Role != result.RoleProfile || p.Status != result.StatusOK {
			continue
		}
		cp := p.CPUProfile
		switch {
		case cp == nil || cp.File == "" || cp.Tool != result.ProfilerPerf:
			t.Errorf("point %d (%s): profile %+v", p.Index, p.Arm, cp)
		case time.Duration(cp.DurationNs) < window/4 || time.Duration(cp.DurationNs) > window*3/2:
			t.Errorf("point %d (%s): perf sampled %v of a %v window", p.Index, p.Arm, time.Duration(cp.DurationNs), window)
		case !(cp.Messages > 0) || math.Abs(cp.Messages-p.ThroughputPerS*time.Duration(cp.DurationNs).Seconds()) > 1e-6*cp.Messages:
			t.Errorf("point %d (%s): %.0f messages profiled over %v at %.0f msg/s", p.Index, p.Arm, cp.Messages, time.Duration(cp.DurationNs), p.ThroughputPerS)
		}
	}
}

// checkNoneLeft fails when a process whose command line holds mark is
// still running.
func checkNoneLeft(t *testing.T, mark string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), mark) {
			t.Errorf("%s outlived the sweep: %s", filepath.Dir(f), strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}
