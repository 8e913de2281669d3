package verdict

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestVerdictIsPure: the verdict is a function of what a point measured.
//
// It never links what measures (the supervisor, the CPU sampling and
// attribution, the readiness probe, the metrics scraper, pinning, the
// network lab, gopsutil, the calibrator). testenv.ImportsNone bans a path
// with everything below it, so the harness's top-level package cannot be
// named here without banning this package too; it needs no ban: the
// harness imports this package, and an import back would be a cycle the
// compiler refuses.
//
// os/exec and net/http are linked, through load (the home of load.Summary
// and load.Result, which an Outcome carries) and harness/agents: they
// cannot be banned from the graph while those types live there. So the
// package's own files are held to it instead: they import nothing that
// does I/O or starts a process, and read no clock.
func TestVerdictIsPure(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/verdict",
		mod+"harness/supervise", mod+"harness/cpusample", mod+"harness/attrib", mod+"harness/probe",
		mod+"harness/scrape", mod+"harness/target", mod+"harness/knob", mod+"pinning", mod+"calibrate",
		mod+"internal/netlab", "github.com/shirou/gopsutil")

	testenv.FilesArePure(t)
}
