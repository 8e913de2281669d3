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
	if spec.Env != nil {
		cmd.Env = append([]string(nil), spec.Env...)
	}
	if len(spec.CPUs) > 0 || spec.Cgroup != "" || spec.User != nil {
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

// Container is a cgroup holding one child's tree; Linux only.
type Container struct {
	Path    string
	Version int
}

// NewContainer returns ErrUnsupported.
func NewContainer(name string) (*Container, error) { return nil, ErrUnsupported }

// ContainerAt returns ErrUnsupported.
func ContainerAt(dir string) (*Container, error) { return nil, ErrUnsupported }

// IsCgroup2 reports false.
func IsCgroup2(dir string) bool { return false }

// CgroupParent is a directory where this project creates cgroups.
type CgroupParent struct {
	Dir     string
	Version int
	Kind    string
}

// ContainerParents returns none.
func ContainerParents() []CgroupParent { return nil }

// CgroupParents returns none.
func CgroupParents() []CgroupParent { return nil }

// CgroupProcs returns ErrUnsupported.
func CgroupProcs(dir string) ([]int, error) { return nil, ErrUnsupported }

// RemoveCgroup returns ErrUnsupported.
func RemoveCgroup(dir string) error { return ErrUnsupported }

// Procs returns ErrUnsupported.
func (c *Container) Procs() ([]int, error) { return nil, ErrUnsupported }

// Kill returns ErrUnsupported.
func (c *Container) Kill() error { return ErrUnsupported }

// Remove does nothing.
func (c *Container) Remove() error { return nil }

// ReachableNoFile: RLIMIT_NOFILE is only applied on Linux; want is
// assumed.
func ReachableNoFile(want uint64) (uint64, string) { return want, "" }

// RaiseNoFile needs Linux.
func RaiseNoFile(want uint64) (uint64, error) { return 0, ErrUnsupported }

// KeepSelfOff moves nothing where pinning is unsupported.
func KeepSelfOff(avoid ...CPUSet) (kept CPUSet, restore func(), err error) {
	return nil, func() {}, nil
}
