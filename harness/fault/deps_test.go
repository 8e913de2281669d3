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
	testenv.ImportsNone(t, testenv.Module+"harness/fault", testenv.Bans(testenv.Machinery(), testenv.Deciders())...)

	testenv.FilesArePure(t)
}
