package agentside

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestAgentsideMeasuresNothing: the agents' side of a point starts,
// watches and collects processes; what measures the window (the CPU
// sampling, attribution, the server's metrics), the target file and the
// schedule stay the harness's. (The harness's top-level package needs no
// ban: it imports this one, and an import back would be a cycle.)
func TestAgentsideMeasuresNothing(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/agentside",
		mod+"harness/cpusample", mod+"harness/attrib", mod+"harness/scrape", mod+"harness/target",
		mod+"harness/schedule", mod+"calibrate", "github.com/shirou/gopsutil")
}
