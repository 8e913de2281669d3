package refserver

import (
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// cpuTime is this process's user + system CPU so far.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skipf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSpinBurnsCPU: spin is a busy loop, not a sleep: it takes at least
// its duration and the process spends CPU on it (a quarter of it at the
// least, generous for a shared machine that preempts the loop).
func TestSpinBurnsCPU(t *testing.T) {
	const d = 60 * time.Millisecond
	cpu0, wall0 := cpuTime(t), time.Now()
	spin(d)
	wall, cpu := time.Since(wall0), cpuTime(t)-cpu0
	if wall < d {
		t.Errorf("spin(%s) returned after %s", d, wall)
	}
	if cpu < d/4 {
		t.Errorf("spin(%s) used %s of CPU: it did not burn CPU", d, cpu)
	}
	start := time.Now()
	spin(0)
	spin(-time.Second)
	if e := time.Since(start); e > 50*time.Millisecond {
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
