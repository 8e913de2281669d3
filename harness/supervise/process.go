package supervise

import (
	"syscall"
	"time"
)

// Process is a started child as its callers watch and stop it: *Proc is
// the real one (Start). It is an interface so that the harness's point
// pipeline can be driven by a test's fake processes (harness.Starter),
// whose exits, logs and readiness it scripts, with no process started.
type Process interface {
	Name() string
	// Pid is the root of its tree: what is sampled and attributed.
	Pid() int
	LogPath() string
	// Done is closed once it has exited; Exited and ExitErr say so and
	// how.
	Done() <-chan struct{}
	Exited() bool
	ExitErr() error
	// Tail is the last n lines of its log.
	Tail(n int) string
	// Stop is SIGTERM, grace, then SIGKILL to the tree; Escalated
	// reports whether the SIGKILL was needed; KillTree SIGKILLs the tree
	// now; Escaped lists what Stop found outside the tree and killed.
	Stop(grace time.Duration) error
	Escalated() bool
	KillTree()
	Escaped() []EscapedProcess
	// Signal signals the program itself, not its supervisor.
	Signal(sig syscall.Signal) error
	// Freeze stops the program's whole tree, leaving it no CPU, until
	// Thaw continues it: a two-arm sweep's warm arm between its points.
	Freeze() error
	Thaw() error
}

var _ Process = (*Proc)(nil)
