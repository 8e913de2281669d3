package fault

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestFaultIsPure: FAULT's rules are a function of the knobs, the target
// and the scenario registry.
//
// The package never links what touches processes or measures (the
// supervisor, the CPU sampling and attribution, the meter, the metrics
// scraper, the agents, the calibrator, the network lab, gopsutil) nor the
// verdict or the schedule. os/exec is linked, through the target file's
// package and the knobs: it cannot be banned from the graph while they
// link it, so the package's own files are held to it instead (no I/O, no
// process, no clock). The harness's top-level package needs no ban: it
// imports this package, and an import back would be a cycle the compiler
// refuses.
func TestFaultIsPure(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/fault",
		mod+"harness/supervise", mod+"harness/cpusample", mod+"harness/attrib", mod+"harness/meter",
		mod+"harness/scrape", mod+"harness/agents", mod+"harness/agentside", mod+"harness/verdict",
		mod+"harness/schedule", mod+"calibrate", mod+"internal/netlab", "github.com/shirou/gopsutil")

	testenv.FilesArePure(t)
}
