package outfile

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestOutfileWritesOnly: writing OUT links the document's types (result)
// and the file replacement (internal/atomicfile), and nothing of a sweep:
// not what boots, pins, measures, judges or schedules a point, nor the
// knobs, the target files, the generator's library or the calibrator
// (`ceiling calibrate` writes its document through WriteFile without
// them). The harness's top-level package needs no ban: it imports this
// package, and an import back would be a cycle the compiler refuses.
func TestOutfileWritesOnly(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/outfile",
		mod+"harness/supervise", mod+"harness/cpusample", mod+"harness/attrib", mod+"harness/probe",
		mod+"harness/scrape", mod+"harness/target", mod+"harness/knob", mod+"harness/agents",
		mod+"harness/verdict", mod+"harness/schedule", mod+"harness/meter", mod+"pinning",
		mod+"calibrate", mod+"load", mod+"internal/netlab", mod+"internal/procfs",
		"github.com/shirou/gopsutil", "os/exec", "net/http")
}
