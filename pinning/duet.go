package pinning

import (
	"fmt"
	"path/filepath"
	"slices"
)

// DuetHalf picks the second half of a duet split (docs/compare.md, "Duet
// mode"): a server set and a generator set of the same sizes as server and
// gen, from the CPUs of available that are in neither set and share no
// physical core with them, so that the two halves run on disjoint cores.
// Whole cores are taken together where the topology is known: the
// candidates are ordered core by core, the server's CPUs first.
//
// It returns an error saying how many CPUs were needed and found when the
// machine has too few.
func DuetHalf(server, gen, available CPUSet) (server2, gen2 CPUSet, err error) {
	first := append(slices.Clone(server), gen...)
	need := len(server) + len(gen)
	siblings := func(c int) CPUSet {
		if !Supported {
			return CPUSet{c}
		}
		sib, err := readList(filepath.Join(sysCPU, fmt.Sprintf("cpu%d", c), "topology", "thread_siblings_list"))
		if err != nil || !sib.Contains(c) {
			return CPUSet{c} // topology unknown: the CPU alone
		}
		return sib
	}
	taken := map[int]bool{}
	for _, c := range first {
		for _, s := range siblings(c) {
			taken[s] = true
		}
	}
	var free CPUSet // core by core
	seen := map[int]bool{}
	for _, c := range available {
		if taken[c] || seen[c] {
			continue
		}
		for _, s := range siblings(c) {
			if available.Contains(s) && !taken[s] && !seen[s] {
				seen[s] = true
				free = append(free, s)
			}
		}
	}
	if len(free) < need {
		return nil, nil, fmt.Errorf("a duet needs 2 × (%d server + %d generator) = %d CPUs on disjoint cores; besides server %s and generator %s (and their SMT siblings), %s leaves %d",
			len(server), len(gen), 2*need, server, gen, available, len(free))
	}
	server2 = slices.Clone(free[:len(server)])
	gen2 = slices.Clone(free[len(server):need])
	slices.Sort(server2)
	slices.Sort(gen2)
	return server2, gen2, nil
}
