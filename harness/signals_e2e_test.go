//go:build e2e

package harness_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/outfile"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/internal/testenv"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// TestHarnessStoppedBySignal: `ceiling sweep` as a process, stopped
// outright or interrupted (docs/sweep.md, "Containment" and
// "Interrupts"; issue 8's items 3, 5 and 13, reproduced with real
// processes). What happens to a point once the harness knows it was
// interrupted, and the partial document Run writes then, are unit-tested
// through the fakes (TestPipelineInterruptStopsTheProcesses,
// TestRunInterruptedRewritesTheLateWarnings, TestSweepInterrupted);
// here the signals and the processes are real.
func TestHarnessStoppedBySignal(t *testing.T) {
	needProcs(t)
	t.Run("SIGKILL", testHarnessKilled)
	for _, tt := range []struct {
		name     string
		duration string
		wait     func(t *testing.T, work string)
	}{
		{"SIGINT in the window", "20s", func(t *testing.T, work string) { waitMarker(t, work, "point-001-*") }},
		{"SIGINT in the stop", "1s", func(t *testing.T, work string) {
			// The generator's JSON is there: the window is over and the
			// harness is stopping the server (60 s of grace).
			waitFile(t, work, "point-001-*/load.json")
			time.Sleep(500 * time.Millisecond)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) { testHarnessInterrupted(t, tt.duration, tt.wait) })
	}
}

// testHarnessKilled SIGKILLs the harness during a point, with a target
// whose command is a launcher script (the server is the script's child)
// and, as root, during the headroom probe, whose generator runs in a
// cgroup of its own; OUT held an earlier run's document. Nothing can run
// in the harness then, so only the parent-death signal set on its
// children can take them down: the script, its server, the generator
// and their supervisors are gone within seconds, the cgroups are
// removed, and OUT is this run's in-progress document, not the old one.
func testHarnessKilled(t *testing.T) {
	root := os.Geteuid() == 0
	tg := refTarget(t)
	tg.Command = []string{"/bin/sh", "-c", shellJoin(tg.Command) + " & wait"}
	args := []string{"--batch-ladder", "10", "--conns-ladder", "10=2", "--duration", "3s"}
	pattern := "point-*"
	if root {
		// The probe follows a clean headline only: a sweep whose
		// headline ran on contended CPUs ends first, and is run again,
		// at most quietAttempts times in all.
		args, pattern = append(args, "--headroom-probe", "0.5"), "point-*-headroom_probe-*"
	} else {
		t.Log("not root: killed in its first point, without the headroom probe's cgroup")
	}
	old := result.Result{SchemaVersion: result.SchemaVersion, Regime: "an earlier run", Warnings: []string{}}
	old.Headline.Clean = true
	var cmd *exec.Cmd
	var exited chan struct{}
	var work, out string
	for attempt := 1; ; attempt++ {
		work, out = t.TempDir(), filepath.Join(t.TempDir(), "out.json")
		if err := outfile.Write(out, &old); err != nil {
			t.Fatal(err)
		}
		cmd = ceilingSweep(t, tg, work, out, nil, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited = make(chan struct{})
		go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(cmd, exited)
		t.Cleanup(func(c *exec.Cmd, done chan struct{}) func() {
			return func() { _ = c.Process.Kill(); <-done }
		}(cmd, exited))
		if reachPoint(t, work, pattern, exited) {
			break
		}
		if attempt == quietAttempts {
			notQuiet(t, "the sweep ended before its headroom probe %d times (no clean headline on this machine now)", attempt)
		}
		t.Logf("attempt %d of %d ended before its headroom probe (no clean headline), trying again", attempt, quietAttempts)
		testenv.WaitForSteal(t, quietStealPct)
	}
	owner := strconv.Itoa(cmd.Process.Pid) + "."
	before := withEnv(supervise.MarkerEnv, owner)
	var server int
	for pid, comm := range before {
		if comm == "refserver" {
			server = pid
		}
	}
	if server == 0 {
		t.Fatalf("no refserver among the harness's marked processes %v", before)
	}
	if st, err := supervise.ReadStat(server); err != nil || before[st.PPid] != "sh" {
		t.Fatalf("refserver's parent is %d (%s), want the launcher script", st.PPid, before[st.PPid])
	}
	if kids, _ := supervise.Descendants(cmd.Process.Pid); len(kids) < 2 {
		t.Fatalf("the harness has children %v, want the server's and the generator's supervisors", kids)
	}
	cgroups := func() []string {
		var out []string
		for _, p := range pinning.CgroupParents() {
			m, _ := filepath.Glob(filepath.Join(p.Dir, "ceiling-*-"+owner+"*"))
			out = append(out, m...)
		}
		return out
	}
	if root && !slices.ContainsFunc(cgroups(), func(c string) bool { return strings.Contains(filepath.Base(c), "headroom") }) {
		t.Fatalf("no headroom cgroup of harness %d during its probe: %v", cmd.Process.Pid, cgroups())
	}
	t.Logf("before SIGKILL: processes %v, cgroups %v", before, cgroups())
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	killed := time.Now()
	waitNone(t, cmd.Process.Pid, 10*time.Second)
	for deadline := time.Now().Add(5 * time.Second); len(cgroups()) > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if left := cgroups(); len(left) > 0 {
		t.Errorf("cgroups left %s after the SIGKILL: %v", time.Since(killed).Round(time.Millisecond), left)
	}
	if left := waitLeftGone(t, 10*time.Second); len(left) > 0 {
		t.Errorf("10 s after the harness was SIGKILLed, still running: %v", left)
	}
	t.Logf("the whole tree (%d processes) and its cgroups were gone %s after the SIGKILL", len(before), time.Since(killed).Round(time.Millisecond))
	r := readResult(t, out)
	if r.Regime == "an earlier run" || !r.Partial || !strings.Contains(r.PartialReason, "in progress") {
		t.Fatalf("after SIGKILL OUT is partial %v %q (regime %q): want this run's in-progress document", r.Partial, r.PartialReason, r.Regime)
	}
	if root && (len(r.Curve) == 0 || slices.ContainsFunc(r.Curve, func(p result.Point) bool { return p.Status != result.StatusOK })) {
		t.Errorf("curve %+v: want the points done before the probe, measured", r.Curve)
	}
}

// testHarnessInterrupted interrupts the harness whose server ignores
// SIGTERM and has a stop_grace of 60 s, inside a point's window or while
// the harness waits out the grace of a finished point's stop. Either way
// it writes the partial result and exits 1 within seconds (the grace an
// interrupt leaves is bounded), the server's SIGKILL is recorded, no
// process outlives it, and an interrupted point is not in the curve (nor
// counted failed), where one measured before the interrupt is.
func testHarnessInterrupted(t *testing.T, duration string, wait func(t *testing.T, work string)) {
	work := t.TempDir()
	out := filepath.Join(t.TempDir(), "out.json")
	cmd := ceilingSweep(t, stubbornTarget(t, "60s"), work, out, nil,
		"--batch-ladder", "10", "--conns-ladder", "10=2,4", "--duration", duration)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	wait(t, work)
	kids, _ := supervise.Descendants(cmd.Process.Pid)
	if len(kids) < 2 {
		t.Errorf("before SIGINT the harness has children %v, want the server and the generator", kids)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(sent)
	t.Logf("exit %v after %s\nstderr:\n%s", err, took, stderr.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want status 1", err)
	}
	// The grace is min(60s, 2s): far below the target's 60 s even on a
	// loaded machine.
	if took > 20*time.Second {
		t.Errorf("the harness took %s after SIGINT (stop_grace 60s, bounded grace %s)", took, harness.MaxInterruptGrace)
	}
	for _, pid := range kids {
		if supervise.Alive(pid) {
			t.Errorf("process %d outlived the harness", pid)
		}
	}
	r := readResult(t, out)
	if !r.Partial || !strings.Contains(r.PartialReason, "interrupted") {
		t.Errorf("partial %v %q", r.Partial, r.PartialReason)
	}
	all := strings.Join(r.Warnings, "\n")
	if !strings.Contains(all, "server did not exit within its grace after SIGTERM") || !strings.Contains(all, "SIGKILLed") {
		t.Errorf("warnings lack the escalation to SIGKILL:\n%s", all)
	}
	if duration == "20s" {
		if len(r.Curve) != 0 {
			t.Errorf("curve %+v: the interrupted point must not be in it (nor counted failed)", r.Curve)
		}
		if !strings.Contains(all, "point 1 (batch 10, 2 connections, rep 0) was interrupted") {
			t.Errorf("warnings lack the interrupted point:\n%s", all)
		}
		return
	}
	// Interrupted after its window: the point was measured and stays,
	// with the SIGKILL its server took.
	if len(r.Curve) != 1 || r.Curve[0].Status != result.StatusOK || len(r.Curve[0].Escalated) != 1 || r.Curve[0].Escalated[0] != "server" {
		t.Errorf("curve %+v: want point 1 measured, its server escalated", r.Curve)
	}
}
