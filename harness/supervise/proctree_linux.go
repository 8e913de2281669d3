//go:build linux

package supervise

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/pinning"
)

// ProcStat is /proc/PID/stat as internal/procfs parses it.
type ProcStat = procfs.Stat

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (ProcStat, error) { return procfs.ReadStat(pid) }

// parseStat is procfs.ParseStat (kept for this package's tests).
func parseStat(pid int, b []byte) (ProcStat, error) { return procfs.ParseStat(pid, b) }

// AllProcs reads the stat of every process in /proc. Processes that vanish
// while it reads are skipped.
func AllProcs() ([]ProcStat, error) {
	pids, err := procfs.Pids()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	out := make([]ProcStat, 0, len(pids))
	for _, pid := range pids {
		if st, err := ReadStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out, nil
}

// Descendants returns the pids whose ancestor is root (children,
// grandchildren, ...; root itself excluded), sorted. Threads are not
// processes and are not listed.
//
// It walks the tree through /proc/PID/task/TID/children, which costs a few
// small reads per process of the tree instead of a scan of every process
// on the machine (the sampler calls it 4 times a second per side); where
// the kernel lacks those files it falls back to the scan.
func Descendants(root int) ([]int, error) {
	if _, err := os.Stat("/proc/" + strconv.Itoa(root) + "/task/" + strconv.Itoa(root) + "/children"); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(root)); err == nil {
			return descendantsByScan(root)
		}
		return nil, nil // root is gone: no descendants
	}
	return walkTree(root, pinning.Children), nil
}

// walkTree lists root's descendants, sorted, breadth first over kids.
func walkTree(root int, kids func(pid int) []int) []int {
	out := pinning.WalkTree(root, kids)
	slices.Sort(out)
	return out
}

// threadChildren lists the children that thread tid of pid forked (or
// that were reparented to it), in the kernel's order.
func threadChildren(pid, tid int) []int { return procfs.ThreadChildren(pid, tid) }

// descendantsByScan builds the parent map from every process's stat.
func descendantsByScan(root int) ([]int, error) {
	all, err := AllProcs()
	if err != nil {
		return nil, err
	}
	kids := make(map[int][]int)
	for _, p := range all {
		kids[p.PPid] = append(kids[p.PPid], p.Pid)
	}
	return walkTree(root, func(pid int) []int { return kids[pid] }), nil
}

// GroupMembers returns the live (not zombie) processes of process group
// pgid, sorted.
func GroupMembers(pgid int) ([]int, error) {
	all, err := AllProcs()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range all {
		if p.PGrp == pgid && p.State != 'Z' {
			out = append(out, p.Pid)
		}
	}
	return out, nil
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	st, err := ReadStat(pid)
	return err == nil && st.State != 'Z'
}

// tasks lists the threads of pid.
func tasks(pid int) []int { return procfs.Tasks(pid) }
