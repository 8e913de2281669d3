package result

import (
	"fmt"
	"strings"
)

// EscapedWarning is the result's warning for a point whose processes
// escaped their supervisor (Point.Escaped), "" for none.
func (p Point) EscapedWarning() string {
	if len(p.Escaped) == 0 {
		return ""
	}
	var what []string
	for _, e := range p.Escaped {
		what = append(what, fmt.Sprintf("%d (%s)", e.Pid, e.Command))
	}
	return fmt.Sprintf("point %d: %d process(es) escaped the supervisor and were killed after the point: %s; they ran outside its tree (started through another process, or the supervisor died), and may have used the pinned CPUs",
		p.Index, len(p.Escaped), strings.Join(what, ", "))
}
