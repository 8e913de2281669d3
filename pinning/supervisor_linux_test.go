//go:build linux

package pinning

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// alive: pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func waitDead(t *testing.T, pid int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive after %s", pid, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startSupervised starts script under a supervisor and reads the first
// line it prints (a pid); the supervisor's stdout is a pipe.
func startSupervised(t *testing.T, spec Spec, script string) (*Child, int, io.Reader) {
	t.Helper()
	spec.Supervise = true
	cmd := Command(spec, "/bin/sh", "-c", script)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	c, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Kill(-c.Pid(), unix.SIGKILL) })
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("the script printed no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the script printed %q, want a pid", line)
	}
	t.Cleanup(func() { _ = unix.Kill(pid, unix.SIGKILL) })
	return c, pid, br
}

func waitChild(t *testing.T, c *Child) error {
	t.Helper()
	select {
	case <-c.Done():
		return c.Wait()
	case <-time.After(30 * time.Second):
		t.Fatalf("supervisor %d did not exit within 30s", c.Pid())
		return nil
	}
}

func signalOf(err error) syscall.Signal {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

// A process that left the target's session (setsid) is out of reach of a
// process-group kill; the supervisor, its subreaper, still stops it. (A
// SIGTERM to the supervisor is what the parent-death signal sends.)
func TestSupervisorStopsWhatLeftTheSession(t *testing.T) {
	c, daemon, _ := startSupervised(t, Spec{}, `setsid sleep 60 & echo $!; exec sleep 60`)
	comm, _ := os.ReadFile("/proc/" + strconv.Itoa(c.Pid()) + "/comm")
	if got := strings.TrimSpace(string(comm)); got != SupervisorComm {
		t.Errorf("supervisor's name %q, want %q", got, SupervisorComm)
	}
	deadline := time.Now().Add(5 * time.Second)
	for sid, _ := unix.Getsid(daemon); sid != daemon; sid, _ = unix.Getsid(daemon) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon %d is in session %d, want its own", daemon, sid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := unix.Kill(c.Pid(), unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := waitChild(t, c)
	if sig := signalOf(err); sig != unix.SIGTERM {
		t.Errorf("supervisor ended with %v, want the target's death by SIGTERM", err)
	}
	waitDead(t, daemon, 5*time.Second)
}

// The target exits by itself: what it left behind goes too, and the
// supervisor exits with the target's status.
func TestSupervisorEndsTheTreeWithTheTarget(t *testing.T) {
	c, daemon, _ := startSupervised(t, Spec{}, `(setsid sleep 60 & echo $!); exit 3`)
	err := waitChild(t, c)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("supervisor ended with %v, want exit status 3", err)
	}
	waitDead(t, daemon, 5*time.Second)
}

// A tree that ignores SIGTERM is SIGKILLed on SignalKillTree.
func TestSupervisorKillTree(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	c, daemon, _ := startSupervised(t, Spec{}, `trap '' TERM; setsid sh -c 'trap "" TERM; touch "$0"; while :; do sleep 1; done' `+ready+` & echo $!; wait`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon never set its TERM trap")
		}
	}
	_ = unix.Kill(c.Pid(), SignalStopTree)
	time.Sleep(300 * time.Millisecond)
	if !alive(daemon) || !alive(c.Pid()) {
		t.Fatal("a TERM-ignoring tree ended on SIGTERM: the test proves nothing")
	}
	_ = unix.Kill(c.Pid(), SignalKillTree)
	err := waitChild(t, c)
	if sig := signalOf(err); sig != unix.SIGKILL {
		t.Errorf("supervisor ended with %v, want the target's death by SIGKILL", err)
	}
	waitDead(t, daemon, 5*time.Second)
}

// The supervisor and its target are pinned and limited like a plain
// trampoline's target.
func TestSupervisorPinsItselfAndTarget(t *testing.T) {
	cpu := lastCPU(t)
	c, target, _ := startSupervised(t, Spec{CPUs: CPUSet{cpu}, NoFile: 3000}, `echo $$; exec sleep 60`)
	for _, pid := range []int{c.Pid(), target} {
		got, err := Granted(pid)
		if err != nil || got.String() != strconv.Itoa(cpu) {
			t.Errorf("Granted(%d) = %s, %v; want %d", pid, got, err, cpu)
		}
		if n, err := NoFile(pid); err != nil || n != 3000 {
			t.Errorf("NoFile(%d) = %d, %v; want 3000", pid, n, err)
		}
	}
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(target) + "/environ")
	if strings.Contains(string(b), envSpec+"=") {
		t.Errorf("the target's environment carries %s", envSpec)
	}
	_ = unix.Kill(c.Pid(), unix.SIGTERM)
	_ = waitChild(t, c)
}

// A container holds the tree wherever its processes go, and Kill empties
// it.
func TestContainerKill(t *testing.T) {
	ct, err := NewContainer("ceiling-test-" + strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Skipf("no writable cgroup here: %v", err)
	}
	t.Cleanup(func() { _ = ct.Remove() })
	c, daemon, _ := startSupervised(t, Spec{Contain: ct.Path}, `setsid sleep 60 & echo $!; exec sleep 60`)
	procs, err := ct.Procs()
	if err != nil {
		t.Fatal(err)
	}
	has := map[int]bool{}
	for _, p := range procs {
		has[p] = true
	}
	if !has[c.Pid()] || !has[daemon] {
		t.Errorf("cgroup %s holds %v, want the supervisor %d and the daemon %d", ct.Path, procs, c.Pid(), daemon)
	}
	if err := ct.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = waitChild(t, c)
	waitDead(t, daemon, 5*time.Second)
	if err := ct.Remove(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(ct.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there: %v", ct.Path, err)
	}
	if at, err := ContainerAt(filepath.Dir(ct.Path)); err != nil || at.Version != ct.Version {
		t.Errorf("ContainerAt(parent) = %+v, %v; want version %d", at, err, ct.Version)
	}
}

func TestSupervisorSpecRoundTrip(t *testing.T) {
	in := Spec{CPUs: CPUSet{1}, Contain: "/sys/fs/cgroup/x;y", Supervise: true, OrphanGrace: 3 * time.Second, parent: 42}
	got, err := decodeSpec(in.encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Contain != in.Contain || !got.Supervise || got.parent != 42 || got.OrphanGrace != in.OrphanGrace {
		t.Errorf("round trip %+v -> %q -> %+v", in, in.encode(), got)
	}
}
