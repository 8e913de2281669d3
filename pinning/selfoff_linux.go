package pinning

import (
	"fmt"
	"os"
	"slices"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"golang.org/x/sys/unix"
)

// KeepSelfOff moves every thread of this process onto the CPUs it may run
// on that are in none of avoid (the server's and the generator's pinned
// sets), so the harness's own work (sampling, scanning, the event loop
// that watches the children) does not land on the CPUs it measures.
// Threads the Go runtime starts later inherit the mask from the thread
// that starts them. It returns the CPUs the process now keeps to, and a
// restore that puts every thread (those started since too) back on the
// CPUs it had. Where no CPU is free of avoid it moves nothing and returns
// nil: the harness then shares the pinned CPUs, and attribution counts
// its share (harness_fraction). Children pin themselves (Command), so
// the move does not reach the server or the generator.
func KeepSelfOff(avoid ...CPUSet) (kept CPUSet, restore func(), err error) {
	noop := func() {}
	had, err := Granted(os.Getpid())
	if err != nil {
		return nil, noop, err
	}
	for _, c := range had {
		if !slices.ContainsFunc(avoid, func(s CPUSet) bool { return s.Contains(c) }) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil, noop, nil
	}
	if err := setAllThreads(kept); err != nil {
		_ = setAllThreads(had)
		return nil, noop, err
	}
	return kept, func() { _ = setAllThreads(had) }, nil
}

// setAllThreads sets the affinity of every thread of this process. A
// thread that one not yet moved starts while the list is walked inherits
// the old mask and is missing from the list: the list is read again until
// a reading holds no thread not yet moved (threads started after that
// descend from moved ones, and inherit the new mask). Bounded: a process
// that kept starting threads faster than they are moved would stop here
// with the error saying so.
func setAllThreads(cpus CPUSet) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	var first error
	moved := map[int]bool{}
	for range maxPasses {
		fresh := false
		for _, tid := range procfs.Tasks(os.Getpid()) {
			if moved[tid] {
				continue
			}
			fresh, moved[tid] = true, true
			if err := unix.SchedSetaffinity(tid, &set); err != nil && first == nil && err != unix.ESRCH {
				first = fmt.Errorf("sched_setaffinity(thread %d, %s): %w", tid, cpus, err)
			}
		}
		if !fresh {
			return first
		}
	}
	if first == nil {
		first = fmt.Errorf("sched_setaffinity(%s): threads still starting after %d readings of the list", cpus, maxPasses)
	}
	return first
}

// maxPasses bounds setAllThreads' readings of the thread list.
const maxPasses = 100
