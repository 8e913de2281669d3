//go:build linux

package pinning

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testenv"

	"golang.org/x/sys/unix"
)

func newThrottle(t *testing.T, cpus float64) *Throttle {
	t.Helper()
	th, err := NewThrottle("ceiling-test-"+strconv.Itoa(os.Getpid())+"-"+strings.ReplaceAll(t.Name(), "/", "_"), cpus)
	if err != nil {
		t.Skipf("no CPU cgroup to create here: %v", err)
	}
	t.Cleanup(func() {
		if err := th.Remove(); err != nil {
			t.Error(err)
		}
	})
	return th
}

func TestThrottleCapsTheChild(t *testing.T) {
	th := newThrottle(t, 0.2)
	cmd := Command(Spec{CPUs: CPUSet{lastCPU(t)}, Cgroup: th.Path}, "/bin/sh", "-c", "while :; do :; done")
	c, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	kill := func() {
		if !stopped {
			stopped = true
			_ = unix.Kill(-c.Pid(), unix.SIGKILL)
			_ = c.Wait()
		}
	}
	t.Cleanup(kill)
	// Wait for the exec, then measure the busy loop's CPU over a window.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(c.Pid()) + "/comm"); string(comm) == "sh\n" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	procs, err := os.ReadFile(filepath.Join(th.Path, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(procs)) != strconv.Itoa(c.Pid()) {
		t.Fatalf("cgroup.procs = %q, want the child %d", procs, c.Pid())
	}
	cpu0, t0 := procCPU(t, c.Pid()), time.Now()
	time.Sleep(time.Second)
	cpu1, wall := procCPU(t, c.Pid()), time.Since(t0).Seconds()
	used := (cpu1 - cpu0) / wall
	// The cap is 0.2 CPU per 100 ms period; one period's burst of slack.
	if used > 0.3 {
		t.Errorf("throttled busy loop used %.2f cores, cap 0.2", used)
	}
	st, err := th.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("used %.2f cores; %+v", used, st)
	if used > 0.15 && st.Throttled == 0 {
		t.Errorf("busy loop at the cap but cpu.stat counts no throttled period: %+v", st)
	}
	kill()
}

func TestNewThrottleRejectsBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		cpus float64
		want string
	}{
		{"a/b", 0.5, `bad cgroup name "a/b"`},
		{"", 0.5, `bad cgroup name ""`},
		{"ok", 0, "cap 0 CPUs"},
		{"ok", -1, "cap -1 CPUs"},
	} {
		_, err := NewThrottle(tt.name, tt.cpus)
		testenv.ErrContains(t, err, tt.want)
	}
}

func TestSpecRoundTrip(t *testing.T) {
	in := Spec{CPUs: CPUSet{0, 2, 3}, NoFile: 65536, Cgroup: "/sys/fs/cgroup/cpu/a;b=c"}
	got, err := decodeSpec(in.encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.CPUs.String() != in.CPUs.String() || got.NoFile != in.NoFile || got.Cgroup != in.Cgroup {
		t.Errorf("round trip %+v -> %q -> %+v", in, in.encode(), got)
	}
	if _, err := decodeSpec("cpus=0;bogus=1"); err == nil {
		t.Error("unknown key accepted")
	}
}

// procCPU is utime+stime of pid in seconds (USER_HZ 100).
func procCPU(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}
