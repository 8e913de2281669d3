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
