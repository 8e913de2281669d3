//go:build e2e

package harness_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/load/scenario/fanout"
)

// TestSweepStopsAtNotOneCluster: three refserver nodes that are not one
// cluster (no --cluster) fail fanout's preflight, as they would at every
// point: the sweep stops after the first point with ErrRefused, the whole
// reason (its hint last) in the result and on the terminal, and the
// servers the generator named by address are named by the target's
// names. Nothing is left running.
func TestSweepStopsAtNotOneCluster(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {6, 12}})
	o.Scenario = fanout.Name
	tg := refClusterTarget(t, "refserver-cluster.json")
	for i, s := range tg.Servers {
		if k := slices.Index(s.Command, "--cluster"); k >= 0 {
			tg.Servers[i].Command = slices.Delete(slices.Clone(s.Command), k, k+2)
		}
	}
	r, table, err := runSweep(t, context.Background(), o, tg)
	if !errors.Is(err, harness.ErrRefused) || len(r.Curve) != 1 {
		t.Fatalf("err %v, %d points; want ErrRefused after the first\n%s", err, len(r.Curve), table)
	}
	why := r.PartialReason
	for _, want := range []string{"preflight was refused", "one cluster?", " is node"} {
		if !strings.Contains(why, want) {
			t.Errorf("the reason lacks %q: %s", want, why)
		}
	}
	if !strings.Contains(flatText(table), flatText(why[strings.Index(why, "one cluster?"):])) {
		t.Errorf("the terminal does not carry the reason to its end:\n%s", table)
	}
	if left := waitLeftGone(t, 0); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}
