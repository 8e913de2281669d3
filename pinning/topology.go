package pinning

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/ceiling-bench/ceiling/internal/cpuset"
)

// sysCPU is where the kernel publishes the CPU topology; tests point it at a
// fake tree.
var sysCPU = "/sys/devices/system/cpu"

// Online returns the CPUs the kernel has online
// (/sys/devices/system/cpu/online). Where pinning is unsupported it returns
// ErrUnsupported.
func Online() (CPUSet, error) {
	if !Supported {
		return nil, ErrUnsupported
	}
	return readList(filepath.Join(sysCPU, "online"))
}

// SMTSiblings returns the (server cpu, generator cpu) pairs that are
// hardware threads of one physical core, from each server CPU's
// topology/thread_siblings_list. Two such threads share execution units, so
// the two sides still compete for the core even though their sets are
// disjoint. A CPU in both sets is an overlap, not a sibling pair, and is not
// listed. Pairs are sorted by server CPU, then generator CPU.
func SMTSiblings(server, gen CPUSet) ([][2]int, error) {
	if !Supported {
		return nil, ErrUnsupported
	}
	pairs := [][2]int{}
	for _, s := range server {
		sib, err := readList(filepath.Join(sysCPU, fmt.Sprintf("cpu%d", s), "topology", "thread_siblings_list"))
		if err != nil {
			return nil, fmt.Errorf("smt siblings of cpu %d: %w", s, err)
		}
		for _, g := range gen {
			if g != s && sib.Contains(g) {
				pairs = append(pairs, [2]int{s, g})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return pairs, nil
}

// readList reads a sysfs CPU list file ("0-1\n").
func readList(path string) (CPUSet, error) { return cpuset.ReadList(path) }
