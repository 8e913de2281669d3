package pinning

import "github.com/ceiling-bench/ceiling/internal/cpuset"

// CPUSet is a sorted list of unique CPU numbers (internal/cpuset's Set,
// so that what only reads a list, the knobs, links nothing that pins).
// The zero value (nil) is the empty set, which means "not pinned"
// wherever a set is optional. *CPUSet is a flag.Value.
type CPUSet = cpuset.Set

// MaxCPU is the highest CPU number a CPUSet may name.
const MaxCPU = cpuset.MaxCPU

// Parse reads a CPU list in taskset's syntax ("0", "1,2,3", "0-3",
// "0-3,8") and checks every CPU against the online list of this machine;
// name (the flag or variable) starts every error (cpuset.Parse).
func Parse(name, s string) (CPUSet, error) { return cpuset.Parse(name, s) }

// ParseWithin is Parse against a given online set; a nil online set
// skips the online check (syntax and range only).
func ParseWithin(name, s string, online CPUSet) (CPUSet, error) {
	return cpuset.ParseWithin(name, s, online)
}

// Overlap returns the CPUs in both a and b (nil when they are disjoint).
func Overlap(a, b CPUSet) CPUSet { return cpuset.Overlap(a, b) }
