// Package cpuset is a CPU list in taskset's syntax ("0", "1,2,3", "0-3",
// "0-3,8"): Set, parsed and checked against the CPUs online, written back
// with its ranges collapsed, and a flag.Value. It is a leaf (the standard
// library only, no process started), so that what reads a list (the
// knobs) links none of what pins to it (package pinning, whose Set is
// this Set).
package cpuset

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxCPU is the highest CPU number a Set may name: the size of the
// kernel's default cpu_set_t (CPU_SETSIZE 1024) minus one.
const MaxCPU = 1023

// Set is a sorted list of unique CPU numbers. The zero value (nil) is the
// empty set, which means "not pinned" wherever a set is optional.
//
// *Set implements flag.Value in taskset's list syntax, so a FlagSet can
// take it directly: fs.Var(&opts.ServerCPUs, "server-cpus", "...").
type Set []int

// Parse reads a CPU list in taskset's syntax ("0", "1,2,3", "0-3", "0-3,8")
// and checks every CPU against the online list of this machine. name is the
// flag or variable the list came from (e.g. "SRV_CPUSET"); every error
// starts with it. Empty, malformed, reversed, duplicate, out-of-range and
// offline CPUs are errors.
//
// Where pinning is unsupported (not Linux), only the syntax is checked.
func Parse(name, s string) (Set, error) {
	online, err := Online()
	if errors.Is(err, ErrUnsupported) {
		online = nil
	} else if err != nil {
		return nil, prefix(name, err)
	}
	return ParseWithin(name, s, online)
}

// ParseWithin is Parse against a given online set; a nil online set skips
// the online check (syntax and range only).
func ParseWithin(name, s string, online Set) (Set, error) {
	set, err := parseList(s)
	if err != nil {
		return nil, prefix(name, err)
	}
	if online != nil {
		for _, c := range set {
			if !online.Contains(c) {
				return nil, prefix(name, fmt.Errorf("cpu %d is not online (online: %s)", c, online))
			}
		}
	}
	return set, nil
}

func prefix(name string, err error) error {
	if name == "" {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// parseList does the syntax: comma-separated CPUs or inclusive ranges.
func parseList(s string) (Set, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty cpu list")
	}
	seen := make(map[int]bool)
	var set Set
	for i, elem := range strings.Split(s, ",") {
		elem = strings.TrimSpace(elem)
		if elem == "" {
			return nil, fmt.Errorf("malformed cpu list %q: element %d is empty", s, i+1)
		}
		lo, hi, err := parseElem(elem)
		if err != nil {
			return nil, fmt.Errorf("malformed cpu list %q: %w", s, err)
		}
		for c := lo; c <= hi; c++ {
			if seen[c] {
				return nil, fmt.Errorf("cpu %d is listed twice in %q", c, s)
			}
			seen[c] = true
			set = append(set, c)
		}
	}
	slices.Sort(set)
	return set, nil
}

// parseElem reads "N" or "N-M".
func parseElem(elem string) (lo, hi int, err error) {
	a, b, isRange := strings.Cut(elem, "-")
	if lo, err = parseCPU(a); err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	if hi, err = parseCPU(b); err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("range %q is reversed", elem)
	}
	return lo, hi, nil
}

func parseCPU(s string) (int, error) {
	s = strings.TrimSpace(s)
	// Digits only: no signs, no spaces inside, no hex.
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a cpu number", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxCPU {
		return 0, fmt.Errorf("cpu %s is out of range (0-%d)", s, MaxCPU)
	}
	return n, nil
}

// String renders the set in the same list syntax, ranges collapsed:
// Set{0, 1, 2, 3, 8} is "0-3,8". The empty set is "".
func (c Set) String() string {
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Set implements flag.Value: it parses s and checks it against the online
// CPUs. The flag package prefixes the error with the flag's name.
func (c *Set) Set(s string) error {
	v, err := Parse("", s)
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Contains reports whether cpu is in the set.
func (c Set) Contains(cpu int) bool {
	_, ok := slices.BinarySearch(c, cpu)
	return ok
}

// Ints returns the set as a plain slice (a copy), for JSON documents.
func (c Set) Ints() []int {
	if c == nil {
		return []int{}
	}
	return slices.Clone([]int(c))
}

// Overlap returns the CPUs in both a and b (nil when they are disjoint).
func Overlap(a, b Set) Set {
	var out Set
	for _, c := range a {
		if b.Contains(c) {
			out = append(out, c)
		}
	}
	return out
}
