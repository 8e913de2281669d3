//go:build e2e

package harness_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// profiledBlocks runs n blocks of base and head through the harness's
// real point runner, each point profiled (PointSpec.Profile), the arms
// alternating which goes first, and returns the points as the sweep
// records them.
func profiledBlocks(t *testing.T, base, head target.Spec, n int) []result.Point {
	t.Helper()
	o := twoArmOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {32}})
	pr, err := harness.NewProcRunner(plan(t, o, head, &base), agentside.Env{}, harness.ProcOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pr.SetBase(base)
	var pts []result.Point
	for i := range n {
		arms := []string{result.ArmBase, result.ArmHead}
		if i%2 == 1 {
			slices.Reverse(arms)
		}
		for _, arm := range arms {
			idx := len(pts) + 1
			k := result.PointKey{Batch: 10, Connections: 32, Rep: i + 1}
			const window = time.Second
			out := pr.RunPoint(context.Background(), harness.PointSpec{Index: idx, Role: result.RoleCompare, Key: k, Arm: arm,
				Duration: window, Warmup: 300 * time.Millisecond, Profile: true})
			p := verdict.Point(idx, result.RoleCompare, k, out, noCapThresholds())
			p.Arm = arm
			cp := p.CPUProfile
			switch {
			case p.Status != result.StatusOK:
				t.Logf("point %d (%s) failed: %s", idx, arm, p.FailReason)
			case cp == nil || cp.File == "" || cp.Tool != result.ProfilerPerf:
				t.Fatalf("point %d (%s): profile %+v", idx, arm, cp)
			case time.Duration(cp.DurationNs) < window/4 || time.Duration(cp.DurationNs) > window*3/2:
				// The span is perf's acknowledged enable to its
				// acknowledged disable, each answered within what a busy
				// machine lets it: about the window (0.82-1.08 s of 1 s
				// on this VM at a load average of 10), never a multiple.
				t.Errorf("point %d (%s): perf sampled %v of a %v window", idx, arm, time.Duration(cp.DurationNs), window)
			case !(cp.Messages > 0) || math.Abs(cp.Messages-p.ThroughputPerS*time.Duration(cp.DurationNs).Seconds()) > 1e-6*cp.Messages:
				t.Errorf("point %d (%s): %.0f messages profiled over %v at %.0f msg/s", idx, arm, cp.Messages, time.Duration(cp.DurationNs), p.ThroughputPerS)
			default:
				t.Logf("point %d (%s): %.0f msg/s, server CPU %.2f cores, perf sampled %v (pids %v)", idx, arm, p.ThroughputPerS, p.ServerCPU.MeanCores, time.Duration(cp.DurationNs), cp.Pids)
			}
			pts = append(pts, p)
		}
	}
	return pts
}

// TestProfileDiffOfPlantedSpin: refserver --spin 2us against refserver,
// three profiled blocks through the real point runner and perf: spin is
// among the three frames that grew most, and the flame graph is written;
// an A/A pair (refserver against itself) lists no frame beyond its noise.
func TestProfileDiffOfPlantedSpin(t *testing.T) {
	needProcs(t)
	if why := cpuprof.Check(cpuprof.Real()).Reason; why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: perf cannot profile here: %s (.ci/run installs linux-perf)", why)
		}
		t.Skipf("perf cannot profile here: %s (.ci/run installs linux-perf)", why)
	}
	ref := refTarget(t)
	spin := ref
	spin.Command = append(slices.Clone(ref.Command), "--spin", "2us")
	for _, c := range []struct {
		name string
		head target.Spec
	}{{"spin", spin}, {"A/A", ref}} {
		pts := profiledBlocks(t, ref, c.head, 3)
		dir := t.TempDir()
		d := cpuprof.New(cpuprof.Real()).Diff(context.Background(), cpuprof.DiffInput{Points: pts, Dir: filepath.Join(dir, "profile"), RelTo: dir, Title: c.name})
		if d.Reason != "" {
			t.Fatalf("%s: no diff: %s", c.name, d.Reason)
		}
		grew, shrank := d.Listed(result.FrameGrew, 3), d.Listed(result.FrameShrank, 3)
		for _, f := range d.Frames[:min(8, len(d.Frames))] {
			t.Logf("%s: %-12s %-70.70s %9.1f -> %9.1f ns/msg z %.1f", c.name, f.Verdict, f.Function, f.BaseNs, f.HeadNs, f.Z)
		}
		t.Logf("%s: base %.0f, head %.0f CPU ns/msg; samples %d/%d, unsymbolised %d/%d; notes %q", c.name,
			d.Base.CPUNsPerMessage, d.Head.CPUNsPerMessage, d.Base.Samples, d.Head.Samples, d.Base.Unsymbolised, d.Head.Unsymbolised, d.Notes)
		if len(d.Base.Points) < 2 || len(d.Head.Points) < 2 {
			t.Fatalf("%s: profiled points %v and %v: the rule needs two an arm", c.name, d.Base.Points, d.Head.Points)
		}
		if c.name == "spin" {
			if !slices.ContainsFunc(grew, func(f result.ProfileFrame) bool { return strings.HasSuffix(f.Function, "refserver.spin") }) {
				t.Errorf("spin is not among the 3 frames that grew most: %+v", grew)
			}
			continue
		}
		if len(grew)+len(shrank) > 0 {
			t.Errorf("A/A lists frames beyond their noise: grew %+v, shrank %+v", grew, shrank)
		}
	}
}
