package knob

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestKnobsDoNotImportTheAgents: the knobs check AGENTS_TOKEN by the rule
// in internal/agenttoken; they never link the agents' protocol
// (harness/agents), which the harness hands the token to.
func TestKnobsDoNotImportTheAgents(t *testing.T) {
	testenv.ImportsNone(t, "github.com/ceiling-bench/ceiling/harness/knob", "github.com/ceiling-bench/ceiling/harness/agents")
}
