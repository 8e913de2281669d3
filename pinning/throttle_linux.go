//go:build linux

package pinning

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// throttlePeriodUs is the CFS bandwidth period: the cap is enforced per
// 100 ms, so a throttled process runs in bursts.
const throttlePeriodUs = 100000

// Throttle is a cgroup that caps the CPU time of the processes in it (CFS
// bandwidth control). It is the tool of the sweep's headroom probe: repeat
// a point with the generator capped below what it used; an unchanged
// throughput shows the generator was not the limit.
type Throttle struct {
	Path    string  // the cgroup directory: put it in Spec.Cgroup
	CPUs    float64 // the cap, in CPUs: 0.5 is half of one CPU's time
	Version int     // cgroup version: 1 or 2
}

// NewThrottle creates cgroup name (a plain name, no slashes) capped at cpus
// CPUs' worth of time, in the cgroup v1 "cpu" hierarchy if there is one,
// else in cgroup v2's root. It needs the right to create cgroups (root);
// otherwise the error says why. Remove it after its processes exited.
func NewThrottle(name string, cpus float64) (*Throttle, error) {
	if name == "" || strings.ContainsAny(name, "/;") || name == "." || name == ".." {
		return nil, fmt.Errorf("throttle: bad cgroup name %q", name)
	}
	if !(cpus > 0) || cpus > float64(MaxCPU+1) {
		return nil, fmt.Errorf("throttle: cap %v CPUs: want a positive number", cpus)
	}
	parent, version, err := cpuCgroupParent()
	if err != nil {
		return nil, fmt.Errorf("throttle: %w", err)
	}
	t := &Throttle{Path: filepath.Join(parent, name), CPUs: cpus, Version: version}
	if err := os.Mkdir(t.Path, 0o755); err != nil {
		return nil, fmt.Errorf("throttle: create cgroup: %w", err)
	}
	quota := max(int64(cpus*throttlePeriodUs), 1000) // the kernel's minimum is 1 ms
	if version == 1 {
		err = errors.Join(
			writeFile(filepath.Join(t.Path, "cpu.cfs_period_us"), strconv.Itoa(throttlePeriodUs)),
			writeFile(filepath.Join(t.Path, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10)))
	} else {
		err = writeFile(filepath.Join(t.Path, "cpu.max"), fmt.Sprintf("%d %d", quota, throttlePeriodUs))
	}
	if err != nil {
		_ = os.Remove(t.Path)
		return nil, fmt.Errorf("throttle: set the cap: %w", err)
	}
	return t, nil
}

// ThrottleStats is the kernel's account of the throttling (cpu.stat).
type ThrottleStats struct {
	Periods          int64   // enforcement periods with runnable tasks
	Throttled        int64   // periods in which the cap was hit
	ThrottledSeconds float64 // time the group's tasks were held back
}

// Stats reads cpu.stat of the cgroup.
func (t *Throttle) Stats() (ThrottleStats, error) {
	f, err := os.Open(filepath.Join(t.Path, "cpu.stat"))
	if err != nil {
		return ThrottleStats{}, fmt.Errorf("throttle stats: %w", err)
	}
	defer f.Close()
	var st ThrottleStats
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "nr_periods":
			st.Periods = n
		case "nr_throttled":
			st.Throttled = n
		case "throttled_time": // v1, ns
			st.ThrottledSeconds = float64(n) / 1e9
		case "throttled_usec": // v2
			st.ThrottledSeconds = float64(n) / 1e6
		}
	}
	return st, sc.Err()
}

// Remove deletes the cgroup. Its processes must have exited; an exiting
// process may hold it for a moment, so Remove retries for up to a second.
func (t *Throttle) Remove() error {
	var err error
	for range 50 {
		if err = os.Remove(t.Path); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("throttle: remove cgroup: %w", err)
}

// joinCgroup moves this process into the cgroup at path (the trampoline,
// before exec).
func joinCgroup(path string) error {
	if err := writeFile(filepath.Join(path, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
		return fmt.Errorf("join cgroup: %w", err)
	}
	return nil
}

func writeFile(path, s string) error {
	return os.WriteFile(path, []byte(s), 0o644)
}

// cpuCgroupParent finds where to create a CPU-capped cgroup: our own
// cgroup in the v1 "cpu" hierarchy (its mount root if ours is not
// writable), else the v2 root with the cpu controller enabled for its
// children.
func cpuCgroupParent() (string, int, error) {
	mounts, err := procfs.ReadMounts()
	if err != nil {
		return "", 0, err
	}
	var v2 string
	for _, m := range mounts {
		mountPoint, fsType, opts := m.Point, m.FSType, m.Super
		switch {
		case fsType == "cgroup" && slices.Contains(opts, "cpu"):
			if own := procfs.OwnCgroupV1("cpu"); own != "" {
				if p := filepath.Join(mountPoint, own); writable(p) {
					return p, 1, nil
				}
			}
			if writable(mountPoint) {
				return mountPoint, 1, nil
			}
		case fsType == "cgroup2" && v2 == "":
			v2 = mountPoint
		}
	}
	if v2 == "" {
		return "", 0, errors.New("no cgroup cpu controller mounted")
	}
	ctl, err := os.ReadFile(filepath.Join(v2, "cgroup.controllers"))
	if err != nil || !slices.Contains(strings.Fields(string(ctl)), "cpu") {
		return "", 0, fmt.Errorf("cgroup v2 at %s has no cpu controller", v2)
	}
	sub := filepath.Join(v2, "cgroup.subtree_control")
	if b, _ := os.ReadFile(sub); !slices.Contains(strings.Fields(string(b)), "cpu") {
		if err := writeFile(sub, "+cpu"); err != nil {
			return "", 0, fmt.Errorf("enable the cpu controller in %s: %w", v2, err)
		}
	}
	return v2, 2, nil
}

func writable(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir() && unixAccessW(dir)
}
