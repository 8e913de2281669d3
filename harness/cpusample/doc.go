// Package cpusample measures the CPU a process tree uses over a window:
// the server under test (its whole tree) and the generator, during a
// point's measured window.
//
// # API
//
//	s := cpusample.Start(ctx, cpusample.DefaultInterval, cpusample.Tree(pid))
//	... // the measured window
//	st := s.Stop() // Stats{Samples, MeanCores, P95Cores, UserSeconds, SystemSeconds, RunDelaySeconds, WallSeconds, Processes}
//	mean, p95 := st.Fraction(len(pinnedCPUs))
//
// Start takes the first sample synchronously (the window opens when Start
// returns) and then one every interval (250 ms by default) until Stop,
// which takes the last one (the window closes then) and returns the Stats;
// Stop is idempotent. Start it when the generator's --measure-marker file
// appears and Stop it when the generator's window ends. If ctx ends first,
// ticking stops and Stop still closes the window.
//
// A Source says which processes to read at each tick: Tree(root) is root
// plus every descendant, re-discovered from /proc every tick (so the
// server's late children and a GENERATOR wrapper's real generator are
// counted); PIDs(pids...) is a fixed list.
//
// # What is counted
//
// At every tick each process's cumulative user and system time is read
// with gopsutil (process.Times: /proc/PID/stat utime and stime, which
// cover all of the process's threads, live and exited). The sampler keeps
// the last-seen times of every process it ever saw, keyed by pid and start
// time (so a reused pid is a new process), and the window's CPU is the sum
// of those at the end minus the sum at the start. A child that exits
// mid-window keeps what it used up to its last sample; what it used after
// that (at most one interval), and a process born and gone between two
// ticks, are missed: sampling cannot see them.
//
// Per interval, cores = CPU seconds / wall seconds between two samples.
// MeanCores is the window's total CPU / wall time; P95Cores is the
// nearest-rank 95th percentile of the per-interval values (with fewer
// than 20 intervals that is the busiest interval). A last interval shorter
// than half the period is merged into the one before it, because CPU times
// have 10 ms resolution. Fraction divides both by the number of pinned
// cores: 1.0 means every pinned core was busy all the time.
//
// RunDelaySeconds sums, over every thread of the tree, the time it was
// runnable but waiting for a CPU (/proc/PID/task/TID/schedstat run_delay,
// last-seen values kept like the CPU times): work that was ready but not
// run. It is evidence that a side was short of CPU that does not depend on
// the program reporting it itself (a GENERATOR may not).
//
// Mapping to result.CPUStats: Samples, MeanCores, P95Cores, UserSeconds,
// SystemSeconds as they are; PinnedCores = len(cpus); FractionMean and
// FractionP95 from Fraction.
package cpusample
