//go:build e2e

package attrib

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestMain turns the test binary into a duty-cycled hog when asked: busy
// for duty of every 10 ms, asleep for the rest, pinned to one CPU, for a
// bounded time.
func TestMain(m *testing.M) {
	if d := os.Getenv("ATTRIB_HOG_DUTY"); d != "" {
		os.Exit(hog(d, os.Getenv("ATTRIB_HOG_CPU")))
	}
	os.Exit(m.Run())
}

func hog(dutyS, cpuS string) int {
	duty, err1 := strconv.ParseFloat(dutyS, 64)
	cpu, err2 := strconv.Atoi(cpuS)
	if err1 != nil || err2 != nil {
		return 2
	}
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	// Every thread of the process, not only this one: the runtime's
	// own (sysmon, the GC's) run too, and are the process's time. A
	// thread made later inherits its maker's set; the second pass takes
	// one made during the first.
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return 3
		}
		for _, task := range tasks {
			tid, _ := strconv.Atoi(task.Name())
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return 3
			}
		}
	}
	const period = 10 * time.Millisecond
	busy := time.Duration(duty * float64(period))
	end := time.Now().Add(20 * time.Second)
	for time.Now().Before(end) {
		t0 := time.Now()
		for time.Since(t0) < busy {
		}
		time.Sleep(period - time.Since(t0))
	}
	return 0
}

func startHog(t *testing.T, duty float64, cpu int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("ATTRIB_HOG_DUTY=%g", duty), fmt.Sprintf("ATTRIB_HOG_CPU=%d", cpu))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	time.Sleep(200 * time.Millisecond) // pinned and cycling
	return cmd.Process.Pid
}

func needCPUs(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc")
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || !set.IsSet(0) || !set.IsSet(1) {
		t.Skip("needs CPUs 0 and 1")
	}
}

// testDutyCycledHogsAreNamed: a hog taking 5%, 10% and 25% of one CPU is
// charged to that CPU, by name and pid, and not to the other.
func testDutyCycledHogsAreNamed(t *testing.T) {
	needCPUs(t)
	for _, duty := range []float64{0.05, 0.10, 0.25} {
		for _, cpu := range []int{0, 1} {
			t.Run(fmt.Sprintf("%.0f%%_cpu%d", duty*100, cpu), func(t *testing.T) {
				pid := startHog(t, duty, cpu)
				s := Start(context.Background(), 250*time.Millisecond, Roots{})
				time.Sleep(2 * time.Second)
				r := s.Stop()
				if r.Err != nil || r.Scans < 8 {
					t.Fatalf("scans %d, err %v", r.Scans, r.Err)
				}
				on, off := r.Share([]int{cpu}), r.Share([]int{1 - cpu})
				var got float64
				for _, n := range on.Tasks {
					if n.Pid == pid {
						got = n.Fraction
					}
				}
				t.Logf("duty %.0f%% on cpu %d: hog %.1f%%, foreign %.1f%% here, %.1f%% on the other; harness %.1f%%, kernel %.1f%%; tasks %+v",
					duty*100, cpu, got*100, on.Foreign*100, off.Foreign*100, on.Harness*100, on.Kernel*100, on.Tasks)
				if got < duty*0.6 || got > duty*1.5+0.02 {
					t.Errorf("the hog's share of cpu %d is %.1f%%, want about %.0f%%", cpu, got*100, duty*100)
				}
				if on.Foreign < got {
					t.Errorf("foreign %.3f below the hog's %.3f", on.Foreign, got)
				}
				for _, n := range off.Tasks {
					if n.Pid == pid {
						t.Logf("the hog on cpu %d: %.2f%%", 1-cpu, n.Fraction*100)
						if n.Fraction > 0.01 {
							t.Errorf("the hog pinned to cpu %d was charged %.1f%% of cpu %d", cpu, n.Fraction*100, 1-cpu)
						}
					}
				}
			})
		}
	}
}

// testRootsAreNotForeign: a process named as the server's root, and its
// child, are the server's; the harness's own busy thread is the harness's.
func testRootsAreNotForeign(t *testing.T) {
	needCPUs(t)
	pid := startHog(t, 0.25, 1)
	s := Start(context.Background(), 250*time.Millisecond, Roots{Server: []int{pid}})
	done := make(chan struct{})
	go func() { // the harness's own work on cpu 0
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(0)
		_ = unix.SchedSetaffinity(0, &set)
		for t0 := time.Now(); time.Since(t0) < time.Second; {
		}
		close(done)
	}()
	time.Sleep(1500 * time.Millisecond)
	<-done
	r := s.Stop()
	srv, h := r.Share([]int{1}), r.Share([]int{0})
	t.Logf("cpu 1: %+v; cpu 0: %+v", srv, h)
	if srv.Server < 0.15 {
		t.Errorf("cpu 1: server %.2f, want the 25%% hog as the server's", srv.Server)
	}
	if h.Harness < 0.4 {
		t.Errorf("cpu 0: harness %.2f, want the busy harness thread", h.Harness)
	}
	for _, n := range append(srv.Tasks, h.Tasks...) {
		if n.Pid == pid || n.Pid == os.Getpid() {
			t.Errorf("%+v named as foreign", n)
		}
	}
}

// TestAttribution: who used a CPU over a real window: hogs taking 5%, 10%
// and 25% of one CPU are charged to it, by name and pid, and not to the
// other; the server's roots and their children are the server's and the
// harness's own busy thread the harness's.
func TestAttribution(t *testing.T) {
	t.Run("duty cycled hogs are named", testDutyCycledHogsAreNamed)
	t.Run("roots are not foreign", testRootsAreNotForeign)
}
