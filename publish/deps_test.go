package publish

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestPublishDoesNotImportTheHarness: publishing a document links the
// document model (package result and the leaf internal/wire), never what
// measures it: no harness package, supervisor, agents, network lab or
// gopsutil, and neither the generator engine (load and its scenarios),
// the calibrator nor pinning.
func TestPublishDoesNotImportTheHarness(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"publish/...",
		mod+"harness", mod+"load", mod+"calibrate", mod+"pinning", mod+"internal/netlab",
		"github.com/shirou/gopsutil")
}
