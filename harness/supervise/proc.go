package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

// DefaultGrace is how long Stop waits after SIGTERM before SIGKILL when a
// context cancellation or a signal stops a process.
const DefaultGrace = 5 * time.Second

// killWait bounds the wait for a process to vanish after SIGKILL (it can
// only linger in uninterruptible sleep).
const killWait = 10 * time.Second

// Spec describes a child to boot.
type Spec struct {
	Name string   // for messages: "server", "generator"
	Path string   // program; looked up in PATH (after Dir) when it has no slash
	Args []string // arguments, without the program name
	// Env is added to Environ; a later entry wins over an earlier one
	// with the same key.
	Env []string
	// Environ is the environment Env is added to; nil: this process's.
	// The harness gives servers and generators an allowlist of its own
	// (target.ChildEnviron), never the whole of it.
	Environ []string
	Dir     string // working directory; "" is ours
	// CPUs pins the child and everything it starts (pinning.Command);
	// empty: inherit our affinity.
	CPUs pinning.CPUSet
	// NoFile is the child's soft RLIMIT_NOFILE; 0 leaves it as inherited.
	NoFile uint64
	// Cgroup is a CPU-capping cgroup (pinning.Throttle.Path) the child
	// joins before exec: the headroom probe. Empty: none.
	Cgroup string
	// LogPath receives the child's stdout and stderr (truncated first);
	// "" discards them.
	LogPath string
	// Grace is how long a stop caused by Start's ctx waits after SIGTERM
	// before SIGKILL; 0 is DefaultGrace.
	Grace time.Duration
	// NewNetNS starts the child (its supervisor, and so everything below
	// it) in a network namespace of its own, with only a loopback that is
	// down (CLONE_NEWNET; root, Linux): the caller wires it up by Pid.
	NewNetNS bool
	// User is the identity the target starts with (uid, gid, groups),
	// set by its supervisor, which stays ours: a harness running as root
	// starts a server it does not trust as an unprivileged user and keeps
	// the right to stop its tree. nil: ours. Linux only.
	User *syscall.Credential
}

// Proc is a running (or finished) child started by Start.
type Proc struct {
	name    string
	pid     int
	logPath string

	child      *pinning.Child
	supervised bool
	contain    *containment

	stopOnce  sync.Once
	stopErr   error
	stopped   atomic.Bool
	escalated atomic.Bool
	target    atomic.Int64
}

// Start boots spec as a pinned child in its own process group, its output
// to spec.LogPath, with the parent-death signal set (the child is SIGKILLed
// if this process dies). It registers the Proc in Live until it exits.
// Cancelling ctx stops the process (Stop(spec.Grace)).
//
// Start returns once the child is forked; it does not wait for readiness
// (WaitReady) or even for the exec: a program that cannot be exec'ed
// shows up as an exit with status 127 and the reason in its log.
func Start(ctx context.Context, spec Spec) (*Proc, error) {
	if spec.Path == "" {
		return nil, fmt.Errorf("start %s: no program given", spec.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	out, err := openLog(spec.LogPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	defer out.Close() // the child holds its own copy
	grace := spec.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	contain := newContainment(spec.Cgroup)
	pspec := pinning.Spec{
		CPUs: spec.CPUs, NoFile: spec.NoFile, Cgroup: spec.Cgroup,
		Supervise: pinning.Supported, OrphanGrace: min(grace, DefaultGrace),
		Env: spec.Environ, User: spec.User,
	}
	if contain.owned {
		pspec.Contain = contain.cgroup.Path
	}
	cmd := pinning.Command(pspec, spec.Path, spec.Args...)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, spec.Env...)
	cmd.Env = append(cmd.Env, MarkerEnv+"="+contain.marker)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = out, out
	setGroup(cmd)
	if spec.NewNetNS {
		if err := setNewNetNS(cmd); err != nil {
			return nil, fmt.Errorf("start %s: %w", spec.Name, err)
		}
	}

	// Registering and starting under the registry's lock means a KillAll
	// either sees this Proc or makes Start fail: no child slips through.
	p := &Proc{name: spec.Name, logPath: spec.LogPath, supervised: pspec.Supervise, contain: contain}
	if err := Live.start(p, func() error {
		child, err := pinning.Start(cmd)
		if err != nil {
			return err
		}
		p.child, p.pid = child, child.Pid()
		return nil
	}); err != nil {
		if contain.owned {
			_ = contain.cgroup.Remove()
		}
		return nil, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Path, err)
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = p.Stop(grace)
		case <-p.Done():
		}
	}()
	return p, nil
}

func openLog(path string) (*os.File, error) {
	if path == "" {
		return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
}

// Name is the Spec's: "server", "generator", "agent 2".
func (p *Proc) Name() string { return p.name }

// Pid is the supervisor's where there is one (Linux): the root of the
// child's tree, pinned like the target, and its process group id.
func (p *Proc) Pid() int { return p.pid }

// LogPath is the file its stdout and stderr go to ("": discarded).
func (p *Proc) LogPath() string { return p.logPath }

// Signal sends sig to the program Start ran (TargetPid), not to its
// supervisor: a fault's SIGKILL or SIGSTOP, and the SIGCONT that undoes
// the latter.
func (p *Proc) Signal(sig syscall.Signal) error {
	pid := p.TargetPid()
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("%v to %s (pid %d): %w", sig, p.name, pid, err)
	}
	return nil
}

// Freeze sends SIGSTOP to the program Start ran (TargetPid) and then to
// every process below it, parents first, so that none forks while the
// tree stops: the tree holds its memory and sockets and gets no CPU until
// Thaw. Its supervisor is left running (it must answer Stop).
func (p *Proc) Freeze() error { return p.signalTree(syscall.SIGSTOP) }

// Thaw sends SIGCONT to what Freeze stopped, and anything below it.
func (p *Proc) Thaw() error { return p.signalTree(syscall.SIGCONT) }

func (p *Proc) signalTree(sig syscall.Signal) error {
	if p.Exited() {
		return fmt.Errorf("%v to %s: it has exited", sig, p.name)
	}
	root := p.TargetPid()
	if err := syscall.Kill(root, sig); err != nil {
		return fmt.Errorf("%v to %s (pid %d): %w", sig, p.name, root, err)
	}
	below, _ := Descendants(root)
	for _, pid := range below {
		_ = syscall.Kill(pid, sig) // one that exited meanwhile needs none
	}
	return nil
}

// Done is closed when the process has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.child.Done() }

// Wait blocks until the process exits; it returns ExitErr.
func (p *Proc) Wait() error { return p.child.Wait() }

// Exited reports whether the process has exited (and been reaped).
func (p *Proc) Exited() bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// ExitErr is nil while the process runs or after a zero exit status, and
// otherwise cmd.Wait's error (*exec.ExitError: status or signal).
func (p *Proc) ExitErr() error {
	if !p.Exited() {
		return nil
	}
	return p.child.Wait()
}

// Escalated reports whether Stop had to send SIGKILL because the process
// outlived the grace period after SIGTERM.
func (p *Proc) Escalated() bool { return p.escalated.Load() }

// Tail returns the last n lines of the process's log ("" when there is no
// log or it cannot be read).
func (p *Proc) Tail(n int) string {
	if p.logPath == "" {
		return ""
	}
	s, _ := LogTail(p.logPath, n)
	return s
}

// Stop stops the child's whole tree. With a supervisor (Linux) it asks the
// supervisor (pinning.SignalStopTree) to send SIGTERM to every process
// below it; after
// grace it asks the supervisor to SIGKILL the tree (pinning.SignalKillTree)
// and, should the supervisor not be gone within 10 s, SIGKILLs the group.
// Without one it sends SIGTERM to the process group, and SIGKILL after
// grace. Either way it then SIGKILLs what is left of the group, kills
// what is left in the child's cgroup or carries its MarkerEnv anywhere
// (recorded: Escaped), removes the cgroup it made, and waits until all of
// it is gone. It is idempotent and safe to call concurrently: every caller
// gets the first call's result. Stopping a process that already exited
// only sweeps.
func (p *Proc) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		p.stopErr = p.stop(grace)
		p.stopped.Store(true)
	})
	return p.stopErr
}

func (p *Proc) stop(grace time.Duration) error {
	if !p.Exited() {
		term := func() error { return signalGroup(p.pid, syscall.SIGTERM) }
		if p.supervised {
			term = func() error { return signalOne(p.pid, pinning.SignalStopTree) }
		}
		if err := term(); err != nil {
			return fmt.Errorf("stop %s (pid %d): %w", p.name, p.pid, err)
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.Done():
		case <-t.C:
			p.escalated.Store(true)
			if p.supervised {
				// The supervisor kills the tree: only it knows all of it.
				_ = signalOne(p.pid, pinning.SignalKillTree)
				select {
				case <-p.Done():
				case <-time.After(killWait):
				}
			}
		}
	}
	// Leader gone or grace over: whatever is left of the group is killed.
	if err := signalGroup(p.pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %s (pid %d): %w", p.name, p.pid, err)
	}
	select {
	case <-p.Done():
	case <-time.After(killWait):
		return fmt.Errorf("kill %s (pid %d): still running %s after SIGKILL", p.name, p.pid, killWait)
	}
	return errors.Join(waitGroupGone(p.pid, killWait), p.contain.sweep())
}

// KillTree SIGKILLs the child's whole tree now, without waiting: through
// its supervisor (pinning.SignalKillTree), which alone knows all of the
// tree, or to the process group where there is none. Use it to cut short a
// Stop that is waiting out its grace; that Stop then sweeps as usual.
func (p *Proc) KillTree() {
	if p.supervised {
		_ = signalOne(p.pid, pinning.SignalKillTree)
		return
	}
	_ = signalGroup(p.pid, syscall.SIGKILL)
}

// Escaped lists the processes of the child's tree that Stop found alive
// after the supervisor had exited (left in its cgroup, or carrying its
// MarkerEnv) and killed: empty until Stop returned, and when the tree was
// contained.
func (p *Proc) Escaped() []EscapedProcess {
	if !p.stopped.Load() {
		return nil
	}
	return slices.Clone(p.contain.escaped)
}

// TargetPid is the pid of the program Start ran. With a supervisor that
// is the supervisor's first child: TargetPid waits (up to 10 s) until the
// supervisor has forked it. Without one, or once the process exited
// before its target was seen, it is Pid. Use Pid for the whole tree
// (sampling, Descendants) and TargetPid for the program itself.
func (p *Proc) TargetPid() int {
	if !p.supervised {
		return p.pid
	}
	if pid := p.target.Load(); pid != 0 {
		return int(pid)
	}
	deadline := time.Now().Add(killWait)
	for time.Now().Before(deadline) && !p.Exited() {
		// The supervisor's main thread forked the target first; what
		// reparents to it later comes after in the list.
		if kid := supervisedTarget(p.pid); kid != 0 {
			p.target.Store(int64(kid))
			return kid
		}
		time.Sleep(5 * time.Millisecond)
	}
	return p.pid
}

// supervisedTarget is the target the supervisor pid forked, or 0 while it
// has not (or pid is not yet the supervisor). The supervisor forks from
// its main thread (pinning locks it there in init); should a thread other
// than the main one have forked, its children are looked at too. Orphans
// that reparent to the supervisor go to its main thread's list, after the
// target.
func supervisedTarget(pid int) int {
	if comm(pid) != pinning.SupervisorComm {
		return 0
	}
	if kids := threadChildren(pid, pid); len(kids) > 0 {
		return kids[0]
	}
	for _, tid := range tasks(pid) {
		if kids := threadChildren(pid, tid); tid != pid && len(kids) > 0 {
			return kids[0]
		}
	}
	return 0
}

// signalOne signals one process; one already gone is fine.
func signalOne(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to process %d: %w", sig, pid, err)
	}
	return nil
}

// signalGroup signals every process in group pgid; an empty group is fine.
func signalGroup(pgid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to process group %d: %w", sig, pgid, err)
	}
	return nil
}

// waitGroupGone waits until no live process is left in group pgid (killed
// members are reaped by whoever inherited them).
func waitGroupGone(pgid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		left, err := GroupMembers(pgid)
		if err != nil || len(left) == 0 {
			return nil // no /proc to look in: the SIGKILL is all we can do
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process group %d: %v still alive %s after SIGKILL", pgid, left, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// setGroup makes sure the child leads its own process group (pinning.Command
// already asks for that and for the parent-death signal on Linux).
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
