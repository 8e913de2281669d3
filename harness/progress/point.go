package progress

import (
	"fmt"
	"io"
	"strings"
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

// Failed writes the line after point i of n (0: a two-arm sweep's, not
// counted) when it failed (arm: its arm in a two-arm sweep, or ""): the start of its reason, cut to keep
// the line within result.TableWidth columns. The reason is printed in
// full once, under the table the sweep ends with (or on its PARTIAL
// RESULT line when the failure stopped the sweep): a refusal's reason
// runs to hundreds of characters, and printed on every line that
// mentions it, it buried the table.
func Failed(w io.Writer, i, n int, arm, reason string) {
	at := fmt.Sprintf("point %d/%d", i, n)
	if n <= 0 { // a two-arm sweep's, whose count is its plan's
		at = fmt.Sprintf("point %d", i)
	}
	head := at + " failed: "
	if arm != "" {
		head = at + " (" + arm + ") failed: "
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
