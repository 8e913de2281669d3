package progress

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/schedule"
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

// Arm is Point's line for a two-arm sweep's point ap: its arm, its phase
// and, in a duet, its half of the machine.
func Arm(w io.Writer, i, n int, ap schedule.Point, half string, elapsed time.Duration) {
	phase := "first pass"
	if ap.Role == result.RoleCompare {
		phase = "compare"
	}
	if half != "" {
		phase += ", duet half " + half
	}
	k := ap.Key
	fmt.Fprintf(w, "point %d/%d: %s, batch %d, %d connections, rep %d (%s) | elapsed %s, eta %s\n",
		i, n, ap.Arm, k.Batch, k.Connections, k.Rep, phase, dur(elapsed), eta(i, n, elapsed))
}

// Failed writes the line after point i of n when it failed (arm: its
// arm in a two-arm sweep, or ""): the start of its reason, cut to keep
// the line within result.TableWidth columns. The reason is printed in
// full once, under the table the sweep ends with (or on its PARTIAL
// RESULT line when the failure stopped the sweep): a refusal's reason
// runs to hundreds of characters, and printed on every line that
// mentions it, it buried the table.
func Failed(w io.Writer, i, n int, arm, reason string) {
	head := fmt.Sprintf("point %d/%d failed: ", i, n)
	if arm != "" {
		head = fmt.Sprintf("point %d/%d (%s) failed: ", i, n, arm)
	}
	const more = "… (in full under the table)"
	line := head + strings.Join(strings.Fields(reason), " ")
	if r := []rune(line); len(r) > result.TableWidth {
		line = strings.TrimRight(string(r[:result.TableWidth-len([]rune(more))]), " ") + more
	}
	fmt.Fprintln(w, line)
}

// eta is the time left before point i of n: the mean of the i-1 points
// done times the points left, "?" before any is done.
func eta(i, n int, elapsed time.Duration) string {
	if i <= 1 {
		return "?"
	}
	return dur(elapsed / time.Duration(i-1) * time.Duration(n-i+1))
}
