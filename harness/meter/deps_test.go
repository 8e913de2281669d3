package meter

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestMeterMeasuresOnly: measuring a window links what reads the machine
// (cpusample, attrib, pinning, internal/procfs) and the document's types
// (result), and nothing that boots, judges or schedules a point: not the
// verdict, the schedule, the agents, the knobs, the generator's library,
// the target files, the supervisor or the metrics scraper (the server's
// own metrics and profile are the harness's window capture).
//
// testenv.ImportsNone bans a path with everything below it, so the
// harness's top-level package cannot be named here without banning this
// package too; it needs no ban: the harness imports this package, and an
// import back would be a cycle the compiler refuses.
func TestMeterMeasuresOnly(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/meter",
		mod+"harness/verdict", mod+"harness/schedule", mod+"harness/agents", mod+"harness/knob",
		mod+"harness/target", mod+"harness/supervise", mod+"harness/probe", mod+"harness/scrape",
		mod+"load", mod+"calibrate", mod+"internal/netlab")
}
