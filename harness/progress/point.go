package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// Point writes the line before point i of n of a sweep: its batch,
// connections and repeat, what it is for when it is no sweep point,
// elapsed, and the estimate of the time left.
func Point(w io.Writer, i, n int, role string, k result.PointKey, elapsed time.Duration) {
	what := ""
	switch role {
	case result.RoleAARepeat:
		what = " (A-A repeat)"
	case result.RoleHeadroom:
		what = " (headroom probe)"
	case result.RoleResilience:
		what = " (resilience: FAULT)"
	}
	fmt.Fprintf(w, "point %d/%d: batch %d, %d connections, rep %d%s | elapsed %s, eta %s\n",
		i, n, k.Batch, k.Connections, k.Rep, what, dur(elapsed), eta(i, n, elapsed))
}

// eta is the time left before point i of n: the mean of the i-1 points
// done times the points left, "?" before any is done.
func eta(i, n int, elapsed time.Duration) string {
	if i <= 1 {
		return "?"
	}
	return dur(elapsed / time.Duration(i-1) * time.Duration(n-i+1))
}
