//go:build linux

package pinning

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"golang.org/x/sys/unix"
)

// Container is a cgroup that holds one child's whole process tree, so that
// the tree can be killed at once however its processes moved between
// process groups, sessions and parents: cgroup membership is inherited at
// fork and cannot be left without write access to the cgroup tree.
type Container struct {
	Path    string // the cgroup directory: put it in Spec.Contain
	Version int    // 2 (cgroup.kill, or freeze and kill) or 1 (the freezer hierarchy)
}

// containWait bounds Kill's wait for the cgroup to empty.
const containWait = 10 * time.Second

// NewContainer creates cgroup name (a plain name) where this process may:
// under its own cgroup v2 cgroup, else the v2 root, else its own cgroup in
// the v1 freezer hierarchy, else that hierarchy's root. Without a writable
// place (no root, no delegation) it returns an error saying why: then
// only the supervisor contains the tree.
func NewContainer(name string) (*Container, error) {
	if name == "" || strings.ContainsAny(name, "/;") || name == "." || name == ".." {
		return nil, fmt.Errorf("contain: bad cgroup name %q", name)
	}
	parents := ContainerParents()
	if len(parents) == 0 {
		return nil, errors.New("contain: no writable cgroup v2 or v1 freezer hierarchy")
	}
	var errs []error
	for _, p := range parents {
		c := &Container{Path: filepath.Join(p.Dir, name), Version: p.Version}
		if err := os.Mkdir(c.Path, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		return c, nil
	}
	return nil, fmt.Errorf("contain: create cgroup: %w", errors.Join(errs...))
}

// ContainerAt adopts an existing cgroup directory as a Container (in
// cgroup v2 a process is in one cgroup only, so a v2 Throttle is its
// tree's container too). Its version is read from the file system.
func ContainerAt(dir string) (*Container, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil, fmt.Errorf("contain: %w", err)
	}
	switch st.Type {
	case unix.CGROUP2_SUPER_MAGIC:
		return &Container{Path: dir, Version: 2}, nil
	case unix.CGROUP_SUPER_MAGIC:
		return &Container{Path: dir, Version: 1}, nil
	}
	return nil, fmt.Errorf("contain: %s is not a cgroup", dir)
}

// IsCgroup2 reports whether dir lies in a cgroup v2 hierarchy.
func IsCgroup2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// CgroupParent is a directory where this project creates cgroups.
type CgroupParent struct {
	Dir     string
	Version int
	Kind    string // "v2", "freezer" or "cpu"
}

// ContainerParents lists, in order of preference, the writable
// directories NewContainer may create a cgroup in.
func ContainerParents() []CgroupParent {
	var out []CgroupParent
	for _, p := range CgroupParents() {
		if p.Kind != "cpu" && writable(p.Dir) {
			out = append(out, p)
		}
	}
	return out
}

// CgroupParents lists every directory where this project creates cgroups
// (containers and throttles), writable or not: our own cgroup and the
// root of the v2 hierarchy, of the v1 freezer and of the v1 cpu
// hierarchy. A scan for leftovers looks in all of them.
func CgroupParents() []CgroupParent {
	mounts, err := procfs.ReadMounts()
	if err != nil {
		return nil
	}
	var out []CgroupParent
	add := func(p CgroupParent) {
		for _, q := range out {
			if q.Dir == p.Dir {
				return
			}
		}
		out = append(out, p)
	}
	var v2, freezer, cpu []CgroupParent
	for _, m := range mounts {
		mountPoint, fsType, opts := m.Point, m.FSType, m.Super
		switch {
		case fsType == "cgroup2":
			if own := procfs.OwnCgroupV2(); own != "" && own != "/" {
				v2 = append(v2, CgroupParent{filepath.Join(mountPoint, own), 2, "v2"})
			}
			v2 = append(v2, CgroupParent{mountPoint, 2, "v2"})
		case fsType == "cgroup" && slices.Contains(opts, "freezer"):
			if own := procfs.OwnCgroupV1("freezer"); own != "" && own != "/" {
				freezer = append(freezer, CgroupParent{filepath.Join(mountPoint, own), 1, "freezer"})
			}
			freezer = append(freezer, CgroupParent{mountPoint, 1, "freezer"})
		case fsType == "cgroup" && slices.Contains(opts, "cpu"):
			if own := procfs.OwnCgroupV1("cpu"); own != "" && own != "/" {
				cpu = append(cpu, CgroupParent{filepath.Join(mountPoint, own), 1, "cpu"})
			}
			cpu = append(cpu, CgroupParent{mountPoint, 1, "cpu"})
		}
	}
	for _, l := range [][]CgroupParent{v2, freezer, cpu} {
		for _, p := range l {
			add(p)
		}
	}
	return out
}

// Procs lists the processes in the cgroup (not its children cgroups).
func (c *Container) Procs() ([]int, error) {
	return cgroupProcs(c.Path)
}

// CgroupProcs lists the processes in the cgroup directory dir.
func CgroupProcs(dir string) ([]int, error) { return cgroupProcs(dir) }

func cgroupProcs(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range bytes.Fields(b) {
		if n, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// Kill SIGKILLs every process in the cgroup and waits (up to 10 s) until
// it is empty. cgroup v2 has cgroup.kill (Linux 5.14+), which kills
// atomically; without it, and in the v1 freezer, the cgroup is frozen so
// that nothing forks while the members are killed one by one, then thawed
// so that the kills take effect. A v1 cgroup without a freezer is killed
// member by member until empty.
func (c *Container) Kill() error {
	deadline := time.Now().Add(containWait)
	for {
		procs, err := c.Procs()
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("contain: %w", err)
		}
		if len(procs) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("contain: cgroup %s: %v still alive %s after SIGKILL", c.Path, procs, containWait)
		}
		c.killOnce(procs)
		time.Sleep(killPoll)
	}
}

func (c *Container) killOnce(procs []int) {
	kill := func(procs []int) {
		for _, p := range procs {
			_ = unix.Kill(p, unix.SIGKILL)
		}
	}
	if c.Version == 2 {
		if writeFile(filepath.Join(c.Path, "cgroup.kill"), "1") == nil {
			return
		}
		if writeFile(filepath.Join(c.Path, "cgroup.freeze"), "1") == nil {
			procs, _ = c.Procs()
			kill(procs)
			_ = writeFile(filepath.Join(c.Path, "cgroup.freeze"), "0")
			return
		}
		kill(procs)
		return
	}
	state := filepath.Join(c.Path, "freezer.state")
	if writeFile(state, "FROZEN") == nil {
		for range 50 {
			if b, _ := os.ReadFile(state); strings.TrimSpace(string(b)) == "FROZEN" {
				break
			}
			time.Sleep(killPoll / 4)
		}
		procs, _ = c.Procs()
		kill(procs)
		_ = writeFile(state, "THAWED")
		return
	}
	kill(procs)
}

// Remove deletes the cgroup; its processes must have exited (Kill). An
// exiting process may hold it for a moment, so Remove retries for up to a
// second. A cgroup already gone is fine.
func (c *Container) Remove() error {
	return RemoveCgroup(c.Path)
}

// RemoveCgroup deletes the cgroup directory dir, retrying for up to a
// second while its last processes exit.
func RemoveCgroup(dir string) error {
	var err error
	for range 50 {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup: %w", err)
}
