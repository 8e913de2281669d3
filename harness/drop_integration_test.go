//go:build e2e

package harness_test

import (
	"context"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
)

// DROP=1: each point's generator drops every client without a close
// handshake after the window, and the point records that refserver's
// /health answered and a new client was served.
func TestDropMiniSweep(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {32}})
	o.Drop = true
	r, _, err := runSweep(t, context.Background(), o, refTarget(t))
	if err != nil && r == nil {
		t.Fatal(err)
	}
	for _, p := range measuredPoints(t, r) {
		d := p.Drop
		if d == nil || d.Dropped != 32 || !d.ServerUp || d.ReadyAfterNs == nil || !d.NewClientOK || d.ReadyProbe == "" {
			t.Errorf("point %d: drop %+v", p.Index, d)
		}
	}
}
