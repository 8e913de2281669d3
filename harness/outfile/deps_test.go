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
	testenv.ImportsNone(t, testenv.Module+"harness/outfile", testenv.Bans(testenv.Machinery(), testenv.Deciders(), testenv.Ours("harness/probe",
		"harness/target", "harness/knob", "pinning", "load", "internal/procfs"), []string{"os/exec", "net/http"})...)
}
