package result

import (
	"bytes"
	"strings"
	"testing"
)

// TestTableSaysARefusalOnce: a refusal that stopped the sweep is the
// point's failure, the partial result's reason and a warning; the table
// says it once, on its PARTIAL RESULT line, and the point's line and the
// warnings point there (it was printed 4 times, 480 characters each).
func TestTableSaysARefusalOnce(t *testing.T) {
	why := "the generator's preflight was refused, as it would be at every point: " + strings.Repeat("4009 invalid signature ", 20)
	r := &Result{Partial: true, PartialReason: "stopped after point 1: " + why, Config: Config{BatchLadder: []int{10}, HeadlineBatch: 10},
		Curve: []Point{{Index: 1, Role: RoleSweep, Batch: 10, Connections: 32, Status: StatusFailed, Verdict: VerdictFailed, FailReason: why}}}
	r.Warn(r.PartialReason)
	r.Summarize()
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(b.String()), " ")
	if n := strings.Count(flat, strings.TrimSpace(why)); n != 1 {
		t.Errorf("the refusal is printed %d times, want once:\n%s", n, b.String())
	}
	if !strings.Contains(b.String(), "point 1 failed: why is on the PARTIAL RESULT line above") {
		t.Errorf("the point's line does not point to the reason:\n%s", b.String())
	}
}

// TestLadderTopOnlyForALadderClimbed: "widen CONNS_LADDER_N" is advice
// for a batch whose ladder was climbed, never for one measured at a
// single rung (a two-arm sweep runs its other batches once, at the rung
// the headline's search found).
func TestLadderTopOnlyForALadderClimbed(t *testing.T) {
	pt := func(batch, conns int, tput float64) Point {
		return Point{Role: RoleSweep, Arm: ArmHead, Batch: batch, Connections: conns, Status: StatusOK, Clean: true, ThroughputPerS: tput, Verdict: VerdictServerSaturated}
	}
	r := &Result{Config: Config{BatchLadder: []int{10, 512}, HeadlineBatch: 10, ConnsLadders: map[string][]int{"10": {32, 64}, "512": {64}}},
		Curve: []Point{pt(10, 32, 100), pt(10, 64, 120), pt(512, 64, 300)}}
	r.Summarize()
	var warned []string
	for _, w := range r.Warnings {
		if strings.Contains(w, "widen CONNS_LADDER") {
			warned = append(warned, w)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "CONNS_LADDER_10") {
		t.Errorf("ladder warnings %q; want batch 10's alone", warned)
	}
	if r.Ceilings[1].AtLadderTop {
		t.Errorf("batch 512, measured at one rung, is marked at its ladder's top")
	}
}
