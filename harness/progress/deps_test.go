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
	testenv.ImportsNone(t, testenv.Module+"harness/progress", testenv.Bans(testenv.Machinery(), testenv.Ours("harness/verdict",
		"harness/target", "harness/knob", "pinning", "load", "internal/procfs"), []string{"os/exec", "net/http"})...)

	testenv.FilesArePure(t)
}
