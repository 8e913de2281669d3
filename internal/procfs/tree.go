package procfs

import (
	"errors"
	"os"
	"slices"
	"strconv"
)

// Descendants returns the pids whose ancestor is root (children,
// grandchildren, ...; root itself excluded), sorted. Threads are not
// processes and are not listed.
//
// It walks the tree through /proc/PID/task/TID/children, which costs a few
// small reads per process of the tree instead of a scan of every process
// on the machine (the sampler calls it 4 times a second per side); where
// the kernel lacks those files it falls back to the scan
// (DescendantsByScan).
func Descendants(root int) ([]int, error) {
	if _, err := os.Stat(Root + "/" + strconv.Itoa(root) + "/task/" + strconv.Itoa(root) + "/children"); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(Root + "/" + strconv.Itoa(root)); err == nil {
			return DescendantsByScan(root)
		}
		return nil, nil // root is gone: no descendants
	}
	return sortedTree(root, Children), nil
}

// DescendantsByScan is Descendants from the parent of every process in
// /proc (each one's stat): what Descendants falls back to, and what its
// walk is checked against. Processes that vanish while it reads are
// skipped.
func DescendantsByScan(root int) ([]int, error) {
	pids, err := Pids()
	if err != nil {
		return nil, err
	}
	kids := make(map[int][]int)
	for _, pid := range pids {
		if st, err := ReadStat(pid); err == nil {
			kids[st.PPid] = append(kids[st.PPid], st.Pid)
		}
	}
	return sortedTree(root, func(pid int) []int { return kids[pid] }), nil
}

// sortedTree is WalkTree, sorted.
func sortedTree(root int, kids func(pid int) []int) []int {
	out := WalkTree(root, kids)
	slices.Sort(out)
	return out
}

// WalkTree lists root's descendants breadth first, asking kids for each
// process's children; each pid once, root excluded.
func WalkTree(root int, kids func(pid int) []int) []int {
	var out []int
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range kids(pid) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// Children lists the children of every thread of pid (a child's parent is
// the thread that forked it), from /proc/PID/task/TID/children; nil when
// pid is gone.
func Children(pid int) []int {
	var out []int
	for _, tid := range Tasks(pid) {
		out = append(out, ThreadChildren(pid, tid)...)
	}
	return out
}
