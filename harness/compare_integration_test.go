//go:build e2e

package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/duet"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// twoArmOptions is a QUICK-sized two-arm sweep: one rung per batch, 1 s
// points, 6 blocks per compared point.
func twoArmOptions(t *testing.T, batches knob.Ladder, conns knob.ConnsLadders) *testSweep {
	t.Helper()
	o := miniOptions(t, batches, conns)
	o.BaseTargetFile = "base" // the runner gets the spec itself
	// The fewest blocks that can reach p < alpha (6 at 0.05), not the
	// default 8: the planted changes here are -75%, and a cluster's
	// point costs 9 s of boot and stop.
	o.Alpha = result.DefaultAlpha
	o.CompareReps = stats.MinPairs(o.Alpha)
	// Every batch's rung, COMPARE_REPS blocks: these tests compare
	// several batch sizes. The default scope (the headline's rung under
	// a budget) is the action's end-to-end test's
	// (cmd/ceiling/action_e2e_test.go).
	o.CompareScope = result.ScopeCurve
	o.CompareDuration, o.CompareWarmup = time.Second, 300*time.Millisecond
	// A slower headline is profiled after its verdict by default, in
	// blocks of role profile after the compared ones: the warm-arm
	// sweep's subject (warmarm_e2e_test.go), not these.
	o.CompareProfile = knob.ProfileOff
	return o
}

// noCapThresholds never judge the generator capped. On this shared test
// machine other processes starve the generator's CPU, the verdict rule
// rightly calls such points lower bounds, and the comparison then rightly
// says cannot_conclude; that path is unit-tested (TestComparePoint) and
// the generator-capped call has its own tests. Here the subject is the
// comparison of two servers, so it must reach a verdict.
func noCapThresholds() verdict.Thresholds {
	th := verdict.DefaultThresholds
	th.GeneratorBusy = 2 // never reached: no closed-loop cap call
	return th
}

func runTwoArm(t *testing.T, o *testSweep, base, head target.Spec) (*result.Result, string, error) {
	t.Helper()
	return retryContended(t, func() (*result.Result, string, error) {
		var stdout, stderr bytes.Buffer
		p := plan(t, o, head, &base)
		defer checkPlanUnchanged(t, p, plan(t, o, head, &base))
		_, err := harness.Run(context.Background(), p, harness.RunConfig{
			Version: "test", Stdout: &stdout, Stderr: &stderr,
			Thresholds: noCapThresholds(), Getenv: func(string) string { return "" },
		})
		t.Logf("stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
		data, rerr := os.ReadFile(o.Out)
		if rerr != nil {
			t.Fatalf("result not written: %v (sweep error %v)", rerr, err)
		}
		if _, err := publish.Read(data, o.Out); err != nil {
			t.Errorf("publish.Read rejects the two-arm document: %v", err)
		}
		var r result.Result
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("result: %v", err)
		}
		return &r, stdout.String(), err
	})
}

// checkTwoArmCurve: every point ran on its arm in the documented order,
// the first pass before the compare blocks, each block both arms of one
// key back to back, and between the blocks asked and the most the
// re-runs may add.
func checkTwoArmCurve(t *testing.T, r *result.Result, firstPass, compared int) {
	t.Helper()
	// A batch with no rung clean in both arms' first pass is not compared
	// (a warning says so): on a machine whose CPUs other work shared, that
	// is the harness's correct answer, not a short comparison.
	if r.Comparison != nil && len(r.Comparison.Points) < compared && firstPassContended(r) {
		notQuiet(t, "%d compared points, not %d: a batch had no clean first-pass rung in both arms, the machine was not quiet:\n%s",
			len(r.Comparison.Points), compared, contendedReasons(r))
	}
	reps := r.Config.CompareReps
	cmp := len(r.Curve) - 2*firstPass
	if cmp < 2*compared*min(reps, stats.MinPairs(r.Config.Alpha)) || cmp > 2*compared*schedule.MaxBlocks(reps) || cmp%2 != 0 {
		t.Fatalf("%d points: want %d first-pass and between %d and %d compare repeats in blocks of two", len(r.Curve), 2*firstPass,
			2*compared*reps, 2*compared*schedule.MaxBlocks(reps))
	}
	for i, p := range r.Curve {
		wantRole := result.RoleSweep
		if i >= 2*firstPass {
			wantRole = result.RoleCompare
		}
		if p.Role != wantRole || (p.Arm != result.ArmBase && p.Arm != result.ArmHead) || p.Index != i+1 {
			t.Errorf("point %d: role %s arm %q index %d", i+1, p.Role, p.Arm, p.Index)
		}
		// Pairs: the two arms of one key, one after the other.
		if i%2 == 1 {
			q := r.Curve[i-1]
			if q.Arm == p.Arm || q.Batch != p.Batch || q.Connections != p.Connections || q.Rep != p.Rep {
				t.Errorf("points %d and %d are not both arms of one point: %s %d/%d and %s %d/%d",
					i, i+1, q.Arm, q.Batch, q.Connections, p.Arm, p.Batch, p.Connections)
			}
		}
	}
	if r.Meta.BaseTarget == nil || r.Config.CompareReps < 2 || r.Config.Alpha != result.DefaultAlpha {
		t.Errorf("meta.base_target %v, config %+v", r.Meta.BaseTarget, r.Config)
	}
}

// contendedReasons lists every contended point's reason: the processes
// that took the pinned CPUs, by name.
func contendedReasons(r *result.Result) string {
	var why []string
	for _, p := range r.Curve {
		if p.Contended {
			why = append(why, fmt.Sprintf("point %d (%s): %s", p.Index, p.Arm, result.Contention(p.ServerCPU, p.GeneratorCPU)))
		}
	}
	return strings.Join(why, "\n")
}

// checkAttributed: every contended point names the processes that did
// it. Contention is found by attribution, never by a residual that holds
// the sweep's own work.
func checkAttributed(t *testing.T, r *result.Result) {
	t.Helper()
	for _, p := range r.Curve {
		if p.Contended && !strings.Contains(result.Contention(p.ServerCPU, p.GeneratorCPU), "(pid ") &&
			!strings.Contains(result.Contention(p.ServerCPU, p.GeneratorCPU), "stole") {
			t.Errorf("point %d contended without a named process: %s (server %+v, generator %+v)", p.Index,
				result.Contention(p.ServerCPU, p.GeneratorCPU), p.ServerCPU.Attribution, p.GeneratorCPU.Attribution)
		}
	}
}

// contendedAt says whether any compare repeat at batch ran on contended
// CPUs.
// firstPassContended reports whether a point of the two-arm sweep's first
// pass ran on contended CPUs.
func firstPassContended(r *result.Result) bool {
	return slices.ContainsFunc(r.Curve, func(p result.Point) bool {
		return p.Role == result.RoleSweep && p.Contended
	})
}

func contendedAt(r *result.Result, batch int) bool {
	return slices.ContainsFunc(r.Curve, func(p result.Point) bool {
		return p.Role == result.RoleCompare && p.Batch == batch && p.Contended
	})
}

func fmtPtr(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%.4g", *v)
}

// TestDuetSimulatedSplit runs a duet's mechanics on a machine without the
// CPUs for two true halves: half a is server 1 + generator 0, half b
// server 0 + generator 1 (ALLOW_OVERLAP), so each arm's server shares its
// CPU with the other arm's generator. What it checks is the mechanics,
// not a duet's accuracy (docs/compare.md, "Duet mode"): each block's two
// repeats ran at once, on opposite halves, the halves swapped from block
// to block, the partner's share is recorded and not taken for a foreign
// task, and a planted regression still reads slower.
func TestDuetSimulatedSplit(t *testing.T) {
	needProcs(t)
	ref := refTarget(t)
	head := ref
	head.Name = "refserver-spin"
	head.Command = append(slices.Clone(ref.Command), "--spin", "30us")
	o := twoArmOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {32}})
	o.CompareMode, o.AllowOverlap = knob.ModeDuet, true
	o.DuetServerCPUs, o.DuetGeneratorCPUs = pinning.CPUSet{0}, pinning.CPUSet{1}
	if _, err := harness.ResolveKnobs(o.Options, pinning.CPUSet{0, 1}); err != nil {
		t.Fatal(err)
	}
	r, table, err := runTwoArm(t, o, ref, head)
	skipIfContended(t, r, err)
	if err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatalf("duet: %v", err)
	}
	if r.Config.CompareMode != knob.ModeDuet || fmt.Sprint(r.Meta.Pinning.DuetServer, r.Meta.Pinning.DuetGenerator) != "[0] [1]" {
		t.Fatalf("config.compare_mode %q, duet halves %v / %v", r.Config.CompareMode, r.Meta.Pinning.DuetServer, r.Meta.Pinning.DuetGenerator)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "simulated split") }) {
		t.Errorf("notes do not say the split is simulated: %q", r.Notes)
	}
	checkTwoArmCurve(t, r, 1, 1)
	var halfAArms []string
	for i := 0; i+1 < len(r.Curve); i += 2 {
		a, b := r.Curve[i], r.Curve[i+1]
		if a.Half != duet.HalfA || b.Half != duet.HalfB || a.Rep != b.Rep || a.Arm == b.Arm {
			t.Fatalf("points %d and %d: halves %q %q, reps %d %d, arms %s %s: want one block on halves a and b", a.Index, b.Index, a.Half, b.Half, a.Rep, b.Rep, a.Arm, b.Arm)
		}
		if a.Role == result.RoleCompare {
			halfAArms = append(halfAArms, a.Arm)
		}
		// Both windows began on one instant: each generator creates
		// its measure marker when its window starts.
		var starts []time.Time
		for _, p := range []result.Point{a, b} {
			m, err := filepath.Glob(filepath.Join(o.WorkDir, fmt.Sprintf("point-%03d-*", p.Index), "measure.marker"))
			if err != nil || len(m) != 1 {
				t.Fatalf("point %d: measure marker %v %v", p.Index, m, err)
			}
			fi, err := os.Stat(m[0])
			if err != nil {
				t.Fatal(err)
			}
			starts = append(starts, fi.ModTime())
		}
		if d := starts[0].Sub(starts[1]).Abs(); d > 250*time.Millisecond {
			t.Errorf("points %d and %d: windows began %v apart, want one instant", a.Index, b.Index, d)
		}
		for _, p := range []result.Point{a, b} {
			at := p.ServerCPU.Attribution
			if at == nil || at.Partner <= 0 {
				t.Errorf("point %d: the partner's share of the shared server CPU is not recorded: %+v", p.Index, at)
			}
		}
	}
	for k := 1; k < len(halfAArms); k++ {
		if halfAArms[k] == halfAArms[k-1] {
			t.Errorf("blocks %d and %d both ran the %s arm on half a: the halves did not swap (%v)", k-1, k, halfAArms[k], halfAArms)
		}
	}
	checkAttributed(t, r)
	h := r.Comparison.Headline
	t.Logf("duet: %s", result.ComparedLine(h, r.Comparison.Confidence))
	if h.NPairs < stats.MinPairs(o.Alpha) && contendedAt(r, 10) {
		notQuiet(t, "duet: %d pairs after %d blocks, the others ran on contended CPUs: %s", h.NPairs, h.Blocks, h.Reason)
	}
	if h.Verdict != result.CompareSlower {
		t.Errorf("a 30 µs spin per message in a duet was called %s: %s\n%s", h.Verdict, h.Reason, table)
	}
}
