// Package supervise boots and stops the processes of a sweep point (the
// server under test, the generator) as pinned children, and guarantees
// that none outlives the harness.
//
// # Starting
//
// Start(ctx, Spec) starts Spec.Path with Spec.Args through
// pinning.Command (affinity Spec.CPUs and RLIMIT_NOFILE Spec.NoFile applied
// before exec), in its own process group (pgid = Proc.Pid), stdout and
// stderr to Spec.LogPath (truncated: one log per point), Spec.Env added to
// our environment, and the parent-death signal set. The fork happens on a
// locked OS thread that lives as long as the child (pinning.Start), so the
// parent-death signal means "the harness died", not "a Go thread retired".
// The test binary or main of any user must call pinning.Init first thing.
//
// A Proc has Pid, Name, LogPath and:
//
//	Done() <-chan struct{}  closed once exited and reaped
//	Wait() error            blocks; the exit status (*exec.ExitError) or nil
//	Exited() bool; ExitErr() error (nil while running)
//	Stop(grace) error       SIGTERM to the group; SIGKILL to the group after grace;
//	                        then SIGKILL to what is left of the group; reaped; idempotent
//	Escalated() bool        Stop needed SIGKILL
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
// *Probe is a flag.Value. WaitReady(ctx, proc, probe, timeout) polls every
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
// effect. If the harness is SIGKILLed, the kernel SIGKILLs each direct
// child (parent-death signal). Limits: a child's own children are reached
// by the group kill, but not by the parent-death signal, and not at all if
// they moved to another process group or session.
//
// # Process listing (Linux /proc)
//
// Descendants(pid) lists every process whose ancestor is pid, GroupMembers
// a group's live processes, Alive(pid) says a pid runs and is not a
// zombie, ReadStat/AllProcs read /proc/PID/stat. Tests use them to check
// that nothing is left; cpusample uses Descendants to find a server's tree.
package supervise
