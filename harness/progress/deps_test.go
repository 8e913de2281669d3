package progress

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestProgressIsPure: the progress lines are a function of what the
// sweep tells them: they link the document's types and the schedule's
// point, and nothing that measures or runs; the package's own files do
// no I/O but the writer they are given, and read no clock (the caller
// passes the time elapsed). The harness's top-level package needs no ban:
// it imports this package, and an import back would be a cycle the
// compiler refuses.
func TestProgressIsPure(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/progress",
		mod+"harness/supervise", mod+"harness/cpusample", mod+"harness/attrib", mod+"harness/meter",
		mod+"harness/scrape", mod+"harness/target", mod+"harness/knob", mod+"harness/agents",
		mod+"harness/verdict", mod+"pinning", mod+"calibrate", mod+"load", mod+"internal/netlab",
		mod+"internal/procfs", "github.com/shirou/gopsutil", "os/exec", "net/http")

	testenv.FilesArePure(t)
}
