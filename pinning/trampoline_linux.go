//go:build linux

package pinning

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// init locks the main goroutine to the main thread in the trampoline and
// the supervisor. Go keeps main on the main thread only when init locks
// it; without this the runtime may move it during start-up, and the
// supervisor would fork its target from another thread. The harness finds
// the target among the children of the supervisor's main thread
// (supervise.Proc.TargetPid), and a target forked elsewhere once cost a
// test its 10 s wait.
func init() {
	if len(os.Args) > 2 && (os.Args[1] == superviseArg || os.Args[1] == trampolineArg) {
		runtime.LockOSThread()
	}
}

// Supported reports whether this system can pin children (Linux).
const Supported = true

// initCalled records that this program calls Init, so that its re-exec can
// act as the trampoline.
var initCalled atomic.Bool

// Command returns a Cmd that starts the trampoline (this very executable,
// as /proc/self/exe) with the spec in its environment; the trampoline's Init
// applies the spec to itself and execs name with args. Because the mask and
// the limit are set before exec, the target and every thread or child it
// ever starts inherit them: nothing runs unpinned, not even the runtime's
// first threads.
//
// The Cmd has SysProcAttr{Setpgid: true, Pdeathsig: SIGKILL}: the child
// leads its own process group (kill(-pid) reaches its children), and the
// kernel kills it when the thread that forked it exits. Start it with
// Start, which forks from a locked thread that lives as long as the child.
//
// To give the child its own environment, set spec.Env (the base; nil is
// os.Environ()) and append to cmd.Env: it already holds the base and the
// spec. Replacing it makes the trampoline exit 127 with an error saying so. name is looked up with exec.LookPath in the
// child, after cmd.Dir took effect; if it cannot be exec'ed the trampoline
// prints "ceiling pin: ..." on stderr and exits 127.
func Command(spec Spec, name string, args ...string) *exec.Cmd {
	// /proc/self/exe, resolved by the kernel in the forked child, is this
	// very image even if its file was replaced or deleted since we started
	// (a rebuild during a sweep). argv[0] keeps the readable path.
	self, err := os.Executable()
	if err != nil {
		self = "ceiling"
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = append([]string{self, trampolineArg, name}, args...)
	if spec.Supervise {
		spec.parent = os.Getpid()
	}
	if spec.User != nil && !spec.Supervise {
		cmd.Err = errors.New("pinning: Spec.User needs Spec.Supervise (the supervisor changes the target's identity)")
	}
	if !initCalled.Load() {
		// The child is this same program: without Init it would run as
		// itself (a test binary would run its tests again) instead of
		// exec'ing the target.
		cmd.Err = errors.New("pinning: Init was not called at the start of main (or TestMain); a pinned child cannot start")
	}
	base := spec.Env
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(slices.Clip(base), envSpec+"="+spec.encode())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Init turns this process into the trampoline when Command started it, and
// returns at once otherwise. Call it first thing in main, and in TestMain of
// every package whose tests use Command. As the trampoline it never
// returns: it execs the target, or prints the reason on stderr and exits
// 127 (the shell's "command not found" status).
func Init() {
	initCalled.Store(true)
	v, ok := os.LookupEnv(envSpec)
	if ok && len(os.Args) > 2 && os.Args[1] == superviseArg {
		spec, err := decodeSpec(v)
		if err != nil {
			die(err)
		}
		os.Exit(supervise(spec, os.Args[2:]))
	}
	isTrampoline := len(os.Args) > 2 && os.Args[1] == trampolineArg
	switch {
	case !ok && isTrampoline:
		die(fmt.Errorf("started as trampoline without %s in the environment (was cmd.Env replaced instead of appended to?)", envSpec))
	case !ok:
		return
	case !isTrampoline:
		// A stale marker, e.g. inherited by a grandchild: not for us.
		os.Unsetenv(envSpec)
		return
	}
	// The mask set below belongs to this thread only; exec from the same
	// thread so that the new image inherits it.
	runtime.LockOSThread()
	spec, err := decodeSpec(v)
	if err != nil {
		die(err)
	}
	target, argv := os.Args[2], os.Args[2:]
	path, err := exec.LookPath(target)
	if err != nil {
		die(fmt.Errorf("cannot exec target: %w", err))
	}
	for _, cg := range []string{spec.Cgroup, spec.Contain} {
		if cg != "" {
			if err := joinCgroup(cg); err != nil {
				die(err)
			}
		}
	}
	if err := setAffinity(spec.CPUs); err != nil {
		die(err)
	}
	if spec.NoFile > 0 {
		if err := setNoFile(spec.NoFile); err != nil {
			die(err)
		}
	}
	if spec.Supervise {
		// The supervisor is this executable again, exec'ed from this
		// pinned thread: all of it is pinned, capped and contained like
		// the target it starts. It keeps the spec in its environment.
		self := append([]string{os.Args[0], superviseArg}, argv...)
		err = unix.Exec("/proc/self/exe", self, supervisorEnv(os.Environ(), raceBuild))
		die(fmt.Errorf("exec the supervisor: %w", err))
	}
	err = unix.Exec(path, argv, withoutSpec(os.Environ()))
	die(fmt.Errorf("exec %s: %w", path, err))
}

// withoutSpec is environ without the spec variable: the target must not
// see it (nor a grandchild that happens to call Init); and with GORACE as
// the caller had it (supervisorEnv).
func withoutSpec(environ []string) []string {
	environ = targetEnv(environ)
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, envSpec+"=") {
			env = append(env, kv)
		}
	}
	return env
}

func die(err error) {
	fmt.Fprintf(os.Stderr, "ceiling pin: %v\n", err)
	os.Exit(127)
}

func setAffinity(cpus CPUSet) error {
	if len(cpus) == 0 {
		return nil
	}
	var set unix.CPUSet
	set.Zero()
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_setaffinity(%s): %w", cpus, err)
	}
	return nil
}

// setNoFile sets the soft RLIMIT_NOFILE to want, raising the hard limit
// when want is above it and we may; otherwise stopping at the hard limit.
// Setting it (rather than leaving it) also stops the Go runtime from
// restoring its original soft limit at exec.
func setNoFile(want uint64) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("getrlimit(RLIMIT_NOFILE): %w", err)
	}
	if want > lim.Max {
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: want, Max: want}); err == nil {
			return nil
		}
		want = lim.Max // not allowed to raise the hard limit: take what we may
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: want, Max: lim.Max}); err != nil {
		return fmt.Errorf("setrlimit(RLIMIT_NOFILE, %d): %w", want, err)
	}
	return nil
}

// Granted reads back the affinity mask the kernel holds for pid (its main
// thread): what was granted, which is what a result should record, next to
// what was requested.
func Granted(pid int) (CPUSet, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity(%d): %w", pid, err)
	}
	var out CPUSet
	for c := 0; c <= MaxCPU; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// SelfNoFile returns this process's soft RLIMIT_NOFILE. (The Go runtime
// raises its own soft limit to the hard one at start-up.)
func SelfNoFile() (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("getrlimit(RLIMIT_NOFILE): %w", err)
	}
	return lim.Cur, nil
}

// NoFile returns the soft RLIMIT_NOFILE of another process (prlimit), to
// record what a child really got.
func NoFile(pid int) (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &lim); err != nil {
		return 0, fmt.Errorf("prlimit(%d, RLIMIT_NOFILE): %w", pid, err)
	}
	return lim.Cur, nil
}

func unixAccessW(path string) bool { return unix.Access(path, unix.W_OK) == nil }
