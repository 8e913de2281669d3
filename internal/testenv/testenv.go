// Package testenv holds what tests ask of the machine they run on, and
// how they react when it is missing: a skip on a developer's machine, a
// failure under CI=true, where .ci/run provides everything (it runs as
// root).
package testenv

import (
	"os"
	"testing"
)

// NeedRoot returns when this process is root; otherwise it skips t, or,
// under CI=true, fails it, saying why root is needed.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("needs root (euid %d): %s; .ci/run runs as root", os.Geteuid(), why)
	}
	t.Skipf("needs root (euid %d): %s", os.Geteuid(), why)
}
