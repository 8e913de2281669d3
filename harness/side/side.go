// Package side is the seam between a point's pipeline (package harness)
// and where the point's load comes from: the one generator process (the
// harness's genProc), or AGENTS' coordinator and agent processes
// (package harness/agentside). In vegeta's Targeter spirit it asks a
// side for little: start, the processes to sample and stop, an end, and
// a reason when a step failed; the pipeline does the waiting (on the
// watch for the point's marker, internal/notify, and on Done), owns the phases
// and puts a side's reason in the phase it was in.
package side

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/verdict"
)

// Generator is a point's generator side. A reason of "" is no failure;
// the process returned with a reason is the one whose log tail explains
// it (nil: none).
type Generator interface {
	// Start starts it for the point's url with its `ceiling load` flags,
	// in cgroup ("": none).
	Start(ctx context.Context, url string, flags []string, cgroup string) (tail supervise.Process, err error)
	// Procs are its processes on this machine started so far: their
	// trees are sampled and attributed, the first one's affinity read
	// back, their logs redacted, and they are stopped (by Name) when
	// the point ends.
	Procs() []supervise.Process
	// Done is closed when it ended by itself.
	Done() <-chan struct{}
	// Bounds are its waits, and how its processes are sampled.
	Bounds() Bounds
	// Why is why it failed at step ("" while it has not). wait is the
	// step's bound (Overdue, StillRunning), err the step's own error
	// (Result).
	Why(step Step, wait time.Duration, err error) (string, supervise.Process)
	// Ended, once it ended, puts on out what it reports besides its
	// JSON (the agents' reports) and says why it failed, if it did.
	Ended(out *verdict.Outcome) (string, supervise.Process)
	// Release frees what it holds besides its processes, once they
	// stopped.
	Release()
}

// Bounds are a side's waits: how long after the warm-up its window may
// take to open (Window), and after the window to end (End); and whether
// its processes are sampled at the same instants as one side (Group: the
// agents).
type Bounds struct {
	Window, End time.Duration
	Group       bool
}

// Step is the point of the pipeline a reason is asked at.
type Step int

const (
	// Unready: the window has not opened (the servers still run); why
	// it never will, "" while it still may.
	Unready Step = iota
	// Overdue: it did not open within the warm-up and wait.
	Overdue
	// StillRunning: the side did not end within wait after the window.
	StillRunning
	// Result: its JSON could not be read (err).
	Result
)
