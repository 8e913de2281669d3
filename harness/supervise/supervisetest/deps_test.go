package supervisetest_test

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestNoProductLinksTheFake: the fake is a seam for unit tests, never a
// stand-in for the product: no command links it.
func TestNoProductLinksTheFake(t *testing.T) {
	testenv.ImportsNone(t, "github.com/ceiling-bench/ceiling/cmd/...", "github.com/ceiling-bench/ceiling/harness/supervise/supervisetest")
}
