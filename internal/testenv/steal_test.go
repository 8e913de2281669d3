package testenv

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Steal reads /proc/stat's cpu line: a share between 0 and 100 where
// the kernel has one, nothing made up where it has none.
func TestSteal(t *testing.T) {
	pct, ok := Steal(20 * time.Millisecond)
	if _, err := os.Stat("/proc/stat"); err != nil {
		if ok {
			t.Errorf("no /proc/stat, yet Steal said %.1f%%", pct)
		}
		return
	}
	if !ok || pct < 0 || pct > 100 {
		t.Errorf("Steal = %.1f%%, %v; want a share read off /proc/stat", pct, ok)
	}
	s, total, ok := stealTicks()
	if !ok || total == 0 || s > total {
		t.Errorf("stealTicks = %d of %d, %v", s, total, ok)
	}
}

// The load Steal reads under makes round trips between pinned threads
// where there are two CPUs or more (each pair one at least, however soon
// it is stopped), stop ends every thread of it, and no
// thread of this process is left pinned: each thread's CPU set is what
// it was (a thread left on one CPU made a sweep of the same process see
// one CPU, and gave it to the children forked from it).
func TestWakeLoad(t *testing.T) {
	before := threadAffinities(t)
	trips := wakeLoad()()
	if runtime.GOOS == "linux" && runtime.NumCPU() >= 2 && trips < int64(runtime.NumCPU()) {
		t.Errorf("%d round trips on %d CPUs, want one per pair at least", trips, runtime.NumCPU())
	}
	for tid, cpus := range threadAffinities(t) {
		if was, ok := before[tid]; ok && was != cpus || !ok && cpus != before[os.Getpid()] {
			t.Errorf("thread %d is on CPUs %s after the load, was %q (the process: %s)", tid, cpus, was, before[os.Getpid()])
		}
	}
}

// threadAffinities is each live thread's allowed CPUs, from
// /proc/self/task/TID/status (Cpus_allowed_list); none off Linux.
func threadAffinities(t *testing.T) map[int]string {
	t.Helper()
	out := map[int]string{}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return out
	}
	for _, e := range tasks {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				out[tid] = strings.TrimSpace(v)
			}
		}
	}
	return out
}
