// Package attrib says who used a set of CPUs over a measured window: the
// server under test, the generator, the harness itself, the kernel's
// threads, or someone else (foreign). A point is contended when foreign
// tasks ran on a side's pinned CPUs, and this package is how the harness
// knows, by name, instead of guessing from how busy the CPUs were.
//
// # Why attribution and not a residual
//
// The rule it replaces compared how busy a side's CPUs were (/proc/stat)
// with what its own process tree used, and called the difference beyond
// a margin "other work". That residual also holds the harness's own
// threads and the kernel's share of the sweep's packets (softirq work
// done on the side's CPUs), so it fired on a quiet machine when one side
// was nearly idle (a slow server leaves the generator at 7% of its core,
// and 15% more was the sweep's own), and it let a real tenant through
// whenever the tenant took no more than the margin. Attribution looks at
// every task instead.
//
// # How
//
//	s := attrib.Start(ctx, interval, attrib.Roots{Server: srvPids, Generator: genPids})
//	... // the measured window
//	rep := s.Stop()
//	share := rep.Share(cpus) // fractions of those CPUs' time, by class; foreign tasks named
//
// At the window's start and at every tick until Stop (the window's end),
// Start reads every thread on the machine: /proc/PID/task/TID/schedstat
// for its time on a CPU (nanoseconds) and /proc/PID/task/TID/stat for the
// CPU it last ran on, its flags and its name. A thread's run time since
// the previous tick is charged to that CPU. A thread pinned to one CPU
// (a `taskset -c 1` hog, the pinned server) is charged exactly; a thread
// the scheduler moves within an interval is charged to where it was at
// the tick, which over a window of many ticks estimates its spread.
//
// Each process is classed by walking its parents: a descendant of a
// server root is the server's, of a generator root the generator's, of
// the harness (this process) the harness's; a kernel thread
// (PF_KTHREAD: ksoftirqd, kworker, the per-CPU threads that do the
// sweep's network work when it overflows interrupt context) is the
// kernel's; anything else is foreign.
//
// # What it cannot see
//
//   - Work outside any task: hard and soft interrupts run in interrupt
//     context are in /proc/stat's irq and softirq columns and in no
//     task's schedstat. On loopback that is the sweep's own packets, so
//     it is not counted as foreign; it stays in the residual the result
//     keeps as evidence.
//   - A task born and gone between two ticks, and the last interval of
//     one that exits mid-window. A foreign shell loop that forks many
//     short children is undercounted; the residual shows it.
//   - Another virtual machine: the hypervisor's steal is read from
//     /proc/stat by the caller, not here.
//
// The cost is one read of two small files per thread per tick: on the
// machines this was built on (under 300 threads) about a millisecond of
// the harness's CPU per tick, which is attributed to the harness.
package attrib
