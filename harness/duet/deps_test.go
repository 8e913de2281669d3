package duet

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestDuetLinksNoRunner: the halves and the gate link the knobs, pinning
// and load's gate files, and nothing that boots, measures, judges or
// schedules a point: the harness runs the points, duet only starts them
// together.
func TestDuetLinksNoRunner(t *testing.T) {
	testenv.ImportsNone(t, testenv.Module+"harness/duet", testenv.Bans(testenv.Machinery(), testenv.Deciders())...)
}
