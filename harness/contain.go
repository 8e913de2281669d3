package harness

import (
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/result"
)

// Containment (see docs/sweep.md, "Containment"): every server and
// generator runs under a supervisor (harness/supervise, pinning) that
// stops its whole tree, in its own cgroup where cgroups are writable.
// What still escaped is recorded in its point; what an earlier, killed run
// left behind is removed when a sweep starts, with a warning.

// escapedOf is what Stop found of each process's tree outside its
// containment.
func escapedOf(procs ...supervise.Process) []result.EscapedProcess {
	var out []result.EscapedProcess
	for _, p := range procs {
		if p == nil {
			continue
		}
		for _, e := range p.Escaped() {
			out = append(out, result.EscapedProcess{Pid: e.Pid, Command: e.Command})
		}
	}
	return out
}

// cleanLeftovers removes what an earlier, killed run left (processes,
// cgroups) and returns the warnings to record.
func cleanLeftovers() []string {
	left, err := supervise.CleanLeftovers()
	var w []string
	if s := supervise.DescribeLeftovers(left); s != "" {
		w = append(w, s)
	}
	if err != nil {
		w = append(w, err.Error())
	}
	return w
}
