//go:build linux

package testenv

import (
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// wakeLoad starts the load Steal reads under: for each CPU i a thread
// pinned to it sends a byte to one pinned to CPU i+1 (mod n) over a
// socket pair and waits for it back, once at least; stop ends and joins
// them all, and says how many round trips they made.
func wakeLoad() (stop func() int64) {
	n := runtime.NumCPU()
	var done atomic.Bool
	var trips atomic.Int64
	var wg sync.WaitGroup
	if n < 2 {
		return busyLoad()
	}
	var fds [][2]int
	for i := range n {
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			break
		}
		fds = append(fds, pair)
		wg.Add(2)
		go func() { // the sender, on CPU i: ends the pair when done
			defer wg.Done()
			pinned(i, func() {
				b := make([]byte, 1)
				for { // one round trip at least, then until done
					if _, err := unix.Write(pair[0], b); err != nil {
						break
					}
					if k, err := unix.Read(pair[0], b); k <= 0 || err != nil {
						break
					}
					trips.Add(1)
					if done.Load() {
						break
					}
				}
				_ = unix.Shutdown(pair[0], unix.SHUT_WR)
			})
		}()
		go func() { // the echo, on CPU i+1
			defer wg.Done()
			pinned((i+1)%n, func() {
				b := make([]byte, 1)
				for {
					if k, err := unix.Read(pair[1], b); k <= 0 || err != nil {
						return
					}
					if _, err := unix.Write(pair[1], b); err != nil {
						return
					}
				}
			})
		}()
	}
	return func() int64 {
		done.Store(true)
		wg.Wait()
		for _, p := range fds {
			unix.Close(p[0])
			unix.Close(p[1])
		}
		return trips.Load()
	}
}

// pinned runs f on an OS thread of its own pinned to cpu (best effort:
// an unpinned thread still sleeps and wakes), then gives the thread its
// CPUs back before the runtime may reuse it: a thread left pinned would
// run later goroutines on one CPU, and hand that CPU set to every child
// forked from it (a sweep then saw "this runner has 1 CPU"). Where the
// CPUs cannot be given back, the goroutine ends locked and the runtime
// ends the thread with it.
func pinned(cpu int, f func()) {
	runtime.LockOSThread()
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		f() // not pinned: the thread keeps its CPUs
		runtime.UnlockOSThread()
		return
	}
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set)
	f()
	if unix.SchedSetaffinity(0, &was) == nil {
		runtime.UnlockOSThread()
	}
}
