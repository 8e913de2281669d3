package meter

import (
	"fmt"

	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
	"github.com/shirou/gopsutil/v3/cpu"
)

// CoreSnap is the cumulative busy, steal and total seconds of some CPUs
// (/proc/stat), to tell how busy a side's pinned cores were with anything
// at all: its own processes, other processes that were not pinned away,
// interrupts, a hypervisor's steal. A process tree's CPU alone cannot see
// a core that was full of someone else's work.
//
// Steal is the time a virtual CPU was runnable but the hypervisor ran
// another guest: on a shared cloud runner it is the neighbour that no
// process list shows. It is counted in busy too (it is not idle).
type CoreSnap struct {
	Busy  float64 `json:"busy_s"`
	Steal float64 `json:"steal_s"`
	Total float64 `json:"total_s"`
}

func snapCores(set pinning.CPUSet) (CoreSnap, bool) {
	times, err := cpu.Times(true)
	if err != nil {
		return CoreSnap{}, false
	}
	var s CoreSnap
	n := 0
	for _, t := range times {
		var c int
		if _, err := fmt.Sscanf(t.CPU, "cpu%d", &c); err != nil || !set.Contains(c) {
			continue
		}
		total := t.Total()
		s.Total += total
		s.Busy += total - t.Idle - t.Iowait
		s.Steal += t.Steal
		n++
	}
	return s, n == len(set) && n > 0
}

// pinnedCPU fills a side's PinnedBusy and StealFraction from the
// snapshots of its pinned CPUs taken at the window's start (a) and end (b).
func pinnedCPU(c *result.CPUStats, a, b CoreSnap, okA, okB bool) {
	c.PinnedBusy = busyFraction(a, b, okA, okB)
	c.StealFraction = stealFraction(a, b, okA, okB)
}

// busyFraction is the fraction of the window the CPUs were busy, or -1
// when it cannot be told. A fraction outside [0, 1] beyond rounding means
// the counters went wrong (a CPU went offline, a counter wrapped): unknown,
// not clamped into a plausible figure.
func busyFraction(a, b CoreSnap, okA, okB bool) float64 {
	dt := b.Total - a.Total
	if !okA || !okB || dt <= 0 {
		return -1
	}
	const rounding = 1e-9
	f := (b.Busy - a.Busy) / dt
	if f < -rounding || f > 1+rounding {
		return -1
	}
	return min(max(f, 0), 1)
}

// stealFraction is the fraction of the CPUs' time over the window that the
// hypervisor gave to someone else, as the counters say it (never clamped),
// or -1 when it cannot be told: a snapshot missing, no time passed, or the
// steal counter went backwards.
func stealFraction(a, b CoreSnap, okA, okB bool) float64 {
	dt := b.Total - a.Total
	ds := b.Steal - a.Steal
	if !okA || !okB || dt <= 0 || ds < 0 {
		return -1
	}
	return ds / dt
}

// attributeOverlap records, when the two sides' CPU sets overlap (allowed
// with ALLOW_OVERLAP, or forced on a one-CPU machine), how many cores of
// each side's pinned CPUs the other side is estimated to have used: its
// mean cores times the share of its CPUs that are shared (even spread
// assumed; exact when the sets are equal). That use is the sweep's own
// work, so Shared does not count it as contention; the overlap itself is
// warned about once for the whole result.
func attributeOverlap(srv, gen *result.CPUStats, srvSet, genSet pinning.CPUSet) {
	shared := len(pinning.Overlap(srvSet, genSet))
	if shared == 0 || len(srvSet) == 0 || len(genSet) == 0 {
		return
	}
	srv.OverlapCores = gen.MeanCores * float64(shared) / float64(len(genSet))
	gen.OverlapCores = srv.MeanCores * float64(shared) / float64(len(srvSet))
}
