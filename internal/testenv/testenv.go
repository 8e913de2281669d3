// Package testenv holds what tests ask of the machine they run on, and
// how they react when it is missing: a skip on a developer's machine, a
// failure under CI=true, where .ci/run provides everything (it runs as
// root).
package testenv

import (
	"os"
	"os/exec"
	"strings"
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

// ImportsNone fails t for every package that pkgs (a `go list` pattern)
// links, by `go list -deps`, that is one of banned (import paths, each
// with everything below it): how a package's test keeps an import
// pointing the wrong way from coming back.
func ImportsNone(t testing.TB, pkgs string, banned ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkgs).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkgs, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %s gave %d packages: %q", pkgs, len(deps), deps)
	}
	for _, d := range deps {
		for _, b := range banned {
			if d == b || strings.HasPrefix(d, b+"/") {
				t.Errorf("%s depends on %s", pkgs, d)
				break
			}
		}
	}
}
