package harness

import (
	"fmt"
	"io"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// Progress writes the one-line progress report the sweep prints on stderr
// before each point: point i of N, batch and connections, elapsed, ETA.
// The ETA is the mean wall time of the points done so far times the points
// left; before the first point ends there is none.
func Progress(w io.Writer, i, n int, role string, k result.PointKey, elapsed time.Duration) {
	eta := "?"
	if i > 1 {
		per := elapsed / time.Duration(i-1)
		eta = fmtDur(per * time.Duration(n-i+1))
	}
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
		i, n, k.Batch, k.Connections, k.Rep, what, fmtDur(elapsed), eta)
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= time.Minute {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// PlanLine is the line the sweep prints before its first point: how many
// points, of what, and the load time they hold for certain (warm-up plus
// window each); each point's boot and stop come on top, which Progress's
// ETA measures once a point is done.
func PlanLine(w io.Writer, points int, parts string, load time.Duration) {
	fmt.Fprintf(w, "plan: %d points (%s): %s of load, plus each point's boot and stop\n", points, parts, fmtDur(load))
}
