//go:build e2e

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testenv/hog"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// TestLinesWithin100ColumnsEndToEnd is issue 51's terminal: what `make
// ceiling-quick` (the real Makefile, its recipe and its exit-status
// lines) and `ceiling compare` print keeps every line within 100
// columns, on a quiet machine and with busy loops pinned to the
// generator's CPU (contention makes the longest lines: who took the CPUs,
// why a point is not clean, why a comparison cannot conclude). The
// compare once printed its echoed sweep command at 254 columns and the
// mode and FAIL_ON lines at 194. Windows of 1 s: the subject is the
// lines, not the figures.
func TestLinesWithin100ColumnsEndToEnd(t *testing.T) {
	needEndToEnd(t)
	for k, v := range map[string]string{"BATCH_LADDER": "10", "DURATION": "1s", "WARMUP": "300ms", "COMPARE_DURATION": "1s",
		"COMPARE_WARMUP": "300ms", "COMPARE_BUDGET": "1m", "SRV_CPUSET": "1", "LT_CPUSET": "0", "OUT": "", "TARGET": "", "QUICK": ""} {
		t.Setenv(k, v)
	}
	root := moduleRoot(t)
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "refserver")).CombinedOutput(); err != nil {
		t.Fatalf("build refserver: %v\n%s", err, out)
	}
	// make's `ceiling` is this test binary, acting as ceiling.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nCEILING_TEST_AS_CEILING=1 exec " + exe + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ceiling"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(bin, "refserver.json")
	spec := `{"name": "refserver", "command": ["` + filepath.Join(bin, "refserver") + `", "--addr", "{addr}"], "echo_url": "ws://{addr}/echo", "ready": "http://{addr}/health"}`
	if err := os.WriteFile(target, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(what, out string) {
		t.Helper()
		n := 0
		for _, line := range strings.Split(out, "\n") {
			if w := len([]rune(line)); w > result.TableWidth {
				t.Errorf("%s: a line of %d columns: %q", what, w, line)
			}
			n++
		}
		t.Logf("%s: %d lines, none over %d columns:\n%s", what, n, result.TableWidth, lastLines(out, 30))
	}
	makeQuick := func(what string) {
		cmd := exec.Command("make", "--no-print-directory", "-C", root, "-o", "build", "ceiling-quick", "BIN="+bin,
			"TARGET="+target, "OUT="+filepath.Join(t.TempDir(), "quick.json"))
		out, _ := cmd.CombinedOutput() // 1 under contention: not publishable
		check(what, string(out))
	}
	compare := func(what string) {
		e := newUserRepo(t, false)
		e.edit("main.go", "const rounds = 0", "const rounds = 500")
		e.commit("slower")
		t.Setenv("CEILING_TEST_AS_CEILING", "1")
		stdout, stderr, code := runCLI(t, "", "compare", "--repo", e.dir, "--base", "main", "--quick", "--out", filepath.Join(t.TempDir(), "compare.json"))
		t.Logf("%s: exit %d", what, code)
		check(what+" (stdout)", stdout)
		check(what+" (stderr)", stderr)
	}

	makeQuick("make ceiling-quick, quiet")
	compare("ceiling compare, quiet")
	hog.Start(t, pinning.CPUSet{0}, 3*time.Minute)
	makeQuick("make ceiling-quick, busy loops on the generator's CPU")
	compare("ceiling compare, busy loops on the generator's CPU")
}
