//go:build e2e && linux

package supervise

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

// firstPid waits until the log holds a line that is a pid and returns it.
//
// The pid is the shell's background child, which runs "sh" (then
// "setsid", "env") until it execs its program: firstPid also waits
// (bounded) until it runs the program, so that a test's kill and its look at /proc find the program (a
// loaded machine once found "sh" there, and a leftover named so).
func firstPid(t *testing.T, logPath string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(logPath)
		if m := regexp.MustCompile(`(?m)^([0-9]+)$`).FindSubmatch(b); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			t.Cleanup(func() { _ = syscall.Kill(n, syscall.SIGKILL) })
			for time.Now().Before(deadline) {
				c, err := os.ReadFile("/proc/" + strconv.Itoa(n) + "/comm")
				if err != nil || !slices.Contains([]string{"sh\n", "setsid\n", "env\n"}, string(c)) {
					return n
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Fatalf("pid %d has not exec'ed its program after 20 s", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", logPath)
	return 0
}

func waitDead(t *testing.T, pid int, limit time.Duration) {
	t.Helper()
	if err := waitGone([]int{pid}, limit); err != nil {
		t.Fatal(err)
	}
}

// cgroupsOf lists the cgroups (any hierarchy) whose name carries runID.
func cgroupsOf(runID string) []string {
	var out []string
	for _, p := range pinning.CgroupParents() {
		m, _ := filepath.Glob(filepath.Join(p.Dir, "ceiling-*-"+runID+"-*"))
		out = append(out, m...)
	}
	return out
}

// harnessHelper runs this test binary as a harness that boots script
// supervised; it returns the helper, its RunID and the supervisor's pid.
func harnessHelper(t *testing.T, logPath, script string, throttle bool) (*exec.Cmd, string, int) {
	t.Helper()
	args := []string{logPath, script}
	if throttle {
		args = append(args, "throttle")
	}
	h, line := startHelper(t, "harness", args...)
	f := strings.Fields(line)
	if len(f) < 2 {
		t.Fatalf("harness helper said %q", line)
	}
	sup, _ := strconv.Atoi(f[1])
	t.Cleanup(func() { _ = syscall.Kill(sup, syscall.SIGKILL) })
	return h, f[0], sup
}

// A harness SIGKILLed outright: its supervisor, told by the parent-death
// signal, stops the whole tree, also a process that left the session, and
// removes its cgroup.
func testParentDeathTakesDaemonizedTree(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "server.log")
	h, runID, sup := harnessHelper(t, logPath, `setsid sleep 60 & echo $!; wait`, false)
	daemon := firstPid(t, logPath)
	if err := h.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = h.Wait()
	waitDead(t, daemon, 10*time.Second)
	waitDead(t, sup, 10*time.Second)
	if left := cgroupsOf(runID); len(left) > 0 {
		t.Errorf("cgroups left by the killed harness: %v", left)
	}
}

// A process started for the child by something outside its tree (as a
// service manager or an at daemon would) is beyond the subreaper; its
// marker gives it away: Stop kills it and reports it.
func testStopReportsEscapedProcess(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "spawn")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The spawner: started by the test, not by Start.
	spawner := exec.Command("/bin/sh", "-c", `read m < "$0"; `+MarkerEnv+`="$m" exec sleep 60`, fifo)
	spawner.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := spawner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-spawner.Process.Pid, syscall.SIGKILL); _ = spawner.Wait() })
	p := start(t, sh(`printf '%s\n' "$`+MarkerEnv+`" > `+fifo+`; echo ready; exec sleep 60`))
	if err := WaitReady(context.Background(), p, mustProbe(t, "log:ready"), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	pid := spawner.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for v, _ := environValue(pid, MarkerEnv); v != p.contain.marker; v, _ = environValue(pid, MarkerEnv) {
		if time.Now().After(deadline) {
			t.Fatalf("the spawned process never ran with the marker (has %q)", v)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.Stop(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := p.Escaped(); len(got) != 1 || got[0].Pid != pid || got[0].Command != "sleep" {
		t.Errorf("Escaped = %+v, want the spawned sleep %d", got, pid)
	}
	waitDead(t, pid, 5*time.Second)
}

// A process that left the tree (its supervisor died) and dropped the
// marker is still in the child's cgroup: Stop kills it and reports it.
func testCgroupHoldsWhatLeftTheTree(t *testing.T) {
	p := start(t, sh(`setsid env -u `+MarkerEnv+` sleep 60 & echo $!; wait`))
	if p.contain.cgroup == nil {
		t.Skip("no writable cgroup here")
	}
	daemon := firstPid(t, p.LogPath())
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil { // the supervisor
		t.Fatal(err)
	}
	waitExit(t, p)
	time.Sleep(100 * time.Millisecond)
	if !Alive(daemon) {
		t.Fatal("the daemon died with its supervisor: the test proves nothing")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	got := p.Escaped()
	if !slices.ContainsFunc(got, func(e EscapedProcess) bool { return e.Pid == daemon && e.Command == "sleep" }) {
		t.Errorf("Escaped = %+v, want the daemon %d", got, daemon)
	}
	waitDead(t, daemon, 5*time.Second)
	if _, err := os.Stat(p.contain.cgroup.Path); !os.IsNotExist(err) {
		t.Errorf("cgroup %s not removed: %v", p.contain.cgroup.Path, err)
	}
}

// What a run killed together with its supervisor left (a process that had
// left the session, its cgroup, a headroom throttle cgroup) is found by
// the next run, killed and removed; a live run's processes are not.
func testCleanLeftovers(t *testing.T) {
	live := start(t, sh(`setsid sleep 60 & echo $!; wait`))
	liveDaemon := firstPid(t, live.LogPath())

	logPath := filepath.Join(t.TempDir(), "server.log")
	h, runID, sup := harnessHelper(t, logPath, `setsid sleep 60 & echo $!; wait`, os.Geteuid() == 0)
	daemon := firstPid(t, logPath)
	// The supervisor first (as an OOM killer or kill -9 of everything
	// would), then the harness: nobody is left to clean up.
	_ = syscall.Kill(sup, syscall.SIGKILL)
	waitDead(t, sup, 10*time.Second)
	_ = h.Process.Signal(syscall.SIGKILL)
	_ = h.Wait()
	if !Alive(daemon) {
		t.Fatal("the daemon died with its supervisor: nothing is left over, the test proves nothing")
	}
	cgroups := cgroupsOf(runID)
	t.Logf("left over: daemon %d, cgroups %v", daemon, cgroups)

	if !Alive(daemon) {
		t.Skip("another run on this machine cleaned up the leftovers first")
	}
	left, err := CleanLeftovers()
	if err != nil {
		t.Error(err)
	}
	t.Logf("CleanLeftovers: %v", left)
	waitDead(t, daemon, 5*time.Second)
	if !slices.ContainsFunc(left, func(l Leftover) bool { return l.Owner == runID }) && len(cgroupsOf(runID)) == 0 {
		// All gone, none of it reported by us: another harness on this
		// machine (a concurrent test) cleaned up between the check above
		// and our call.
		t.Skip("another run on this machine cleaned up the leftovers first")
	}
	if !slices.ContainsFunc(left, func(l Leftover) bool { return l.Kind == "process" && l.Pid == daemon && l.Command == "sleep" }) {
		t.Errorf("leftovers %v do not name the daemon %d", left, daemon)
	}
	for _, cg := range cgroups {
		if !slices.ContainsFunc(left, func(l Leftover) bool { return l.Kind == "cgroup" && l.Path == cg }) {
			t.Errorf("leftovers %v do not name cgroup %s", left, cg)
		}
	}
	if still := cgroupsOf(runID); len(still) > 0 {
		t.Errorf("cgroups not removed: %v", still)
	}
	if w := DescribeLeftovers(left); !strings.Contains(w, "killed process ") || !strings.Contains(w, strconv.Itoa(daemon)) {
		t.Errorf("warning %q", w)
	}
	for _, pid := range []int{live.Pid(), liveDaemon} {
		if !Alive(pid) {
			t.Errorf("process %d of a live run was killed", pid)
		}
	}
	if c := live.contain.cgroup; c != nil {
		if _, err := os.Stat(c.Path); err != nil {
			t.Errorf("a live run's cgroup was removed: %v", err)
		}
	}
}
