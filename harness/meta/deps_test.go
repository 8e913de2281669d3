package meta

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestMetaLinksNoRunner: the run's meta links the knobs, the target file
// and pinning (the CPU topology), and nothing that boots, measures,
// judges or schedules a point. The harness's top-level package needs no
// ban: it imports this package, and an import back would be a cycle the
// compiler refuses.
func TestMetaLinksNoRunner(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/meta",
		mod+"harness/supervise", mod+"harness/cpusample", mod+"harness/attrib", mod+"harness/meter",
		mod+"harness/scrape", mod+"harness/verdict", mod+"harness/schedule", mod+"harness/agents",
		mod+"harness/agentside", mod+"calibrate", mod+"internal/netlab", "github.com/shirou/gopsutil")
}
