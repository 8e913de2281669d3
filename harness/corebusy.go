package harness

import (
	"fmt"

	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/shirou/gopsutil/v3/cpu"
)

// coreSnap is the cumulative busy and total seconds of some CPUs
// (/proc/stat), to tell how busy a side's pinned cores were with anything
// at all: its own processes, other processes that were not pinned away,
// interrupts, a hypervisor's steal. A process tree's CPU alone cannot see
// a core that was full of someone else's work.
type coreSnap struct{ busy, total float64 }

func snapCores(set pinning.CPUSet) (coreSnap, bool) {
	times, err := cpu.Times(true)
	if err != nil {
		return coreSnap{}, false
	}
	var s coreSnap
	n := 0
	for _, t := range times {
		var c int
		if _, err := fmt.Sscanf(t.CPU, "cpu%d", &c); err != nil || !set.Contains(c) {
			continue
		}
		total := t.Total()
		s.total += total
		s.busy += total - t.Idle - t.Iowait
		n++
	}
	return s, n == len(set) && n > 0
}

// busyFraction is the fraction of the window the CPUs were busy, or -1
// when it cannot be told. A fraction outside [0, 1] beyond rounding means
// the counters went wrong (a CPU went offline, a counter wrapped): unknown,
// not clamped into a plausible figure.
func busyFraction(a, b coreSnap, okA, okB bool) float64 {
	dt := b.total - a.total
	if !okA || !okB || dt <= 0 {
		return -1
	}
	const rounding = 1e-9
	f := (b.busy - a.busy) / dt
	if f < -rounding || f > 1+rounding {
		return -1
	}
	return min(max(f, 0), 1)
}
