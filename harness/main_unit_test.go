//go:build !e2e

package harness_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/pinning"
)

// TestMain of the unit lane (make test): it builds nothing and boots
// nothing. The e2e lane's TestMain (integration_test.go, make e2e) builds
// ceiling and refserver for the real sweeps.
//
// Nothing in the lane runs git either: Run's meta comes through
// Deps.Meta, faked in every test that sweeps. So the lane runs with a
// `git` first on its PATH that only writes down that it was run
// (gitTattler), and fails, naming each run, when it was.
func TestMain(m *testing.M) {
	pinning.Init() // a child started through pinning.Command re-execs this binary
	dir, err := os.MkdirTemp("", "harness-unit-git-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		log := filepath.Join(dir, "runs")
		gitTattler = filepath.Join(dir, "git")
		script := "#!/bin/sh\necho \"git $*\" >> '" + log + "'\nexit 1\n"
		if err := os.WriteFile(gitTattler, []byte(script), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		os.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
		code := m.Run()
		if b, err := os.ReadFile(log); err == nil && len(b) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: the harness's unit tests ran git (a sweep's meta must come through Deps.Meta):\n%s", b)
			return 1
		}
		return code
	}()
	os.Exit(code)
}

// gitTattler is the `git` first on the unit lane's PATH (TestMain).
var gitTattler string

// TestUnitLaneExecsNoGit: the git that any test of the lane would run is
// TestMain's, which writes down every run and fails the lane after it;
// so no test of the lane runs git and passes.
func TestUnitLaneExecsNoGit(t *testing.T) {
	found, err := exec.LookPath("git")
	if err != nil || found != gitTattler {
		t.Fatalf("git on PATH is %q (%v), want the lane's %q", found, err, gitTattler)
	}
	if out, err := exec.Command("sh", "-c", "command -v git").Output(); err != nil || strings.TrimSpace(string(out)) != gitTattler {
		t.Fatalf("a child's git is %q (%v), want the lane's %q", out, err, gitTattler)
	}
}
