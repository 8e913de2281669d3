package publish

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPublishDoesNotImportTheHarness: publishing a document links the
// document model (package result), never the harness that measures it:
// no harness package, supervisor, agents, network lab or gopsutil.
func TestPublishDoesNotImportTheHarness(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/ceiling-bench/ceiling/publish/...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave %d packages: %q", len(deps), deps)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/ceiling-bench/ceiling/harness") || strings.Contains(d, "gopsutil") || strings.HasSuffix(d, "/internal/netlab") {
			t.Errorf("publish depends on %s", d)
		}
	}
}
