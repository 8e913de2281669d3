// Package supervise boots and stops the processes of a sweep point (the
// server under test, the generator) as pinned children, and guarantees
// that none outlives the harness.
//
// # Starting
//
// Start(ctx, Spec) starts Spec.Path with Spec.Args through
// pinning.Command (affinity Spec.CPUs and RLIMIT_NOFILE Spec.NoFile applied
// before exec) under a supervisor (pinning.Spec.Supervise, Linux), in its
// own process group (pgid = Proc.Pid(), the supervisor's pid) and, where
// cgroups are writable, its own cgroup; stdout and stderr to Spec.LogPath
// (truncated: one log per point), Spec.Env added to our environment,
// MarkerEnv set, and the parent-death signal set. With Spec.User the
// supervisor, still ours, starts the target as that user (uid, gid,
// groups): a harness running as root keeps the right to stop a tree it
// does not trust (SRV_USER, docs/targets.md). The fork happens on a
// locked OS thread that lives as long as the child (pinning.Start), so the
// parent-death signal means "the harness died", not "a Go thread retired".
// The test binary or main of any user must call pinning.Init first thing.
//
// A Proc has Pid, Name, LogPath and:
//
//	Done() <-chan struct{}  closed once exited and reaped
//	Wait() error            blocks; the exit status (*exec.ExitError) or nil
//	Exited() bool; ExitErr() error (nil while running)
//	Stop(grace) error       SIGTERM to the whole tree; SIGKILL to the tree after grace;
//	                        then what is left of the group, the cgroup or the marker
//	                        is killed; reaped; cgroup removed; idempotent
//	Escalated() bool        Stop needed SIGKILL
//	Escaped() []EscapedProcess  what Stop found outside the supervisor's tree
//	KillTree()              SIGKILL the whole tree now (cuts a Stop's grace short)
//	TargetPid() int         the program itself, below the supervisor
//	Tail(n) string          last n lines of its log
//	ExitedError()           *ExitedError for a process that died (nil while running)
//
// Cancelling Start's ctx stops the process with Spec.Grace (DefaultGrace
// if 0).
//
// # Readiness
//
// ParseProbe reads "tcp:HOST:PORT" (connect succeeds), "http://..." or
// "https://..." (GET answers 2xx) or "log:REGEX" (matches the log file);
// *Probe is a flag.Value (both are harness/probe's, which the target
// file's checks use without this package). WaitReady(ctx, proc, probe, timeout) polls every
// 50 ms and returns nil, *ExitedError as soon as the process exits (exit
// status plus its log tail, without waiting out the timeout), or
// *NotReadyError after timeout (last attempt's failure plus log tail). A
// program the trampoline cannot exec is an *ExitedError with status 127
// and the reason in the tail.
//
// WaitPortFree(addr, timeout) waits until addr can be listened on again:
// call it before booting the next point's server. LogTail(path, n) reads
// the end of a log for a failed point (TailLines lines in the typed errors).
//
// # No child outlives the harness
//
// Live is the registry of every started, not yet exited Proc. KillAll(grace)
// stops them all concurrently. OnSignal(ctx, grace) returns a context
// cancelled at the first SIGINT/SIGTERM (cause wraps ErrInterrupted); on
// that signal Live is closed (Start then fails with ErrShuttingDown), the
// context is cancelled so the sweep writes what it has, and KillAll runs.
// The deferred stop() waits for KillAll. A second signal has its default
// effect.
//
// # Containment: the whole tree, also after a SIGKILL
//
// Proc.Pid() is the child's supervisor (pinning, "The supervisor"): a child
// subreaper, pinned like the target, that gets SIGTERM when the harness
// dies and then stops every process below it, also those that left the
// process group or session (setsid, a daemon's double fork, a launcher
// script's server), and reaps them all. Stop sends it
// pinning.SignalStopTree, on which it sends SIGTERM to the whole tree, and
// after grace pinning.SignalKillTree, which
// makes it SIGKILL the tree until empty; only a supervisor still there
// 10 s later is SIGKILLed with its group. The supervisor exits with the
// target's status, so Wait and ExitErr read as the target's.
//
// Where cgroups are writable each child also gets a cgroup
// (pinning.NewContainer, named CgroupName("contain", n)), or, in cgroup
// v2, the throttle cgroup it joins is used. Every child carries MarkerEnv
// (RunID()/n). After the supervisor exited, Stop kills what is still in
// the cgroup or carries the marker anywhere (/proc/PID/environ), records it
// (Escaped: pid and command name) and removes the cgroup. A process is
// only found so when it left the supervisor's tree some other way: started
// by a process outside it, or its supervisor was killed.
//
// CleanLeftovers, called when a sweep starts, kills and removes what a run
// killed together with its supervisors left: processes whose marker names
// a harness that no longer runs (pid and start time), and cgroups named by
// CgroupName (or the headroom probe's older "ceiling-headroom-PID-N") of
// such a harness. DescribeLeftovers is the warning. Nothing of a live
// harness is touched.
//
// # Process listing (Linux /proc)
//
// Descendants(pid) lists every process whose ancestor is pid, GroupMembers
// a group's live processes, Alive(pid) says a pid runs and is not a
// zombie, ReadStat/AllProcs read /proc/PID/stat. Tests use them to check
// that nothing is left. Descendants and ReadStat are internal/procfs's,
// which cpusample reads a server's tree through directly.
package supervise
