package refserver

import (
	"runtime"
	"time"
)

// spin burns d of CPU on the calling goroutine: a busy loop on the
// monotonic clock (time.Since), not a sleep, so the cost lands on the
// server's cores exactly as slower code would. It is --spin: a regression
// of known size that tests and users plant to check what a comparison
// detects. d <= 0 returns at once.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	start := time.Now()
	for time.Since(start) < d {
	}
}

// garbage allocates n bytes on the heap, writes a byte of every page so
// they are really used, and drops them: the collector's work, planted on
// purpose (--garbage), as a change that allocates per message would.
// n <= 0 allocates nothing. Never inlined: a constant n inlined would let
// the compiler put a small slice on the stack, which is no garbage.
//
//go:noinline
func garbage(n int64) {
	if n <= 0 {
		return
	}
	b := make([]byte, n)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	runtime.KeepAlive(b)
}
