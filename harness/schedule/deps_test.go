package schedule

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestScheduleIsPure: a schedule is a function of what the points
// measured.
//
// It links only the result document's types and the statistics, and
// what those bring (internal/wire, the objective's language, the
// redaction and argv readers), with the standard library's pure part:
// never what measures or runs, nor the knobs (a plan comes in as
// SweepPlan or TwoArmPlan) nor the verdict (the harness judges a point
// before a schedule reads it), nor load, the agents, os/exec or net/http
// (the allowlist keeps them all out; the ban names them). Its own files
// are held to more: they import nothing that does I/O or starts a
// process, and read no clock.
func TestScheduleIsPure(t *testing.T) {
	testenv.ImportsOnly(t, testenv.Module+"harness/schedule",
		testenv.Ours("result", "internal/stats", "internal/wire", "internal/objective", "internal/redact", "internal/argv")...)
	testenv.ImportsNone(t, testenv.Module+"harness/schedule",
		testenv.Bans(testenv.Ours("load", "harness/agents", "harness/knob", "harness/verdict", "pinning"), testenv.Machinery(),
			[]string{"os/exec", "os/signal", "net/http"})...)

	testenv.FilesArePure(t)
}
