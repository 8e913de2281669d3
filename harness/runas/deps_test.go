package runas

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestRunasLinksNoRunner: resolving SRV_USER links the user database and
// pinning (whether this system can pin, and so set a child's identity),
// and nothing that boots, measures, judges or schedules a point, nor the
// knobs or the target file: the harness hands it the knob's value. The
// harness's top-level package needs no ban: it imports this package, and
// an import back would be a cycle the compiler refuses.
func TestRunasLinksNoRunner(t *testing.T) {
	testenv.ImportsNone(t, testenv.Module+"harness/runas",
		testenv.Bans(testenv.Machinery(), testenv.Deciders(), testenv.Ours("harness/knob", "harness/target", "load"))...)
}
