package publish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// armPlan says how the head arm differs from the base at one batch size's
// compared rung in a built two-arm document.
type armPlan struct {
	factor     float64 // head throughput / base throughput
	p99Factor  float64 // head p99 / base p99 (0: 1)
	headCapped bool    // the head's repeats are generator-capped
	baseCapped bool
	headFailed int // head repeats that failed (of reps)
}

// Fixed, small jitters: the samples differ the way repeats do, and the
// document is the same on every run.
var (
	baseJitter = []float64{-0.006, 0.004, -0.002, 0.008, 0.001, -0.003, 0.005, -0.004, 0.006}
	headJitter = []float64{0.003, -0.005, 0.007, -0.001, 0.002, 0.004, -0.006, 0.001, -0.002}
)

// twoArmDoc builds a two-arm sweep document the way the harness lays one
// out: a first pass over every sweep point of head_same.json with both
// arms alternating, then reps repeats per arm at each batch's ceiling rung
// in ABBA order. Its derived fields (headline, ceilings, comparison) come
// from the harness's own Summarize and DecideComparison, and it is read
// back through Read, so it is a document the publisher accepts.
func twoArmDoc(t *testing.T, reps int, plans map[int]armPlan) *result.Result {
	t.Helper()
	r := mustRead(t, "head_same.json")
	r.Meta.Target.Name = "refserver (head)"
	r.Meta.BaseTarget = &result.Target{Name: "refserver (base)", Command: []string{"base/bin/refserver", "--addr", "127.0.0.1:0"}, URL: r.Meta.Target.URL}
	r.Config.CompareReps, r.Config.Alpha = reps, result.DefaultAlpha
	r.Config.CompareDurationNs, r.Config.CompareWarmupNs = 5_000_000_000, 1_000_000_000
	tmpl := r.Curve[0]
	var curve []result.Point
	add := func(role, arm string, batch, conns, rep int, tp float64, p99 int64, capped, failed bool) {
		p := tmpl
		p.Index, p.Role, p.Arm, p.Batch, p.Connections, p.Rep = len(curve), role, arm, batch, conns, rep
		p.ThroughputPerS, p.LatencyNs.P99 = tp, p99
		p.Verdict, p.LowerBound = result.VerdictServerSaturated, false
		if capped {
			p.Verdict, p.LowerBound = result.VerdictGeneratorCapped, true
			p.VerdictReason = "generator 0.99 of 1 core, server 2.10 of 3"
		}
		if failed {
			p = result.Point{Index: p.Index, Role: role, Arm: arm, Batch: batch, Connections: conns, Rep: rep,
				Status: result.StatusFailed, Verdict: result.VerdictFailed, FailReason: "server exited with status 2"}
		}
		curve = append(curve, p)
	}
	rung := map[int]result.Point{}
	for _, p := range r.Curve {
		if p.Role != result.RoleSweep {
			continue
		}
		pl := plans[p.Batch]
		add(result.RoleSweep, result.ArmBase, p.Batch, p.Connections, 0, p.ThroughputPerS, p.LatencyNs.P99, pl.baseCapped, false)
		add(result.RoleSweep, result.ArmHead, p.Batch, p.Connections, 0, p.ThroughputPerS*pl.factor, p.LatencyNs.P99, pl.headCapped, false)
		if best, ok := rung[p.Batch]; !ok || p.ThroughputPerS > best.ThroughputPerS {
			rung[p.Batch] = p
		}
	}
	for _, b := range r.Config.BatchLadder {
		pl, top := plans[b], rung[b]
		p99f := pl.p99Factor
		if p99f == 0 {
			p99f = 1
		}
		for i := range reps {
			order := []string{result.ArmBase, result.ArmHead}
			if i%2 == 1 {
				order = []string{result.ArmHead, result.ArmBase}
			}
			for _, arm := range order {
				if arm == result.ArmBase {
					add(result.RoleCompare, arm, b, top.Connections, i, top.ThroughputPerS*(1+baseJitter[i]),
						int64(float64(top.LatencyNs.P99)*(1+baseJitter[i])), pl.baseCapped, false)
				} else {
					add(result.RoleCompare, arm, b, top.Connections, i, top.ThroughputPerS*pl.factor*(1+headJitter[i]),
						int64(float64(top.LatencyNs.P99)*p99f*(1+headJitter[i])), pl.headCapped, i < pl.headFailed)
				}
			}
		}
	}
	r.Curve = curve
	r.Config.Order = nil
	for _, p := range curve {
		r.Config.Order = append(r.Config.Order, result.PointKey{Batch: p.Batch, Connections: p.Connections, Rep: p.Rep})
	}
	r.Summarize()
	r.Comparison = result.DecideComparison(r.Curve, r.Config)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(data, "two-arm")
	if err != nil {
		t.Fatalf("the built two-arm document does not read back: %v", err)
	}
	return back
}

// The two-arm documents of the golden tests.
func twoArmSlower(t *testing.T) *result.Result {
	return twoArmDoc(t, result.DefaultCompareReps, map[int]armPlan{10: {factor: 0.876, p99Factor: 1.6}, 100: {factor: 1.004}})
}

func twoArmSame(t *testing.T) *result.Result {
	return twoArmDoc(t, result.DefaultCompareReps, map[int]armPlan{10: {factor: 1.0}, 100: {factor: 1.0}})
}

func twoArmBounds(t *testing.T) *result.Result {
	return twoArmDoc(t, result.DefaultCompareReps, map[int]armPlan{
		10:  {factor: 1.002, baseCapped: true, headFailed: 2},
		100: {factor: 1.3, headCapped: true},
	})
}

// TestTwoArmFixtures keeps testdata/two_arm_*.json (the example's and the
// command line tests' inputs) equal to the built documents; -update
// rewrites them.
func TestTwoArmFixtures(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]*result.Result{
		"two_arm_slower.json": twoArmSlower(t),
		"two_arm_same.json":   twoArmSame(t),
	} {
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, '\n')
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want, err := os.ReadFile(path); err != nil || !bytes.Equal(want, data) {
			t.Errorf("%s is not the built document (err %v); refresh with go test ./publish -update", path, err)
		}
	}
}

// A run whose blocks a COMPARE_BUDGET planned says under the title why
// they stopped (result.WhyStopped), with what they could detect and how
// long the run took; a run decided early at a look says so, and its
// comment warns of no samples short of those planned.
func TestTwoArmBudgetSubtitle(t *testing.T) {
	r := twoArmSlower(t)
	r.Config.CompareBudgetNs = int64(5 * time.Minute)
	r.Meta.StartedAt = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r.Meta.FinishedAt = r.Meta.StartedAt.Add(4*time.Minute + 12*time.Second)
	c, err := Compare(nil, r, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md := Render(c, RenderOptions{})
	want := fmt.Sprintf("blocks at the headline's rung with one look at the end: COMPARE_BUDGET 5m0s bought %d of %d blocks planned at the headline's rung", c.Stats.Headline.Blocks, c.Stats.Reps)
	if !strings.Contains(md, want) || !strings.Contains(md, "the run took 4m12s of its COMPARE_BUDGET 5m0s") {
		t.Errorf("the comment lacks %q:\n%s", want, md)
	}

	// Decided at a look, short of the blocks planned.
	r.Config.CompareReps = 39
	r.Ended = nil
	for _, cp := range r.Comparison.Points {
		r.Ended = append(r.Ended, result.EndedAt{Batch: cp.Batch, Connections: cp.Connections,
			Ended: result.Ended{Kind: result.EndDecided, Text: "decided after 8 of the 39 blocks planned (8 with both arms clean)", Blocks: 8, CleanBlocks: 8}})
	}
	r.Arms = &result.ArmsRecord{Mode: result.ArmsFresh}
	r.Summarize()
	if c, err = Compare(nil, r, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	md = Render(c, RenderOptions{})
	if !strings.Contains(md, "decided after 8 of the 39 blocks planned") || strings.Contains(md, "Too few samples") || strings.Contains(md, "cut short") {
		t.Errorf("a run decided early:\n%s", md)
	}
}
