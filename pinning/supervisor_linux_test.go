//go:build linux

package pinning

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testenv"

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
	in := Spec{CPUs: CPUSet{1}, Contain: "/sys/fs/cgroup/x;y", Supervise: true, OrphanGrace: 3 * time.Second, parent: 42,
		User: &syscall.Credential{Uid: 65534, Gid: 100, Groups: []uint32{7, 8}}}
	got, err := decodeSpec(in.encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Contain != in.Contain || !got.Supervise || got.parent != 42 || got.OrphanGrace != in.OrphanGrace ||
		got.User == nil || fmt.Sprint(*got.User) != fmt.Sprint(*in.User) {
		t.Errorf("round trip %+v -> %q -> %+v", in, in.encode(), got)
	}
	in.User = &syscall.Credential{Uid: 1, Gid: 2, Groups: []uint32{}}
	if got, err := decodeSpec(in.encode()); err != nil || got.User == nil || got.User.Groups == nil || len(got.User.Groups) != 0 {
		t.Errorf("no groups: %q -> %+v, %v; want an empty, non-nil list", in.encode(), got.User, err)
	}
	for _, bad := range []string{"user=1:2", "user=x:2:", "user=1:2:a"} {
		if _, err := decodeSpec(bad); err == nil {
			t.Errorf("decodeSpec(%q) accepted", bad)
		}
	}
}

// statusIDs reads the Uid, Gid and Groups lines of /proc/PID/status.
func statusIDs(t *testing.T, pid int) (uid, gid, groups string) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "Uid":
			uid = strings.Join(strings.Fields(v), " ")
		case "Gid":
			gid = strings.Join(strings.Fields(v), " ")
		case "Groups":
			groups = strings.TrimSpace(v)
		}
	}
	return uid, gid, groups
}

// With Spec.User the target runs as that user, with no supplementary
// group of ours, and the supervisor stays root: it still stops the
// target's whole tree, which the target's user could not prevent.
func TestSupervisorStartsTargetAsUser(t *testing.T) {
	testenv.NeedRoot(t, "the supervisor must be allowed to setuid")
	user := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	c, target, _ := startSupervised(t, Spec{User: user}, `echo $$; setsid sleep 60 & exec sleep 60`)
	uid, gid, groups := statusIDs(t, target)
	if uid != "65534 65534 65534 65534" || gid != "65534 65534 65534 65534" || groups != "" {
		t.Errorf("target %d: Uid %q, Gid %q, Groups %q; want 65534 for all four ids, no groups", target, uid, gid, groups)
	}
	if uid, _, _ := statusIDs(t, c.Pid()); !strings.HasPrefix(uid, "0 ") {
		t.Errorf("supervisor %d runs as Uid %q, want root", c.Pid(), uid)
	}
	daemons := descendants(c.Pid())
	if err := unix.Kill(c.Pid(), SignalKillTree); err != nil {
		t.Fatal(err)
	}
	_ = waitChild(t, c)
	for _, pid := range append(daemons, target) {
		waitDead(t, pid, 5*time.Second)
	}
}

// A target the user may not reach fails at exec with the reason, not as
// a server that never became ready.
func TestSupervisorTargetUnreachableByUser(t *testing.T) {
	testenv.NeedRoot(t, "the supervisor must be allowed to setuid")
	dir := t.TempDir() // 0700, root's
	prog := filepath.Join(dir, "server")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := Command(Spec{Supervise: true, User: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}, prog)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	c, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	err = waitChild(t, c)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 {
		t.Fatalf("supervisor exit %v, want 127", err)
	}
	for _, want := range []string{prog, "as uid 65534", "permission denied", "searchable by that user"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
}

// A user without the supervisor is refused before anything starts.
func TestCommandUserNeedsSupervisor(t *testing.T) {
	cmd := Command(Spec{User: &syscall.Credential{Uid: 65534, Gid: 65534}}, "/bin/true")
	if err := cmd.Run(); err == nil || !strings.Contains(err.Error(), "Spec.User needs Spec.Supervise") {
		t.Errorf("Run = %v, want the refusal", err)
	}
}
