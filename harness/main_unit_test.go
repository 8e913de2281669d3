//go:build !e2e

package harness_test

import (
	"os"
	"testing"

	"github.com/ceiling-bench/ceiling/pinning"
)

// TestMain of the unit lane (make test): it builds nothing and boots
// nothing. The e2e lane's TestMain (integration_test.go, make e2e) builds
// ceiling and refserver for the real sweeps.
func TestMain(m *testing.M) {
	pinning.Init() // a child started through pinning.Command re-execs this binary
	os.Exit(m.Run())
}
