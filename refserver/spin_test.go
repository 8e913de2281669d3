package refserver

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// threadSched is this thread's time on a CPU and time runnable but
// waiting for one, from /proc/thread-self/schedstat (Linux).
func threadSched(t *testing.T) (onCPU, waiting time.Duration) {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		t.Skipf("schedstat: %v", err)
	}
	var run, wait int64
	if _, err := fmt.Sscan(string(b), &run, &wait); err != nil {
		t.Fatalf("schedstat %q: %v", b, err)
	}
	return time.Duration(run), time.Duration(wait)
}

// TestSpinBurnsCPU: spin is a busy loop, not a sleep: it takes at least
// its duration, and for all of it the thread was either on a CPU or
// runnable and waiting for one, never asleep. That holds on a busy
// machine too, where other work takes the CPU from the loop: the kernel
// counts that time as waiting, not as sleeping.
func TestSpinBurnsCPU(t *testing.T) {
	const d = 200 * time.Millisecond
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	run0, wait0 := threadSched(t)
	wall0 := time.Now()
	spin(d)
	wall := time.Since(wall0)
	run1, wait1 := threadSched(t)
	if wall < d {
		t.Errorf("spin(%s) returned after %s", d, wall)
	}
	// A sleep of d would be neither on a CPU nor waiting for one. Half
	// leaves room for what a busy machine does to a locked thread: the
	// runtime preempts the loop every 10 ms or so, and the thread sleeps
	// until the scheduler, itself waiting for a CPU, hands it back.
	if busy := (run1 - run0) + (wait1 - wait0); busy < d/2 {
		t.Errorf("spin(%s) over %s of wall time: %s on a CPU, %s waiting for one: it slept", d, wall, run1-run0, wait1-wait0)
	}
	start := time.Now()
	spin(0)
	spin(-time.Second)
	if e := time.Since(start); e > time.Second {
		t.Errorf("spin(0) and spin(<0) took %s, want at once", e)
	}
}

// TestEchoSpins: with Spin set, every echoed message costs at least it.
func TestEchoSpins(t *testing.T) {
	const d, n = 20 * time.Millisecond, 5
	ts := start(t, Config{Spin: d})
	c := ts.dial(t, "/echo")
	start := time.Now()
	for i := range n {
		if err := c.WriteMessage(websocket.TextMessage, []byte{byte('a' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if _, data, err := c.ReadMessage(); err != nil || string(data) != string(rune('a'+i)) {
			t.Fatalf("message %d: %q, %v", i, data, err)
		}
	}
	if e := time.Since(start); e < n*d {
		t.Errorf("%d echoes with Spin %s took %s, want at least %s", n, d, e, n*d)
	}
}

func TestSpinNegativeRefused(t *testing.T) {
	if _, err := New(Config{Spin: -time.Millisecond}); err == nil {
		t.Fatal("New accepted a negative Spin")
	}
}

// TestGarbageAllocates: garbage puts its bytes on the heap, every time,
// and nothing for 0; an echo server with Garbage allocates at least that
// per message echoed.
func TestGarbageAllocates(t *testing.T) {
	const n = 64 << 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		garbage(n)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got < 10*n {
		t.Errorf("10 garbage(%d) allocated %d bytes, want %d or more", n, got, 10*n)
	}
	if allocs := testing.AllocsPerRun(10, func() { garbage(0) }); allocs != 0 {
		t.Errorf("garbage(0) allocated %v times", allocs)
	}

	c := start(t, Config{Garbage: n}).dial(t, "/echo")
	runtime.ReadMemStats(&before)
	const msgs = 20
	for range msgs {
		if err := c.WriteMessage(websocket.BinaryMessage, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got < msgs*n {
		t.Errorf("%d echoes allocated %d bytes, want %d or more", msgs, got, msgs*n)
	}
	if _, err := New(Config{Garbage: -1}); err == nil {
		t.Error("a negative garbage was accepted")
	}
}
