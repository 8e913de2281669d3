//go:build linux

package pinning

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"golang.org/x/sys/unix"
)

// defaultOrphanGrace bounds the SIGTERM-to-SIGKILL wait when the caller
// died and nobody else waits.
const defaultOrphanGrace = 5 * time.Second

// killPoll is how often the supervisor looks at its tree while it waits
// for it to empty.
const killPoll = 20 * time.Millisecond

// supervise is the supervisor's main (see the package comment, "The
// supervisor"). It returns the exit status to leave with, after it
// re-raised the target's fatal signal on itself where it could.
func supervise(spec Spec, argv []string) int {
	// The target's parent-death signal follows the thread that forks it:
	// this one, locked until the process exits. Every step below runs on
	// this goroutine, so on this thread.
	runtime.LockOSThread()
	sigs := becomeSupervisor()
	if os.Getppid() != spec.parent {
		fmt.Fprintln(os.Stderr, "ceiling supervise: the harness died before the target started")
		removeCgroups(spec)
		return 1
	}
	if spec.NoFile > 0 {
		// The Go runtime raised our soft limit at start-up: put it back
		// to what was asked, so that the target (and a read of our own
		// limit) gets exactly that.
		_ = setNoFile(spec.NoFile)
	}
	target := startTarget(argv, spec.User)
	status, orphan := watchTree(spec, target, sigs)
	if orphan {
		// Nobody is left to remove our cgroups: leave them and remove them.
		removeCgroups(spec)
	}
	return exitLike(status)
}

// becomeSupervisor names this process, makes it its tree's subreaper and
// ties it to its caller's death, and then starts listening for the
// signals the tree is driven by.
func becomeSupervisor() chan os.Signal {
	setComm(SupervisorComm)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		die(fmt.Errorf("supervisor: become a subreaper: %w", err))
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0); err != nil {
		die(fmt.Errorf("supervisor: set the parent-death signal: %w", err))
	}
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, unix.SIGTERM, SignalStopTree, SignalKillTree, unix.SIGCHLD)
	return sigs
}

// startTarget forks and execs argv from the calling thread, which the
// target's parent-death signal follows, as user when it is set (the
// kernel sets the parent-death signal after the change of identity, which
// would otherwise clear it); it dies when it cannot.
func startTarget(argv []string, user *syscall.Credential) int {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		die(fmt.Errorf("cannot exec target: %w", err))
	}
	target, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   withoutSpec(os.Environ()),
		Files: []uintptr{0, 1, 2},
		// Should the supervisor itself be SIGKILLed, the target follows.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: user},
	})
	switch {
	case err != nil && user != nil && errors.Is(err, syscall.EACCES):
		die(fmt.Errorf("exec %s as uid %d: %w (the program, and every directory above it and above the working directory, must be readable and searchable by that user)", path, user.Uid, err))
	case err != nil && user != nil && errors.Is(err, syscall.EPERM):
		die(fmt.Errorf("exec %s as uid %d: %w (only a supervisor running as root may start its target as another user)", path, user.Uid, err))
	case err != nil:
		die(fmt.Errorf("exec %s: %w", path, err))
	}
	return target
}

// watchTree reaps the tree until the target exited and its tree is
// empty, driving the tree by the signals and the caller's liveness. It
// returns the target's status and whether the caller died meanwhile.
func watchTree(spec Spec, target int, sigs chan os.Signal) (unix.WaitStatus, bool) {
	grace := spec.OrphanGrace
	if grace <= 0 {
		grace = defaultOrphanGrace
	}
	self := os.Getpid()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var (
		status   unix.WaitStatus
		done     bool // the target exited and was reaped
		stopping bool // SIGTERM went to the tree
		killing  bool // SIGKILL the tree until it is empty
		orphan   bool // the caller died
		graceEnd <-chan time.Time
	)
	for {
		// Reap every child: the target, and whatever reparented to us.
		if ws, ok := reapChildren(target); ok {
			status, done = ws, true
		}
		if orphan && graceEnd == nil {
			if !stopping {
				stopping = true
				signalTree(self, unix.SIGTERM)
			}
			graceEnd = time.After(grace)
		}
		if done && !stopping {
			killing = true // the target ended by itself: the rest goes with it
		}
		var poll <-chan time.Time
		if done || killing {
			kids := descendants(self)
			if done && len(kids) == 0 {
				break
			}
			if killing {
				for _, k := range kids {
					_ = unix.Kill(k, unix.SIGKILL)
				}
			}
			poll = time.After(killPoll)
		}
		select {
		case s := <-sigs:
			switch s {
			case unix.SIGTERM:
				// The parent-death signal (the caller's forking thread
				// died: getppid may not say so yet), or someone else's
				// stop: either way the caller will not finish the job.
				orphan = true
			case SignalStopTree:
				if !stopping {
					stopping = true
					signalTree(self, unix.SIGTERM)
				}
			case SignalKillTree:
				killing = true
			}
		case <-tick.C:
			if os.Getppid() != spec.parent {
				orphan = true
			}
		case <-graceEnd:
			killing = true
		case <-poll:
		}
	}
	return status, orphan
}

// reapChildren reaps every child that has exited, the target and
// whatever reparented to us, and returns the target's status if it was
// among them.
func reapChildren(target int) (status unix.WaitStatus, reaped bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			break
		}
		if pid == target {
			status, reaped = ws, true
		}
	}
	return status, reaped
}

// setComm names the process: its main thread through /proc/self/comm
// (the thread-group leader's, whichever thread writes it: the goroutine
// that calls this need not be on the main thread, and was seen not to
// be), and the calling thread, the one locked to fork the target, with
// PR_SET_NAME.
func setComm(name string) {
	_ = os.WriteFile("/proc/self/comm", []byte(name), 0)
	b := append([]byte(name), 0)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}

// signalTree sends sig once to every process below root.
func signalTree(root int, sig unix.Signal) {
	for _, pid := range descendants(root) {
		_ = unix.Kill(pid, sig)
	}
}

// descendants lists every process below root, through the children of
// each of their threads (/proc/PID/task/TID/children).
func descendants(root int) []int { return procfs.WalkTree(root, procfs.Children) }

// removeCgroups moves the supervisor out of the spec's cgroups and removes
// them; best effort, for when the caller that made them died.
func removeCgroups(spec Spec) {
	for _, dir := range []string{spec.Cgroup, spec.Contain} {
		if dir == "" {
			continue
		}
		_ = writeFile(filepath.Join(filepath.Dir(dir), "cgroup.procs"), strconv.Itoa(os.Getpid()))
		for range 50 {
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(killPoll)
		}
	}
}

// exitLike ends the supervisor as the target ended, so that the caller's
// Wait sees the target's status: the same exit code, or death by the same
// signal where the signal can be re-raised on a Go program.
func exitLike(ws unix.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	sig := ws.Signal()
	switch sig {
	case unix.SIGKILL, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGUSR1, unix.SIGUSR2, unix.SIGALRM:
		signal.Reset(sig)
		_ = unix.Kill(os.Getpid(), sig)
		time.Sleep(time.Second)
	}
	return 128 + int(sig)
}
