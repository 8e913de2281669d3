// Package bounds is the one check of a sweep's bounds, on the plan as
// resolved: after every layer that can set a bounded field has spoken
// (the knobs from the environment and the flags, `compare --`, QUICK,
// the target file, the scenario's target block and its scenario file),
// Check looks at the values the sweep will run, whichever layer set
// them. A bound checked where a value is parsed holds only for that
// source; a new source (a scenario file's own "sweep" ladder, a target
// file's ready_timeout) would pass unseen. Fields lists every bounded
// field with the layers that can set it, and the harness's
// TestBoundsOfEverySource drives each.
//
// What is bounded: every ladder (at most knob.MaxRungs rungs), every
// window (at least MinWindow, at most knob.MaxDuration), every warm-up,
// timeout and grace (at most knob.MaxDuration). Points and hours are
// plancost's CheckPlanned (ALLOW_LONG), run with it.
package bounds

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
)

// MinWindow is the shortest measured window: below it a point measures
// the timer's resolution and the connection's setup, not a rate
// (DURATION=1e-9 is one nanosecond).
const MinWindow = 100 * time.Millisecond

// Field is one bounded field and the layers that can set it.
type Field struct {
	Name    string   // as errors name it
	Sources []string // the knobs and files that set it
}

// Fields are the bounded fields of a plan.
var Fields = []Field{
	{"BATCH_LADDER", []string{"BATCH_LADDER (--batch-ladder)", "QUICK", "the target's scenario block (its batch ladder)"}},
	{"CONNS_LADDER_<batch>", []string{"CONNS_LADDER_<batch> (--conns-ladder-<batch>)", "QUICK", "the scenario file's \"sweep\"", "the target's scenario block"}},
	{"DURATION", []string{"DURATION (--duration)", "QUICK", "compare -- --duration"}},
	{"WARMUP", []string{"WARMUP (--warmup)", "QUICK", "compare -- --warmup"}},
	{"COMPARE_DURATION", []string{"COMPARE_DURATION (--compare-duration)", "DURATION when not given"}},
	{"COMPARE_WARMUP", []string{"COMPARE_WARMUP (--compare-warmup)", "WARMUP when not given"}},
	{"READY_TIMEOUT", []string{"--ready-timeout"}},
	{"AGENTS_JOIN_TIMEOUT", []string{"AGENTS_JOIN_TIMEOUT (--agents-join-timeout)"}},
	{"CONN_INTERVAL", []string{"CONN_INTERVAL (--conn-interval)"}},
	{"ready_timeout", []string{"TARGET's ready_timeout", "BASE_TARGET's ready_timeout"}},
	{"stop_grace", []string{"TARGET's stop_grace", "BASE_TARGET's stop_grace"}},
}

// Target is a target file's bounded fields.
type Target struct {
	Knob             string // TARGET or BASE_TARGET
	File             string
	Ready, StopGrace time.Duration // defaults applied (target.Spec.Durations)
}

// Plan is what Check reads of a resolved plan.
type Plan struct {
	Schedule knob.Schedule
	Point    knob.Point
	Compare  knob.Compare
	Agents   knob.Agents
	TwoArm   bool
	Targets  []Target
}

// Check returns every bound p breaks, each naming its field and the
// layers that can set it; nil when p is within all of them.
func Check(p Plan) error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s (set by %s)", field, fmt.Sprintf(format, a...), sourcesOf(field)))
	}
	rungs := func(field string, n int) {
		if n > knob.MaxRungs {
			bad(field, "%d rungs, at most %d: every rung is at least one point", n, knob.MaxRungs)
		}
	}
	window := func(field string, d time.Duration) {
		switch {
		case d < MinWindow:
			bad(field, "%s is shorter than the shortest window, %s", d, MinWindow)
		case d > knob.MaxDuration:
			bad(field, "%s is above the limit of %s", d, knob.MaxDuration)
		}
	}
	upTo := func(field string, d time.Duration) {
		if d < 0 || d > knob.MaxDuration {
			bad(field, "%s is not within 0 and %s", d, knob.MaxDuration)
		}
	}
	rungs("BATCH_LADDER", len(p.Schedule.BatchLadder))
	for _, b := range p.Schedule.BatchLadder {
		if n := len(p.Schedule.ConnsLadder(b)); n > knob.MaxRungs {
			bad("CONNS_LADDER_<batch>", "CONNS_LADDER_%d: %d rungs, at most %d: every rung is at least one point", b, n, knob.MaxRungs)
		}
	}
	window("DURATION", p.Point.Duration)
	upTo("WARMUP", p.Point.Warmup)
	upTo("READY_TIMEOUT", p.Point.ReadyTimeout)
	upTo("CONN_INTERVAL", p.Point.ConnInterval)
	upTo("AGENTS_JOIN_TIMEOUT", p.Agents.JoinTimeout)
	if p.TwoArm {
		window("COMPARE_DURATION", p.Compare.Duration)
		upTo("COMPARE_WARMUP", p.Compare.Warmup)
	}
	for _, t := range p.Targets {
		if t.Ready <= 0 || t.Ready > knob.MaxDuration {
			errs = append(errs, fmt.Errorf("%s %s: ready_timeout: %s is not within 0 and %s", t.Knob, t.File, t.Ready, knob.MaxDuration))
		}
		if t.StopGrace < 0 || t.StopGrace > knob.MaxDuration {
			errs = append(errs, fmt.Errorf("%s %s: stop_grace: %s is not within 0 and %s", t.Knob, t.File, t.StopGrace, knob.MaxDuration))
		}
	}
	return errors.Join(errs...)
}

func sourcesOf(field string) string {
	for _, f := range Fields {
		if f.Name == field {
			return strings.Join(f.Sources, ", ")
		}
	}
	return field
}
