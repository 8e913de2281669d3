package refserver

import "time"

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
