//go:build linux

package pinning

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// run starts cmd with Start and returns its stdout, stderr and exit error.
func run(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	c, err := Start(cmd)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = unix.Kill(-c.Pid(), unix.SIGKILL) })
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("child %d did not exit within 30s", c.Pid())
	}
	return out.String(), errb.String(), c.Wait()
}

func lastCPU(t *testing.T) int {
	t.Helper()
	online, err := Online()
	if err != nil {
		t.Fatal(err)
	}
	return online[len(online)-1]
}

func TestCommandPinsShellAndItsChild(t *testing.T) {
	for _, cpu := range []int{0, lastCPU(t)} {
		cmd := Command(Spec{CPUs: CPUSet{cpu}}, "/bin/sh", "-c",
			`grep Cpus_allowed_list /proc/$$/status; cat /proc/self/status | grep Cpus_allowed_list`)
		out, errOut, err := run(t, cmd)
		if err != nil {
			t.Fatalf("cpu %d: %v; stderr: %s", cpu, err, errOut)
		}
		want := strings.Repeat("Cpus_allowed_list:\t"+strconv.Itoa(cpu)+"\n", 2)
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("cpu %d (-want +got):\n%s", cpu, diff)
		}
	}
}

func TestCommandPinsEveryThread(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cpu := lastCPU(t)
	cmd := Command(Spec{CPUs: CPUSet{cpu}}, self)
	cmd.Env = append(cmd.Env, helperEnv+"=threads")
	out, errOut, err := run(t, cmd)
	if err != nil {
		t.Fatalf("%v; stderr: %s", err, errOut)
	}
	tasks := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		switch f[0] {
		case "task":
			tasks++
			if f[2] != strconv.Itoa(cpu) {
				t.Errorf("thread %s has Cpus_allowed_list %s, want %d", f[1], f[2], cpu)
			}
		case "gomaxprocs":
			if f[1] != "1" {
				t.Errorf("GOMAXPROCS = %s in a child pinned to one cpu, want 1", f[1])
			}
		case "marker":
			if f[1] != "false" {
				t.Errorf("%s still in the target's environment", envSpec)
			}
		default:
			t.Errorf("unexpected helper output %q", line)
		}
	}
	if tasks < 2 {
		t.Errorf("saw %d threads, want several (output %q)", tasks, out)
	}
}

func TestCommandRaisesNoFile(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	aboveHard := lim.Max + 1000
	// Whether a process may raise its hard limit (root with
	// CAP_SYS_RESOURCE) decides the outcome; ask a shell as the oracle.
	wantAbove := lim.Max // not allowed: the soft limit stops at the hard one
	if exec.Command("/bin/sh", "-c", "ulimit -Hn "+strconv.FormatUint(aboveHard, 10)).Run() == nil {
		wantAbove = aboveHard
	}
	tests := []struct {
		name string
		want uint64 // spec
		soft uint64 // what the child must see
	}{
		{"below hard", min(lim.Max, 4096) - 7, min(lim.Max, 4096) - 7},
		{"above hard", aboveHard, wantAbove},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := Command(Spec{CPUs: CPUSet{0}, NoFile: tt.want}, "/bin/sh", "-c", "ulimit -n")
			out, errOut, err := run(t, cmd)
			if err != nil {
				t.Fatalf("%v; stderr: %s", err, errOut)
			}
			if got := strings.TrimSpace(out); got != strconv.FormatUint(tt.soft, 10) {
				t.Errorf("child's soft RLIMIT_NOFILE = %s, want %d (asked %d, hard %d)", got, tt.soft, tt.want, lim.Max)
			}
		})
	}
}

func TestCommandBadTarget(t *testing.T) {
	cmd := Command(Spec{CPUs: CPUSet{0}}, "/nonexistent/ceiling-target", "-x")
	_, errOut, err := run(t, cmd)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 {
		t.Fatalf("err = %v, want exit status 127", err)
	}
	if !strings.Contains(errOut, "ceiling pin: cannot exec target") || !strings.Contains(errOut, "/nonexistent/ceiling-target") {
		t.Errorf("stderr %q does not explain the failure", errOut)
	}
}

func TestCommandReplacedEnvFailsLoudly(t *testing.T) {
	cmd := Command(Spec{CPUs: CPUSet{0}}, "/bin/true")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	_, errOut, err := run(t, cmd)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 {
		t.Fatalf("err = %v, want exit status 127", err)
	}
	if !strings.Contains(errOut, "cmd.Env replaced") {
		t.Errorf("stderr %q does not say why", errOut)
	}
}

func TestCommandSysProcAttr(t *testing.T) {
	cmd := Command(Spec{}, "/bin/true")
	if !cmd.SysProcAttr.Setpgid || cmd.SysProcAttr.Pdeathsig != unix.SIGKILL {
		t.Errorf("SysProcAttr = %+v, want Setpgid and Pdeathsig SIGKILL", cmd.SysProcAttr)
	}
}

func TestGrantedAndNoFileOfLiveChild(t *testing.T) {
	cpu := lastCPU(t)
	cmd := Command(Spec{CPUs: CPUSet{cpu}, NoFile: 3000}, "/bin/sh", "-c", "read x")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = unix.Kill(-c.Pid(), unix.SIGKILL); _ = c.Wait() })
	// Wait until the trampoline has exec'ed the shell.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(c.Pid()) + "/comm"); string(comm) == "sh\n" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, err := Granted(c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CPUSet{cpu}, got); diff != "" {
		t.Errorf("Granted (-want +got):\n%s", diff)
	}
	n, err := NoFile(c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if n != 3000 {
		t.Errorf("NoFile(child) = %d, want 3000", n)
	}
	if pg, err := unix.Getpgid(c.Pid()); err != nil || pg != c.Pid() {
		t.Errorf("child's process group = %d (%v), want its own (%d)", pg, err, c.Pid())
	}
	if self, err := SelfNoFile(); err != nil || self == 0 {
		t.Errorf("SelfNoFile = %d, %v", self, err)
	}
}

func TestCommandRefusedWithoutInit(t *testing.T) {
	initCalled.Store(false)
	defer initCalled.Store(true)
	cmd := Command(Spec{CPUs: CPUSet{0}}, "/bin/true")
	if _, err := Start(cmd); err == nil || !strings.Contains(err.Error(), "Init was not called") {
		t.Errorf("Start without Init: %v", err)
	}
}
