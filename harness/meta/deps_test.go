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
	testenv.ImportsNone(t, testenv.Module+"harness/meta", testenv.Bans(testenv.Machinery(), testenv.Deciders())...)
}
