package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakefilePassesLaddersThroughTheEnvironment runs the real Makefile's
// ceiling and ceiling-quick recipes with a CONNS_LADDER_* value that
// closes a shell quote and runs a command. The recipe must hand the value
// to `ceiling sweep` unchanged, through the environment, and the injected
// command must not run. BIN points at a stand-in `ceiling` that records
// what it was given, and `-o build` keeps make from building, so no sweep
// runs.
func TestMakefilePassesLaddersThroughTheEnvironment(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	for _, target := range []string{"ceiling", "ceiling-quick", "ceiling-connections"} {
		t.Run(target, func(t *testing.T) {
			dir := t.TempDir()
			injected := filepath.Join(dir, "INJECTED")
			got := filepath.Join(dir, "got")
			stub := "#!/bin/sh\nprintf '%s' \"$CONNS_LADDER_10\" > " + got + "\n"
			if err := os.WriteFile(filepath.Join(dir, "ceiling"), []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
			value := "32'; touch " + injected + "; echo '"
			cmd := exec.Command("make", "-C", "../..", "-o", "build", target, "BIN="+dir, "CONNS_LADDER_10="+value)
			out, err := cmd.CombinedOutput()
			t.Logf("make %s:\n%s", target, out)
			if err != nil {
				t.Fatalf("make: %v", err)
			}
			if _, err := os.Stat(injected); err == nil {
				t.Errorf("the command injected through CONNS_LADDER_10 ran")
			}
			b, err := os.ReadFile(got)
			if err != nil {
				t.Fatalf("the recipe did not run bin/ceiling: %v", err)
			}
			if string(b) != value {
				t.Errorf("ceiling got CONNS_LADDER_10=%q, want %q unchanged", b, value)
			}

			// make -n prints the recipe: it must not paste the value in.
			n, err := exec.Command("make", "-n", "-C", "../..", "-o", "build", target, "BIN="+dir, "CONNS_LADDER_10="+value).CombinedOutput()
			if err != nil {
				t.Fatalf("make -n: %v\n%s", err, n)
			}
			if strings.Contains(string(n), "touch") {
				t.Errorf("make -n shows the value pasted into the recipe:\n%s", n)
			}
		})
	}
}

// TestMakefileSaysTheSweepsStatus: make reports any failed recipe as 2,
// which is the sweep's own "bad input"; when `ceiling sweep` exits 1
// (not publishable), make ceiling, ceiling-quick and ceiling-compare say
// so in lines within 100 columns. A stand-in `ceiling` exits 1; `-o
// build` keeps make from building.
func TestMakefileSaysTheSweepsStatus(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ceiling"), []byte("#!/bin/sh\necho 'a table' \nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"ceiling", "ceiling-quick", "ceiling-compare"} {
		cmd := exec.Command("make", "--no-print-directory", "-C", "../..", "-o", "build", target, "BIN="+dir, "BASE_TARGET=base.json")
		out, err := cmd.CombinedOutput()
		t.Logf("make %s:\n%s", target, out)
		if err == nil {
			t.Errorf("make %s passed a sweep that exited 1", target)
		}
		if !strings.Contains(string(out), "make "+target+": ceiling sweep exited 1 (1: the result is written but not publishable") {
			t.Errorf("make %s does not say the sweep's status", target)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if n := len([]rune(line)); n > 100 {
				t.Errorf("make %s: a line of %d columns: %q", target, n, line)
			}
		}
	}
}

// TestMakefileEmbedsTheFullCommit: make build and make install embed the
// whole commit (-X main.commit), which ceiling init pins the action to
// when the build stamped no VCS revision; VERSION's commit is short, and
// a short one is no pin.
func TestMakefileEmbedsTheFullCommit(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	want := "-X main.commit=" + strings.TrimSpace(string(head))
	for _, target := range []string{"build", "install"} {
		out, err := exec.Command("make", "-n", "--no-print-directory", "-C", "../..", target, "BINDIR="+t.TempDir()).CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", target, err, out)
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("make %s does not embed %s:\n%s", target, want, out)
		}
	}
}
