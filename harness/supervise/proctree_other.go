//go:build !linux

package supervise

import "errors"

var errNoProc = errors.New("process listing needs Linux /proc")

// ProcStat is the part of /proc/PID/stat the harness uses.
type ProcStat struct {
	Pid, PPid, PGrp int
	State           byte
	StartTicks      uint64
}

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
