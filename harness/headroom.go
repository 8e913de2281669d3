package harness

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// RoleHeadroom is the headline point run once more with the generator's
// CPU capped by a cgroup quota (HEADROOM_PROBE).
const RoleHeadroom = "headroom_probe"

// The headroom probe answers what CPU figures cannot: was the generator
// the limit? The headline point runs again with the generator's process
// tree held to a fraction of its cores by the kernel's CPU controller
// (cgroup v1 cpu.cfs_quota_us, or v2 cpu.max). If throughput holds (within
// the A-A noise floor, at least HeadroomTolerancePct) the generator had
// headroom and was not the limit; if it falls, the generator's CPU bounds
// the point at least at that quota.

// HeadroomTolerancePct is the smallest change the probe reads as a change,
// when the noise floor is smaller.
const HeadroomTolerancePct = 5.0

// headroomOf summarizes the probe point against the headline.
func headroomOf(r *Result, fraction float64) *HeadroomProbe {
	for _, p := range r.Curve {
		if p.Role != RoleHeadroom {
			continue
		}
		h := &HeadroomProbe{QuotaFraction: fraction, Index: p.Index, Status: p.Status, ThroughputPerS: p.ThroughputPerS, GeneratorCPU: p.GeneratorCPU}
		switch {
		case p.Status != StatusOK:
			h.Conclusion = "probe failed: " + p.FailReason
		case !p.Clean:
			// Errors or missing connections change the load, not the
			// generator's CPU: the comparison would measure them.
			h.Conclusion = fmt.Sprintf("probe not clean (%d errors, saturated or connections short): no conclusion", p.Errors)
		case !r.Headline.Clean || r.Headline.ThroughputPerS <= 0:
			h.Conclusion = "no clean headline to compare with"
		default:
			h.ChangePct = (p.ThroughputPerS - r.Headline.ThroughputPerS) / r.Headline.ThroughputPerS * 100
			tol := HeadroomTolerancePct
			if r.NoiseFloorPct != nil {
				tol = math.Max(tol, *r.NoiseFloorPct)
			}
			h.TolerancePct = tol
			if h.ChangePct >= -tol {
				h.GeneratorHadHeadroom = true
				h.Conclusion = fmt.Sprintf("throughput held (%+.1f%%, within %.1f%%) with the generator capped at %.0f%% of its cores: the generator was not the limit", h.ChangePct, tol, fraction*100)
			} else {
				h.Conclusion = fmt.Sprintf("throughput fell %.1f%% (beyond %.1f%%) with the generator capped at %.0f%% of its cores: its CPU bounds this point, the headline may be a generator limit", -h.ChangePct, tol, fraction*100)
			}
		}
		return h
	}
	return nil
}

// cgroupThrottle is a CPU-quota cgroup the generator is moved into.
type cgroupThrottle struct {
	dir     string
	version string // v1 | v2
}

// cgroupRoot is where the cgroup filesystems are mounted; a var for tests.
var cgroupRoot = "/sys/fs/cgroup"

// newThrottle makes a cgroup whose tasks together get fraction x cores of
// CPU time. It needs write access to the cgroup tree (root, or a
// delegated subtree); the error says why not.
func newThrottle(name string, fraction float64, cores int) (*cgroupThrottle, error) {
	const period = 100000 // µs
	quota := int(math.Round(fraction * float64(cores) * period))
	if quota < 1000 {
		return nil, fmt.Errorf("quota %d µs per %d µs is below the kernel's 1 ms minimum", quota, period)
	}
	if v1 := filepath.Join(cgroupRoot, "cpu"); fileExists(filepath.Join(v1, "cpu.cfs_quota_us")) {
		dir := filepath.Join(v1, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup v1: %w", err)
		}
		t := &cgroupThrottle{dir: dir, version: "v1"}
		if err := errors.Join(
			write(filepath.Join(dir, "cpu.cfs_period_us"), strconv.Itoa(period)),
			write(filepath.Join(dir, "cpu.cfs_quota_us"), strconv.Itoa(quota))); err != nil {
			t.Close()
			return nil, fmt.Errorf("cgroup v1: %w", err)
		}
		return t, nil
	}
	if fileExists(filepath.Join(cgroupRoot, "cgroup.controllers")) {
		ctl, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.subtree_control"))
		if err != nil || !slices.Contains(strings.Fields(string(ctl)), "cpu") {
			return nil, errors.New("cgroup v2: the cpu controller is not enabled for child cgroups of " + cgroupRoot)
		}
		dir := filepath.Join(cgroupRoot, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup v2: %w", err)
		}
		t := &cgroupThrottle{dir: dir, version: "v2"}
		if err := write(filepath.Join(dir, "cpu.max"), fmt.Sprintf("%d %d", quota, period)); err != nil {
			t.Close()
			return nil, fmt.Errorf("cgroup v2: %w", err)
		}
		return t, nil
	}
	return nil, errors.New("no cgroup CPU controller found under " + cgroupRoot)
}

// Add moves processes (whole thread groups) into the cgroup.
func (t *cgroupThrottle) Add(pids ...int) error {
	var errs []error
	for _, pid := range pids {
		if err := write(filepath.Join(t.dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("move pid %d into %s: %w", pid, t.dir, err))
		}
	}
	return errors.Join(errs...)
}

// Close removes the cgroup; its processes must have exited (they go back
// to the parent cgroup with it otherwise impossible to remove).
func (t *cgroupThrottle) Close() error {
	if err := os.Remove(t.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove cgroup %s: %w", t.dir, err)
	}
	return nil
}

func write(path, v string) error { return os.WriteFile(path, []byte(v), 0o644) }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
