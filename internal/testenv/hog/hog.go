// Package hog starts busy loops pinned to given CPUs, for the end-to-end
// tests that judge a sweep or read its output beside contention. It is a
// package of its own, not part of testenv, because it links pinning,
// whose own tests use testenv.
package hog

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

// Start starts busy loops pinned to cpus with the pinning package (the
// same trampoline that pins the server), bounded in time twice over: by
// timeout(1) and by the test's cleanup, which kills its process group. It
// returns once they run where asked.
//
// Four loops, not one: the scheduler favours a task that sleeps and wakes
// (a server waiting on its sockets) over one that never sleeps, and one
// loop was seen to keep only 14% of the core, within SharedMargin. Four
// hold their fair share, so a test does not depend on where the server's
// wake-ups fall.
func Start(t *testing.T, cpus pinning.CPUSet, limit time.Duration) {
	t.Helper()
	const loops = "for i in 1 2 3; do (while :; do :; done) & done; while :; do :; done"
	cmd := pinning.Command(pinning.Spec{CPUs: cpus}, "timeout", strconv.Itoa(int(limit.Seconds())), "sh", "-c", loops)
	h, err := pinning.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-h.Pid(), syscall.SIGKILL)
		_ = h.Wait()
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := pinning.Granted(h.Pid())
		if err == nil && got.String() == cpus.String() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("hog pinned to %v (%v), want %s", got, err, cpus)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
