package publish

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPublishDoesNotImportTheHarness: publishing a document links the
// document model (package result and the leaf internal/wire), never what
// measures it: no harness package, supervisor, agents, network lab or
// gopsutil, and neither the generator engine (load and its scenarios),
// the calibrator nor pinning.
func TestPublishDoesNotImportTheHarness(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/ceiling-bench/ceiling/publish/...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave %d packages: %q", len(deps), deps)
	}
	const mod = "github.com/ceiling-bench/ceiling/"
	for _, d := range deps {
		for _, bad := range []string{"harness", "load", "calibrate", "pinning"} {
			if d == mod+bad || strings.HasPrefix(d, mod+bad+"/") {
				t.Errorf("publish depends on %s", d)
			}
		}
		if strings.Contains(d, "gopsutil") || strings.HasSuffix(d, "/internal/netlab") {
			t.Errorf("publish depends on %s", d)
		}
	}
}
