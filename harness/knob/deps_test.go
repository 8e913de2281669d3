package knob

import (
	"os/exec"
	"strings"
	"testing"
)

// TestKnobsDoNotImportTheAgents: the knobs check AGENTS_TOKEN by the rule
// in internal/agenttoken; they never link the agents' protocol
// (harness/agents), which the harness hands the token to.
func TestKnobsDoNotImportTheAgents(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/ceiling-bench/ceiling/harness/knob").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave %d packages: %q", len(deps), deps)
	}
	for _, d := range deps {
		if d == "github.com/ceiling-bench/ceiling/harness/agents" || strings.HasPrefix(d, "github.com/ceiling-bench/ceiling/harness/agents/") {
			t.Errorf("knob depends on %s", d)
		}
	}
}
