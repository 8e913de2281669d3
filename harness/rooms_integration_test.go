//go:build e2e

package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/result"
)

// SCENARIO_FILE through the whole sweep: refserver's /rooms driven by
// benchmark/scenarios/rooms.json, its objective judged on every point, and
// every point carrying its per-kind block.
func TestRoomsMiniSweep(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{1}, knob.ConnsLadders{1: {20}})
	o.Scenario, o.ScenarioFile = knob.DefaultScenario, "../benchmark/scenarios/rooms.json"
	tg := refTarget(t)
	if p := plan(t, o, tg, nil); p.Point.Scenario != "script" || p.Schedule.HeadlineBatch != 1 {
		t.Fatalf("scenario %q headline batch %d", p.Point.Scenario, p.Schedule.HeadlineBatch)
	}
	r, _, err := runSweepOnce(t, context.Background(), o, tg)
	if _, err := contentionIsNotTheSubject(t, r, err); err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatal(err)
	}
	if r.Config.Objective == "" {
		t.Fatal("the file's objective was not taken")
	}
	for _, p := range r.Curve {
		if p.Status != result.StatusOK {
			t.Fatalf("point %d failed: %s", p.Index, p.FailReason)
		}
		var kinds map[string]struct {
			Sent, Received int64
			Expected       *int64
		}
		if err := json.Unmarshal(p.Scenario["kinds"], &kinds); err != nil {
			t.Fatalf("point %d: kinds: %v (%s)", p.Index, err, p.Scenario["kinds"])
		}
		op, ack := kinds["op"], kinds["ack"]
		if op.Received == 0 || op.Expected == nil || ack.Received != *ack.Expected || kinds["presence"].Received == 0 {
			t.Errorf("point %d: kinds %+v", p.Index, kinds)
		}
		if p.Objective == nil || len(p.Objective.Conditions) != 4 {
			t.Errorf("point %d: objective %+v", p.Index, p.Objective)
		}
	}
}
