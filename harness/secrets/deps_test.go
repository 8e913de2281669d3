package secrets

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestSecretsLinkNoRunner: gathering and masking secrets links the knobs,
// the target file and internal/redact, and nothing that boots, measures,
// judges or schedules a point: not the supervisor, the CPU sampling and
// attribution, the meter, the metrics scraper, the verdict, the schedule,
// the agents, the calibrator or gopsutil. The harness's top-level
// package needs no ban: it imports this package, and an import back would
// be a cycle the compiler refuses.
func TestSecretsLinkNoRunner(t *testing.T) {
	testenv.ImportsNone(t, testenv.Module+"harness/secrets", testenv.Bans(testenv.Machinery(), testenv.Deciders())...)
}
