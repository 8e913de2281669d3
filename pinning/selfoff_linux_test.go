package pinning

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"golang.org/x/sys/unix"
)

// threadsOn reads every thread's affinity.
func threadsOn(t *testing.T) map[int]string {
	t.Helper()
	out := map[int]string{}
	for _, tid := range procfs.Tasks(os.Getpid()) {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err != nil {
			continue
		}
		var c CPUSet
		for i := 0; i <= MaxCPU; i++ {
			if set.IsSet(i) {
				c = append(c, i)
			}
		}
		out[tid] = c.String()
	}
	return out
}

// KeepSelfOff moves every thread, threads started afterwards inherit the
// mask, and restore puts all of them back.
func TestKeepSelfOff(t *testing.T) {
	had, err := Granted(os.Getpid())
	if err != nil || len(had) < 2 {
		t.Skipf("needs 2 CPUs (have %v, %v)", had, err)
	}
	kept, restore, err := KeepSelfOff(CPUSet{had[1]}, CPUSet{})
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	if kept.Contains(had[1]) || len(kept) != len(had)-1 {
		t.Fatalf("kept %s avoiding %d of %s", kept, had[1], had)
	}
	// A thread the runtime starts now inherits the mask.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); runtime.LockOSThread(); defer runtime.UnlockOSThread() }()
	}
	wg.Wait()
	for tid, on := range threadsOn(t) {
		if on != kept.String() {
			t.Errorf("thread %d on %s, want %s", tid, on, kept)
		}
	}
	restore()
	for tid, on := range threadsOn(t) {
		if on != had.String() {
			t.Errorf("after restore: thread %d on %s, want %s", tid, on, had)
		}
	}
	// Nothing free: nothing moves.
	if kept, _, err := KeepSelfOff(had); kept != nil || err != nil {
		t.Errorf("every CPU avoided: kept %s, %v", kept, err)
	}
}

// Threads that start while KeepSelfOff walks the thread list end on the
// kept CPUs too: a thread started by one not yet moved inherits the old
// mask and is not in the list read before it (the unit lane, beside a
// busy loop on each CPU, once found a thread of the runtime's left on
// both CPUs). Goroutines that lock their thread and return without
// unlocking end it, so the runtime keeps starting new ones.
func TestKeepSelfOffWhileThreadsStart(t *testing.T) {
	had, err := Granted(os.Getpid())
	if err != nil || len(had) < 2 {
		t.Skipf("needs 2 CPUs (have %v, %v)", had, err)
	}
	for round := range 20 {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					done := make(chan struct{})
					go func() { runtime.LockOSThread(); close(done) }() // the thread ends with it
					<-done
				}
			}()
		}
		kept, restore, err := KeepSelfOff(CPUSet{had[1]})
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		for tid, on := range threadsOn(t) {
			if on != kept.String() {
				t.Errorf("round %d: thread %d on %s, want %s", round, tid, on, kept)
			}
		}
		restore()
		if t.Failed() {
			return
		}
	}
}
