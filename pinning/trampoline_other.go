//go:build !linux

package pinning

import (
	"fmt"
	"os/exec"
)

// Supported reports whether this system can pin children (Linux).
const Supported = false

// Command returns a Cmd whose Start fails with ErrUnsupported when spec asks
// for CPUs or a cgroup; otherwise it is a plain exec.Command (NoFile is
// ignored).
func Command(spec Spec, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	if len(spec.CPUs) > 0 || spec.Cgroup != "" {
		cmd.Err = fmt.Errorf("pin %s to cpus %s: %w", name, spec.CPUs, ErrUnsupported)
	}
	return cmd
}

// Init does nothing where pinning is unsupported.
func Init() {}

// Granted returns ErrUnsupported.
func Granted(pid int) (CPUSet, error) { return nil, ErrUnsupported }

// SelfNoFile returns ErrUnsupported.
func SelfNoFile() (uint64, error) { return 0, ErrUnsupported }

// NoFile returns ErrUnsupported.
func NoFile(pid int) (uint64, error) { return 0, ErrUnsupported }

// Throttle is a CPU-capping cgroup; Linux only.
type Throttle struct {
	Path    string
	CPUs    float64
	Version int
}

// ThrottleStats is the kernel's account of the throttling.
type ThrottleStats struct {
	Periods, Throttled int64
	ThrottledSeconds   float64
}

// NewThrottle returns ErrUnsupported.
func NewThrottle(name string, cpus float64) (*Throttle, error) { return nil, ErrUnsupported }

// Stats returns ErrUnsupported.
func (t *Throttle) Stats() (ThrottleStats, error) { return ThrottleStats{}, ErrUnsupported }

// Remove does nothing.
func (t *Throttle) Remove() error { return nil }
