//go:build e2e

package harness_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/result"
)

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// sweepCommand is `ceiling sweep` as a process (server on CPU 1,
// generator on CPU 0, the test build's refserver), its knob variables
// cleared so the host's cannot leak in.
func sweepCommand(t *testing.T, dir, out string, args ...string) *exec.Cmd {
	t.Helper()
	return ceilingSweep(t, refTarget(t), dir, out, nil, args...)
}

// TestSIGINTMidSweep interrupts `ceiling sweep` during its second point:
// it must exit 1 with a partial result, and leave no process behind.
func TestSIGINTMidSweep(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	cmd := sweepCommand(t, dir, out, "--batch-ladder", "10 100",
		"--conns-ladder", "10=2,4", "--conns-ladder", "100=2,4", "--duration", "2s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// Read progress until point 2 starts, then wait for its measure marker:
	// both children are up and in the window (a fixed sleep raced the
	// boot on a loaded machine).
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "point 2/") {
			break
		}
	}
	waitMarker(t, dir, "point-002-*")
	kids, _ := supervise.Descendants(cmd.Process.Pid)
	if len(kids) < 2 {
		t.Errorf("before SIGINT the harness has children %v, want the server and the generator", kids)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	t.Logf("harness stderr:\n%s", log.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want status 1", err)
	}
	for _, pid := range kids {
		if supervise.Alive(pid) {
			t.Errorf("process %d outlived the harness", pid)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no partial result: %v", err)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if !r.Partial || !strings.Contains(r.PartialReason, "interrupted") {
		t.Errorf("partial %v (%q), want marked partial", r.Partial, r.PartialReason)
	}
	if len(r.Curve) < 1 || len(r.Curve) > 2 || r.Curve[0].Status != result.StatusOK {
		t.Errorf("curve %+v: want the first point done and at most the interrupted one", r.Curve)
	}
}

// waitMarker waits until a point directory matching pattern under dir has
// its generator's measure marker: server and generator are both up.
func waitMarker(t *testing.T, dir, pattern string) {
	t.Helper()
	waitFile(t, dir, filepath.Join(pattern, "measure.marker"))
}

// TestSIGKILLHarnessTakesChildren kills `ceiling sweep` outright during a
// point: nothing can run in the harness then, so only the parent-death
// signal set on its children can take them down.
func TestSIGKILLHarnessTakesChildren(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	cmd := sweepCommand(t, dir, filepath.Join(dir, "out.json"), "--batch-ladder", "10", "--conns-ladder", "10=2", "--duration", "3s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	waitMarker(t, dir, "point-*")
	kids, _ := supervise.Descendants(cmd.Process.Pid)
	if len(kids) < 2 {
		t.Fatalf("the harness has children %v, want the server and the generator", kids)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range kids {
		for supervise.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if supervise.Alive(pid) {
			t.Errorf("process %d outlived the killed harness", pid)
		}
	}
}

// TestNoCleanHeadlineExits1 runs the binary against a server that never
// becomes ready: the result is still written, and the exit status is 1
// (not publishable), not 0 and not 2.
func TestNoCleanHeadlineExits1(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	cmd := sweepCommand(t, dir, out, "--batch-ladder", "10", "--conns-ladder", "10=2", "--duration", "1s",
		"--ready", "log:never printed", "--ready-timeout", "500ms")
	msg, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no result written: %v", err)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Headline.Clean || len(r.Curve) != 1 || r.Curve[0].Verdict != result.VerdictFailed {
		t.Errorf("headline %+v, curve %+v", r.Headline, r.Curve)
	}
	if !strings.Contains(string(msg), "no clean point at the headline batch") {
		t.Errorf("output does not say why:\n%s", msg)
	}
}
