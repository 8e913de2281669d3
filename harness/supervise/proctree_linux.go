//go:build linux

package supervise

import (
	"fmt"

	"github.com/ceiling-bench/ceiling/internal/procfs"
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
// grandchildren, ...; root itself excluded), sorted: procfs.Descendants.
func Descendants(root int) ([]int, error) { return procfs.Descendants(root) }

// threadChildren lists the children that thread tid of pid forked (or
// that were reparented to it), in the kernel's order.
func threadChildren(pid, tid int) []int { return procfs.ThreadChildren(pid, tid) }

// descendantsByScan is procfs.DescendantsByScan (kept for this package's
// tests and benchmarks).
func descendantsByScan(root int) ([]int, error) { return procfs.DescendantsByScan(root) }

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
