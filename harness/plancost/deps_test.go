package plancost

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestPlancostIsArithmetic: the plan's cost links the knobs, the schedule
// and the duet halves, and nothing that boots, measures or judges a point.
func TestPlancostIsArithmetic(t *testing.T) {
	testenv.ImportsNone(t, testenv.Module+"harness/plancost", testenv.Bans(testenv.Machinery(), testenv.Ours("harness/verdict", "harness/supervise"))...)
}
