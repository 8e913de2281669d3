package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// Plan writes the line before the first point: how many points, of what
// (parts), and the load time they hold for certain (warm-up plus window
// each); each point's boot and stop come on top, which Point's estimate
// measures once a point is done.
//
// Like every line of the package's, it keeps within result.TableWidth
// columns: the parts are prose, wrapped.
func Plan(w io.Writer, points int, parts string, load time.Duration) {
	line := fmt.Sprintf("plan: %d points (%s): %s of load, plus each point's boot and stop\n", points, parts, dur(load))
	io.WriteString(w, result.Wrap(line, result.TableWidth))
}

// dur is d in whole seconds: 42s, or 3m05s from a minute on.
func dur(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= time.Minute {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}
