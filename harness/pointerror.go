package harness

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/supervise"
)

// Phases of a point, named by PointError.
const (
	PhaseFiles     = "files"     // the point's fresh directory and port
	PhaseBoot      = "boot"      // starting the server
	PhaseReady     = "ready"     // waiting for its readiness probe
	PhaseGenerator = "generator" // starting the generator
	PhaseMarker    = "marker"    // waiting for the generator's window to open
	PhaseCollect   = "collect"   // the generator's exit and its JSON
	PhaseStop      = "stop"      // stopping the server
)

// ErrPointInterrupted is the cause of a PointError when the sweep's
// context ended during the point.
var ErrPointInterrupted = errors.New("interrupted")

// PointError is why a point failed: the phase and the reason (its text is
// the point's fail_reason), and the log tail that explains it.
type PointError struct {
	Phase string
	Err   error
	Tail  string
	// Refused: the generator's preflight was refused as every point's
	// would be (load.Refused): the sweep stops.
	Refused bool
}

func (e *PointError) Error() string { return e.Err.Error() }
func (e *PointError) Unwrap() error { return e.Err }

// tailLines is how much of a log a failure carries.
const tailLines = 30

// failAt is a point's failure in phase, with tailOf's log tail (nil:
// none).
func failAt(phase string, tailOf supervise.Process, format string, args ...any) *PointError {
	e := &PointError{Phase: phase, Err: fmt.Errorf(format, args...)}
	if tailOf != nil {
		e.Tail = tailOf.Tail(tailLines)
	}
	return e
}

// interruptedAt is a point cut short by the sweep's end in phase.
func interruptedAt(phase string) *PointError {
	return &PointError{Phase: phase, Err: ErrPointInterrupted}
}

// lastWords is ": " and the last line a process wrote (its own error,
// as "ceiling load: preflight: ... 401 ..."), at most 300 bytes, or ""
// when it wrote nothing: the cause belongs on the terminal's first line,
// not only in the result's log_tail.
func lastWords(pr supervise.Process) string {
	lines := strings.Split(strings.TrimSpace(pr.Tail(tailLines)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	if len(last) > 300 {
		last = strings.ToValidUTF8(last[:300], "") + "…"
	}
	return ": " + last
}

// exitText is a child's exit for a reason: its error, or "exit status 0".
func exitText(pr supervise.Process) string {
	if err := pr.ExitErr(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}
