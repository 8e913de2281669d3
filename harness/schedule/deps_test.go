package schedule

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestScheduleIsPure: a schedule is a function of what the points
// measured.
//
// It never links what measures or runs (the supervisor, the CPU sampling
// and attribution, the readiness probe, the metrics scraper, the target
// files, pinning, the network lab, gopsutil, the calibrator, the
// generator's library, the agents), nor the knobs (which link pinning: a
// plan comes in as SweepPlan or TwoArmPlan) nor the verdict (the harness
// judges a point before a schedule reads it). Unlike the verdict's, its
// graph holds no os/exec and no net/http: those are banned outright. The
// harness's top-level package needs no ban: it imports this package, and
// an import back would be a cycle the compiler refuses. Its own files are
// held to more: they import nothing that does I/O or starts a process,
// and read no clock.
func TestScheduleIsPure(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/schedule",
		mod+"harness/supervise", mod+"harness/cpusample", mod+"harness/attrib", mod+"harness/probe",
		mod+"harness/scrape", mod+"harness/target", mod+"harness/knob", mod+"harness/agents",
		mod+"harness/verdict", mod+"pinning", mod+"calibrate", mod+"load", mod+"internal/netlab",
		mod+"internal/procfs", "github.com/shirou/gopsutil", "os/exec", "os/signal", "net/http")

	testenv.FilesArePure(t)
}
