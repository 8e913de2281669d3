// Package pinning parses CPU lists and starts children pinned to them, with
// the affinity and RLIMIT_NOFILE applied before the child's program runs.
//
// # CPU lists
//
// A CPUSet is a sorted list of unique CPU numbers, written in taskset's
// list syntax: "0", "1,2,3", "0-3", "0-3,8". Parse(name, s) checks the
// syntax and that every CPU is online (/sys/devices/system/cpu/online);
// every error names the flag or variable:
//
//	SRV_CPUSET: cpu 7 is not online (online: 0-1)
//
// *CPUSet is a flag.Value. Overlap(a, b) gives the CPUs two sets share and
// SMTSiblings(server, gen) the (server, generator) pairs of hardware
// threads of one physical core (topology/thread_siblings_list): the
// harness refuses an overlap unless allowed and warns about siblings.
//
// # Pinning before exec: the trampoline
//
// Setting a process's affinity after it started (taskset -p) only moves
// the threads that exist at that moment. Command(spec, name, args...)
// instead returns an *exec.Cmd that runs this executable again with the
// encoded Spec in CEILING_PIN_SPEC. Init, called first thing in main (and
// in TestMain of every package whose tests use Command), sees the marker,
// locks itself to one OS thread, sched_setaffinity's that thread, sets
// RLIMIT_NOFILE, removes the marker from the environment and execve's the
// target from the same thread. The new image starts with that thread's
// mask, so the target and every thread and child it will ever start are
// pinned; a Go target also sizes GOMAXPROCS from it. If the target cannot
// be exec'ed the trampoline prints "ceiling pin: ..." and exits 127. A
// program that never called Init cannot use Command (its re-exec would run
// the program itself): Start then fails saying so.
//
// The Cmd has SysProcAttr{Setpgid: true, Pdeathsig: SIGKILL}. Setpgid puts
// the child in its own process group (pgid = pid) so kill(-pid, sig)
// reaches its children too. Pdeathsig survives the exec; the kernel sends
// it when the thread that forked the child exits, so start the Cmd with
// Start, which forks from a locked OS thread kept until the child exits.
//
// Typical use:
//
//	cmd := pinning.Command(pinning.Spec{CPUs: cpus, NoFile: 1 << 20}, "/path/to/server", "-addr", ":8080")
//	cmd.Env = append(cmd.Env, "FOO=bar") // append, never replace
//	cmd.Stdout, cmd.Stderr = logFile, logFile
//	child, err := pinning.Start(cmd)
//	granted, err := pinning.Granted(child.Pid()) // the kernel's mask, for the result
//	...
//	err = child.Wait()
//
// Granted(pid) and NoFile(pid) read back what the kernel holds for a
// process, to record granted beside requested; SelfNoFile is our own soft
// limit. Reading them right after Start may still see the trampoline's
// values before exec; the mask is set before RLIMIT_NOFILE, and both
// before exec.
//
// # Throttling: the headroom probe
//
// NewThrottle(name, cpus) creates a cgroup capped at cpus CPUs' worth of
// time (CFS bandwidth: cgroup v1 cpu.cfs_quota_us per 100 ms period, or v2
// cpu.max), in the v1 "cpu" hierarchy when there is one, else under the v2
// root. Spec.Cgroup = t.Path makes the trampoline join it before exec, so
// the child is capped from its first instruction. t.Stats() reads the
// kernel's throttling counters (cpu.stat), t.Remove() deletes the cgroup
// once its processes exited. Creating cgroups needs root; without that
// NewThrottle returns an error saying why, and a probe should be skipped
// with a warning.
//
// # The supervisor
//
// Spec.Supervise puts a supervisor between the caller and the target:
// once the trampoline has applied the spec to itself, it execs this
// executable again as "__ceiling_supervise__ TARGET ARGS..." (named
// SupervisorComm), so the supervisor is pinned, limited and in the same
// cgroups as the target. Init, seeing that argument, becomes the
// supervisor: a child subreaper (PR_SET_CHILD_SUBREAPER) with SIGTERM as
// its parent-death signal, which forks the target (itself with SIGKILL as
// parent-death signal towards the supervisor) from its locked main thread
// and reaps every child, the target and whatever reparented to it. On
// SignalStopTree (SIGUSR2) it sends SIGTERM once to every process below it
// (walking /proc/PID/task/TID/children); on SignalKillTree (SIGUSR1), or
// once the target exited by itself, it SIGKILLs them until none is left. It exits when the
// target has exited and nothing is left below it, with the target's
// status: the same exit code, or death by the same signal (re-raised on
// itself where Go allows, else exit 128+n). On SIGTERM, its parent-death
// signal (the caller's forking thread died; getppid may not show it yet),
// or a parent pid that changed (checked every second), the caller is taken
// for dead: it stops the tree as on SignalStopTree, SIGKILLs it after
// Spec.OrphanGrace, moves itself out of Spec.Cgroup and Spec.Contain and
// removes them. A SIGTERM from anyone else is handled the same way.
//
// Spec.User (supervised only) makes the supervisor fork the target with
// that uid, gid and supplementary groups, while it keeps its own: a root
// supervisor still signals and reaps a tree that runs as nobody, and the
// target cannot signal it back. The parent-death signal is set after the
// change of identity, which would clear it. A target the user may not
// exec fails with status 127 and that reason.
//
// # Containers
//
// NewContainer(name) creates a cgroup to hold one child's whole tree
// (Spec.Contain, joined before exec): in cgroup v2 under our own cgroup or
// the root, else in the v1 freezer hierarchy, wherever writable. Kill
// empties it (cgroup.kill; or freeze, SIGKILL each member, thaw) and
// Remove deletes it. ContainerAt adopts an existing cgroup (a v2 Throttle),
// CgroupParents lists every directory this project creates cgroups in, for
// a leftover scan.
//
// Linux only: elsewhere Supported is false, Online, SMTSiblings, Granted
// and the NoFile functions return ErrUnsupported, Parse checks syntax
// only, and a Command asking for CPUs fails at Start with ErrUnsupported.
package pinning
