package pinning

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Spec is what the trampoline applies to a child before it execs the
// target.
type Spec struct {
	// CPUs is the affinity mask. Empty: the child inherits the parent's.
	CPUs CPUSet
	// NoFile is the RLIMIT_NOFILE soft limit wanted. 0 leaves the limit
	// alone. A value above the hard limit raises the hard limit too where
	// the process may (root); otherwise the soft limit stops at the hard
	// one. The limit is never lowered.
	NoFile uint64
	// Cgroup is a cgroup directory (Throttle.Path) the child joins before
	// exec, so that its CPU time is capped from its first instruction.
	// Empty: stay in ours.
	Cgroup string
	// Contain is a second cgroup directory (Container.Path) the child
	// joins before exec, in another hierarchy than Cgroup (cgroup v2 or
	// the v1 freezer): the one that is killed whole at stop. Empty: none.
	Contain string
	// Supervise puts a supervisor between the caller and the target (see
	// the package comment, "The supervisor"): a subreaper that stops the
	// target's whole tree when asked or when the caller dies.
	Supervise bool
	// OrphanGrace is how long the supervisor waits after SIGTERM before
	// SIGKILL when it stops the tree because the caller died; 0 is 5s.
	OrphanGrace time.Duration
	// User, when set, is the identity the supervisor starts the target
	// with (uid, gid, supplementary groups): a server you do not trust
	// runs as an unprivileged user, while the supervisor, which must be
	// allowed to setuid (root), keeps the right to stop its whole tree.
	// It needs Supervise.
	User *syscall.Credential
	// Env is the environment the target starts with (the caller appends
	// its own entries to the Cmd's Env); nil: this process's.
	Env []string

	parent int // the caller's pid, set by Command for the supervisor
}

// envSpec carries the encoded Spec from Command to Init in the child.
const envSpec = "CEILING_PIN_SPEC"

// trampolineArg is argv[1] of every trampoline, so that a trampoline whose
// environment lost envSpec (cmd.Env replaced instead of appended to) fails
// loudly instead of running the program as if it were ceiling itself.
const trampolineArg = "__ceiling_pin__"

// SupervisorComm is the supervisor's process name (/proc/PID/comm), so
// that ps and a leftover scan can tell it from the target it runs.
const SupervisorComm = "ceiling-superv"

// SignalStopTree is what the caller sends the supervisor to stop the tree:
// SIGTERM to every process below it, then wait for them.
const SignalStopTree = syscall.SIGUSR2

// SignalKillTree is what the caller sends the supervisor to have the whole
// tree SIGKILLed now (its grace after SIGTERM is over).
const SignalKillTree = syscall.SIGUSR1

// superviseArg is argv[1] of the supervisor: the trampoline, once it has
// applied the spec to itself, execs this executable again with it.
const superviseArg = "__ceiling_supervise__"

// encode renders the spec as
// "cpus=0-1;nofile=65536;cgroup=PATH;contain=PATH;supervise=PARENT;grace=5s"
// and, with a User, ";user=UID:GID:G1,G2" (paths escaped, so that they may
// hold any byte; supervise is the caller's pid, 0 for none).
func (s Spec) encode() string {
	out := fmt.Sprintf("cpus=%s;nofile=%d;cgroup=%s;contain=%s;supervise=%d;grace=%s",
		s.CPUs, s.NoFile, url.QueryEscape(s.Cgroup), url.QueryEscape(s.Contain), s.parent, s.OrphanGrace)
	if u := s.User; u != nil {
		groups := make([]string, len(u.Groups))
		for i, g := range u.Groups {
			groups[i] = strconv.FormatUint(uint64(g), 10)
		}
		out += fmt.Sprintf(";user=%d:%d:%s", u.Uid, u.Gid, strings.Join(groups, ","))
	}
	return out
}

// decodeUser reads "UID:GID:G1,G2" (no groups: "UID:GID:").
func decodeUser(v string) (*syscall.Credential, error) {
	parts := strings.Split(v, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%s: user %q: want UID:GID:GROUPS", envSpec, v)
	}
	id := func(s string) (uint32, error) {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%s: user %q: %w", envSpec, v, err)
		}
		return uint32(n), nil
	}
	uid, err := id(parts[0])
	if err != nil {
		return nil, err
	}
	gid, err := id(parts[1])
	if err != nil {
		return nil, err
	}
	// Groups is never nil: a nil list would keep the supervisor's own
	// (root's) supplementary groups.
	c := &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}
	if parts[2] != "" {
		for _, g := range strings.Split(parts[2], ",") {
			n, err := id(g)
			if err != nil {
				return nil, err
			}
			c.Groups = append(c.Groups, n)
		}
	}
	return c, nil
}

func decodeSpec(v string) (Spec, error) {
	var s Spec
	for _, kv := range strings.Split(v, ";") {
		k, val, _ := strings.Cut(kv, "=")
		switch k {
		case "cpus":
			if val == "" {
				continue
			}
			set, err := ParseWithin("", val, nil)
			if err != nil {
				return Spec{}, fmt.Errorf("%s: %w", envSpec, err)
			}
			s.CPUs = set
		case "nofile":
			n, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				return Spec{}, fmt.Errorf("%s: nofile %q: %w", envSpec, val, err)
			}
			s.NoFile = n
		case "cgroup":
			p, err := url.QueryUnescape(val)
			if err != nil {
				return Spec{}, fmt.Errorf("%s: cgroup %q: %w", envSpec, val, err)
			}
			s.Cgroup = p
		case "contain":
			p, err := url.QueryUnescape(val)
			if err != nil {
				return Spec{}, fmt.Errorf("%s: contain %q: %w", envSpec, val, err)
			}
			s.Contain = p
		case "supervise":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return Spec{}, fmt.Errorf("%s: supervise %q: want the parent's pid", envSpec, val)
			}
			s.parent, s.Supervise = n, n > 0
		case "grace":
			d, err := time.ParseDuration(val)
			if err != nil {
				return Spec{}, fmt.Errorf("%s: grace %q: %w", envSpec, val, err)
			}
			s.OrphanGrace = d
		case "user":
			c, err := decodeUser(val)
			if err != nil {
				return Spec{}, err
			}
			s.User = c
		default:
			return Spec{}, fmt.Errorf("%s: unknown key %q in %q", envSpec, k, v)
		}
	}
	return s, nil
}
