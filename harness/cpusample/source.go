package cpusample

import "github.com/ceiling-bench/ceiling/internal/procfs"

// Source says which processes to sample; it is called at every tick, so a
// tree's new children are found as they appear.
type Source func() []int

// Tree samples root and all its descendants (children, grandchildren, ...),
// re-discovered from /proc at every tick. Use it for the server (whatever
// it forks) and for a GENERATOR wrapper whose real work is a child.
func Tree(root int) Source {
	return func() []int {
		kids, _ := procfs.Descendants(root) // no /proc: the root alone
		return append([]int{root}, kids...)
	}
}

// PIDs samples a fixed list of processes.
func PIDs(pids ...int) Source {
	return func() []int { return pids }
}
