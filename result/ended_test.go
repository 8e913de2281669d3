package result

import (
	"strings"
	"testing"
)

// A headline rung the first pass found, whose blocks never ran (the time
// left could not buy the 6 the paired test needs), says why: the blocks'
// end at that rung, not "the first pass found no rung", which was false.
// A headline batch the run never reached says the run's reason, kept at
// connections 0.
func TestNeverComparedHeadlineSaysWhy(t *testing.T) {
	const short = "COMPARE_BUDGET 2m0s cannot buy the 6 blocks the paired test needs"
	first := []Point{
		{Index: 1, Role: RoleSweep, Arm: ArmBase, Batch: 10, Connections: 32, Status: StatusOK, Clean: true, ThroughputPerS: 1000},
		{Index: 2, Role: RoleSweep, Arm: ArmHead, Batch: 10, Connections: 32, Status: StatusOK, Clean: true, ThroughputPerS: 1000},
	}
	for _, tc := range []struct {
		name  string
		ended []EndedAt
		want  string
	}{
		{"at its rung", []EndedAt{{Batch: 10, Connections: 32, Ended: Ended{Kind: EndNoTime, Text: short}}}, "cannot conclude: " + short},
		{"the run's", []EndedAt{{Batch: 10, Ended: Ended{Kind: EndNoTime, Text: short}}}, "cannot conclude: " + short},
		{"none", nil, "the first pass found no rung to compare there"},
	} {
		r := &Result{Curve: first, Ended: tc.ended, Config: Config{HeadlineBatch: 10, CompareReps: 8, Alpha: DefaultAlpha, CompareStop: StopOBF}}
		c := ComparisonOf(r)
		if c == nil {
			t.Fatalf("%s: no comparison", tc.name)
		}
		if h := c.Headline; h.Verdict != CompareCannotConclude || !strings.Contains(h.Reason, tc.want) || (tc.ended != nil) != (h.Ended != nil) {
			t.Errorf("%s: %s, %q, ended %+v; want cannot_conclude saying %q", tc.name, h.Verdict, h.Reason, h.Ended, tc.want)
		}
	}
}
