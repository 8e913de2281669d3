package pinning

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
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
}

// envSpec carries the encoded Spec from Command to Init in the child.
const envSpec = "CEILING_PIN_SPEC"

// trampolineArg is argv[1] of every trampoline, so that a trampoline whose
// environment lost envSpec (cmd.Env replaced instead of appended to) fails
// loudly instead of running the program as if it were ceiling itself.
const trampolineArg = "__ceiling_pin__"

// encode renders the spec as "cpus=0-1;nofile=65536;cgroup=PATH" (PATH
// escaped, so that it may hold any byte).
func (s Spec) encode() string {
	return fmt.Sprintf("cpus=%s;nofile=%d;cgroup=%s", s.CPUs, s.NoFile, url.QueryEscape(s.Cgroup))
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
			set, err := parseList(val)
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
		default:
			return Spec{}, fmt.Errorf("%s: unknown key %q in %q", envSpec, k, v)
		}
	}
	return s, nil
}
