//go:build e2e

package supervise

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

// No test here is parallel: OnSignal's test stops every live child.

func start(t *testing.T, spec Spec) *Proc {
	t.Helper()
	if spec.LogPath == "" {
		spec.LogPath = filepath.Join(t.TempDir(), "child.log")
	}
	if spec.Name == "" {
		spec.Name = "server"
	}
	p, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(time.Second); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return p
}

func sh(script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"-c", script}}
}

// freeAddr returns a loopback address nobody listens on (the kernel's
// pick, released again).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func waitExit(t *testing.T, p *Proc) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s (pid %d) still running after 30s", p.Name(), p.Pid())
	}
}

func mustProbe(t *testing.T, s string) Probe {
	t.Helper()
	pr, err := ParseProbe(s)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -2
}

func testStartLogsOutputAndExitStatus(t *testing.T) {
	p := start(t, Spec{Path: "/bin/sh", Args: []string{"-c", "echo to-stdout; echo to-stderr >&2; echo $GREETING; exit 3"}, Env: []string{"GREETING=hello"}})
	if p.Pid() <= 0 {
		t.Fatalf("pid %d", p.Pid())
	}
	waitExit(t, p)
	if !p.Exited() || exitCode(p.ExitErr()) != 3 || exitCode(p.Wait()) != 3 {
		t.Errorf("Exited=%v ExitErr=%v, want exit status 3", p.Exited(), p.ExitErr())
	}
	b, err := os.ReadFile(p.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "to-stdout\nto-stderr\nhello\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
}

func testStartPinsAndRaisesNoFile(t *testing.T) {
	online, err := pinning.Online()
	if err != nil {
		t.Skip(err)
	}
	cpu := online[len(online)-1]
	p := start(t, Spec{Path: "/bin/sh", Args: []string{"-c", "ulimit -n; grep Cpus_allowed_list /proc/self/status; echo done; sleep 60"}, CPUs: pinning.CPUSet{cpu}, NoFile: 4000})
	if err := WaitReady(context.Background(), p, mustProbe(t, "log:done"), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	got, err := pinning.Granted(p.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != strconv.Itoa(cpu) {
		t.Errorf("granted %s, want %d", got, cpu)
	}
	log, _ := os.ReadFile(p.LogPath())
	want := "4000\nCpus_allowed_list:\t" + strconv.Itoa(cpu) + "\ndone\n"
	if string(log) != want {
		t.Errorf("log %q, want %q", log, want)
	}
}

func testWaitReadyProbes(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	p := start(t, Spec{Path: self, Args: []string{addr}, Env: []string{helperEnv + "=serve"}})
	ctx := context.Background()
	for _, probe := range []string{"tcp:" + addr, "http://" + addr + "/health", "log:serving on 127\\.0\\.0\\.1:\\d+"} {
		if err := WaitReady(ctx, p, mustProbe(t, probe), 20*time.Second); err != nil {
			t.Errorf("probe %s: %v", probe, err)
		}
	}
	err = WaitReady(ctx, p, mustProbe(t, "http://"+addr+"/notready"), 300*time.Millisecond)
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v, want *NotReadyError naming the 503", err)
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Escalated() {
		t.Error("a Go server that honours SIGTERM needed SIGKILL")
	}
	if err := WaitPortFree(addr, 5*time.Second); err != nil {
		t.Errorf("after Stop: %v", err)
	}
}

func testWaitReadyNeverReady(t *testing.T) {
	p := start(t, sh("echo starting; exec sleep 60"))
	err := WaitReady(context.Background(), p, mustProbe(t, "tcp:"+freeAddr(t)), 400*time.Millisecond)
	var nr *NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("err = %v (%T), want *NotReadyError", err, err)
	}
	if nr.Timeout != 400*time.Millisecond || !strings.Contains(nr.Error(), "not ready after 400ms") {
		t.Errorf("error %q", nr)
	}
	if !strings.Contains(nr.LogTail, "starting") {
		t.Errorf("log tail %q lacks the server's output", nr.LogTail)
	}
	if p.Exited() {
		t.Error("WaitReady must not stop the process itself")
	}
}

func testWaitReadyExitsFirst(t *testing.T) {
	p := start(t, sh("echo boom-diagnostic; exit 3"))
	// A long timeout: the typed error must come from the exit, not the clock.
	err := WaitReady(context.Background(), p, mustProbe(t, "tcp:"+freeAddr(t)), 10*time.Minute)
	var ex *ExitedError
	if !errors.As(err, &ex) {
		t.Fatalf("err = %v (%T), want *ExitedError", err, err)
	}
	if exitCode(ex) != 3 || ex.Pid != p.Pid() || ex.LogTail != "boom-diagnostic" {
		t.Errorf("ExitedError %+v", ex)
	}
}

func testWaitReadyTrampolineCannotExec(t *testing.T) {
	p := start(t, Spec{Path: "/nonexistent/server", CPUs: pinning.CPUSet{0}})
	err := WaitReady(context.Background(), p, mustProbe(t, "tcp:"+freeAddr(t)), 10*time.Minute)
	var ex *ExitedError
	if !errors.As(err, &ex) || exitCode(ex) != 127 || !strings.Contains(ex.LogTail, "/nonexistent/server") {
		t.Fatalf("err = %v, tail %q: want exit 127 naming the program", err, ex.LogTail)
	}
}

func testWaitReadyContextCancelled(t *testing.T) {
	p := start(t, sh("exec sleep 60"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := WaitReady(ctx, p, mustProbe(t, "tcp:"+freeAddr(t)), time.Minute)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func testStopEscalatesToSIGKILL(t *testing.T) {
	p := start(t, sh(`trap '' TERM; echo ready; while :; do sleep 1; done`))
	if err := WaitReady(context.Background(), p, mustProbe(t, "log:ready"), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !p.Escalated() || !p.Exited() {
		t.Errorf("Escalated=%v Exited=%v, want both", p.Escalated(), p.Exited())
	}
	var ee *exec.ExitError
	if !errors.As(p.ExitErr(), &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("ExitErr = %v, want killed by SIGKILL", p.ExitErr())
	}
	if left, _ := GroupMembers(p.Pid()); len(left) != 0 {
		t.Errorf("group members left: %v", left)
	}
}

func testStopKillsTheGroup(t *testing.T) {
	p := start(t, sh(`sleep 60 & sleep 60 & echo ready; wait`))
	if err := WaitReady(context.Background(), p, mustProbe(t, "log:ready"), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	kids, err := Descendants(p.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 3 {
		t.Fatalf("descendants %v, want the shell (below the supervisor) and its 2 sleeps", kids)
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Escalated() {
		t.Error("sh honours SIGTERM; no SIGKILL should have been needed")
	}
	for _, k := range kids {
		if Alive(k) {
			t.Errorf("child %d of the server survived Stop", k)
		}
	}
	// Stop again: same answer, nothing to do.
	if err := p.Stop(time.Second); err != nil {
		t.Error(err)
	}
}

func testStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, Spec{Name: "server", Path: "/bin/sleep", Args: []string{"60"}})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	waitExit(t, p)
	if _, err := Start(ctx, Spec{Name: "server", Path: "/bin/true"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a done context: %v", err)
	}
}

func testParentDeathKillsChild(t *testing.T) {
	mid, line := startHelper(t, "intermediate", filepath.Join(t.TempDir(), "grandchild.log"))
	grandchild, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
	if !Alive(grandchild) {
		t.Fatalf("grandchild %d not running before the kill", grandchild)
	}
	if err := mid.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = mid.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for Alive(grandchild) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d outlived its SIGKILLed parent by 10s", grandchild)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testOnSignalStopsEveryChild(t *testing.T) {
	t.Cleanup(Live.reopen)
	a := start(t, sh("exec sleep 60"))
	b := start(t, sh(`trap '' TERM; echo ready; while :; do sleep 1; done`))
	if err := WaitReady(context.Background(), b, mustProbe(t, "log:ready"), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, stop := OnSignal(context.Background(), 300*time.Millisecond)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("context not cancelled by SIGINT")
	}
	if err := context.Cause(ctx); !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "interrupt") {
		t.Errorf("cause = %v, want ErrInterrupted naming the signal", err)
	}
	stop() // waits for KillAll
	for _, p := range []*Proc{a, b} {
		if !p.Exited() {
			t.Errorf("%d still running after the signal", p.Pid())
		}
	}
	if !b.Escalated() {
		t.Error("the TERM-ignoring child was not SIGKILLed")
	}
	if n := len(Live.Procs()); n != 0 {
		t.Errorf("%d children still registered", n)
	}
	if _, err := Start(context.Background(), Spec{Name: "server", Path: "/bin/true"}); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("Start after the signal: %v, want ErrShuttingDown", err)
	}
}

func testKillAll(t *testing.T) {
	a := start(t, sh("exec sleep 60"))
	b := start(t, sh("exec sleep 60"))
	if err := KillAll(time.Second); err != nil {
		t.Fatal(err)
	}
	if !a.Exited() || !b.Exited() {
		t.Error("KillAll left a child running")
	}
}

func testContextStopUsesSpecGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := sh(`trap '' TERM; echo ready; while :; do sleep 1; done`)
	spec.Name, spec.Grace, spec.LogPath = "server", 200*time.Millisecond, filepath.Join(t.TempDir(), "s.log")
	p, err := Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(time.Second) })
	if err := WaitReady(context.Background(), p, mustProbe(t, "log:ready"), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	cancel()
	waitExit(t, p) // a DefaultGrace of 5s would also pass; Escalated says SIGKILL came
	if !p.Escalated() {
		t.Error("a TERM-ignoring child stopped by ctx was not SIGKILLed")
	}
}

// TestStart: a supervised child, started for real: its output logged
// and its exit status kept, pinned and with its file limit raised, and
// WaitReady's answers (ready by each probe, never ready, exited first,
// not even exec'ed, interrupted).
func TestStart(t *testing.T) {
	t.Run("start logs output and exit status", testStartLogsOutputAndExitStatus)
	t.Run("start pins and raises nofile", testStartPinsAndRaisesNoFile)
	t.Run("wait ready probes", testWaitReadyProbes)
	t.Run("wait ready never ready", testWaitReadyNeverReady)
	t.Run("wait ready exits first", testWaitReadyExitsFirst)
	t.Run("wait ready trampoline cannot exec", testWaitReadyTrampolineCannotExec)
	t.Run("wait ready context cancelled", testWaitReadyContextCancelled)
}

// TestStop: a supervised child stopped for real: SIGTERM, then SIGKILL
// after its grace, its whole group, when its context ends (with its own
// grace), all at once (KillAll, OnSignal on SIGINT), and by the
// parent-death signal when its supervisor is killed.
func TestStop(t *testing.T) {
	t.Run("stop escalates to SIGKILL", testStopEscalatesToSIGKILL)
	t.Run("stop kills the group", testStopKillsTheGroup)
	t.Run("stops when context ends", testStopsWhenContextEnds)
	t.Run("context stop uses spec grace", testContextStopUsesSpecGrace)
	t.Run("kill all", testKillAll)
	t.Run("parent death kills child", testParentDeathKillsChild)
	t.Run("on signal stops every child", testOnSignalStopsEveryChild)
}

// startHelper runs this test binary as the helper role with args, and
// returns it with the first line it prints; it is killed at cleanup.
func startHelper(t *testing.T, role string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := exec.Command(self, args...)
	h.Env = append(os.Environ(), helperEnv+"="+role)
	h.Stderr = os.Stderr
	out, err := h.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Process.Kill(); _ = h.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s helper said nothing: %v", role, err)
	}
	return h, line
}
