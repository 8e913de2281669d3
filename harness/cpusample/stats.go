package cpusample

import (
	"math"
	"slices"
)

// Stats is the CPU a set of processes used over a window.
type Stats struct {
	// Samples is the number of intervals measured (ticks, plus the window's
	// end when it fell at least half an interval after the last tick).
	Samples int
	// MeanCores is CPU seconds / wall seconds over the whole window.
	MeanCores float64
	// P95Cores is the 95th percentile (nearest rank) of the per-interval
	// core usage: how busy the busiest stretches were.
	P95Cores float64
	// UserSeconds and SystemSeconds are the CPU used in the window (all
	// threads, and processes that exited during it up to their last sample).
	UserSeconds, SystemSeconds float64
	// RunDelaySeconds is the time the tree's threads were runnable but
	// waiting for a CPU (schedstat run_delay), summed over threads: work
	// that was ready but not run. Divided by WallSeconds it is the average
	// number of threads kept waiting; 0 where the kernel has no schedstat.
	RunDelaySeconds float64
	// WallSeconds is the window's length.
	WallSeconds float64
	// Processes is the number of distinct processes seen; 0 means nothing
	// could be sampled (the process had already gone).
	Processes int
}

// Fraction is MeanCores and P95Cores as fractions of pinned cores (1.0:
// every pinned core busy all the time). It is 0, 0 for pinned <= 0.
func (s Stats) Fraction(pinned int) (mean, p95 float64) {
	if pinned <= 0 {
		return 0, 0
	}
	return s.MeanCores / float64(pinned), s.P95Cores / float64(pinned)
}

// p95 is the nearest-rank 95th percentile; 0 for no values.
func p95(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := int(math.Ceil(0.95 * float64(len(s))))
	return s[rank-1]
}
