package progress

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/result"
)

// TwoArmPoint writes the line before point i of a two-arm sweep: which
// first-pass point of at most how many, or which block, and how many
// ran clean of those planned (a count set once, when the first pass is
// over: a lost block is run again beyond it), or which profiled block
// of how many (after the compared ones, never compared), its arm, key
// and, in a duet, its half; elapsed, and the time left (left).
func TwoArmPoint(w io.Writer, i int, ap schedule.Point, half string, pr schedule.Progress, elapsed time.Duration) {
	k := ap.Key
	var where string
	switch ap.Role {
	case result.RoleCompare:
		where = fmt.Sprintf("block %d", k.Rep+1)
		if pr.BlocksPlanned > 0 {
			where += fmt.Sprintf(" (clean %d of %d planned)", pr.BlocksClean, pr.BlocksPlanned)
		}
	case result.RoleProfile:
		where = fmt.Sprintf("profiled block %d of %d", k.Rep+1, pr.ProfileBlocks)
	default:
		where = fmt.Sprintf("first pass %d of at most %d", pr.FirstRun+1, pr.FirstMost)
	}
	if half != "" {
		where += ", duet half " + half
	}
	fmt.Fprintf(w, "point %d, %s: %s, batch %d, %d connections | elapsed %s, %s\n",
		i, where, ap.Arm, k.Batch, k.Connections, dur(elapsed), left(pr))
}

// TwoArmArms writes the line before warm arms are booted or stopped.
func TwoArmArms(w io.Writer, st schedule.Step, pr schedule.Progress, elapsed time.Duration) {
	verb := "booting"
	if st.Kind == schedule.StopArms {
		verb = "stopping"
	}
	fmt.Fprintf(w, "arms: %s %s: %s | elapsed %s, %s\n", verb, strings.Join(st.Arms, " and "), st.Why, dur(elapsed), left(pr))
}

// left is the time left in words: the schedule's estimate, which never
// runs past the budget; "?" before anything was timed.
func left(pr schedule.Progress) string {
	if !pr.LeftKnown {
		return "left ?"
	}
	return "left " + dur(pr.Left)
}
