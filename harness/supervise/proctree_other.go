//go:build !linux

package supervise

import (
	"errors"

	"github.com/ceiling-bench/ceiling/internal/procfs"
)

var errNoProc = errors.New("process listing needs Linux /proc")

// ProcStat is /proc/PID/stat as internal/procfs parses it.
type ProcStat = procfs.Stat

// ReadStat needs Linux.
func ReadStat(pid int) (ProcStat, error) { return ProcStat{}, errNoProc }

// AllProcs needs Linux.
func AllProcs() ([]ProcStat, error) { return nil, errNoProc }

// Descendants needs Linux.
func Descendants(root int) ([]int, error) { return nil, errNoProc }

// GroupMembers needs Linux.
func GroupMembers(pgid int) ([]int, error) { return nil, errNoProc }

// Alive needs Linux; it reports false.
func Alive(pid int) bool { return false }

func threadChildren(pid, tid int) []int { return nil }

func tasks(pid int) []int { return nil }
