package load

import (
	"context"

	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// Scenario is one protocol's way of applying load. The engine (Run) knows
// no protocol: it builds the pool, connects through Connect with the
// configured strategy, computes the Window, and calls Load, which returns
// one Recorder per worker once every worker has stopped.
type Scenario interface {
	// Preflight checks the target before any connection (fanout: one
	// signed publish must reach a preflight subscriber).
	Preflight(ctx context.Context) error
	// Connect opens connection i and makes it ready (subscribed).
	Connect(ctx context.Context, i int) error
	// Load drives every open connection through the window and drains.
	Load(ctx context.Context, w Window) []*Recorder
	// ReadCounters returns read syscalls and messages read so far, over
	// every connection (for messages_per_read).
	ReadCounters() (reads, messages int64)
	// Finish fills the scenario's part of the summary and closes
	// everything it opened.
	Finish(res *Result, merged *Recorder)
}

// Refused is a preflight failure that every point would meet again: the
// server refused the scenario's credentials, its servers are not one
// cluster, or it answered what the scenario cannot use. The run records
// it (Summary.Refused), and a sweep stops at the first such point rather
// than boot the server again to be refused again (docs/sweep.md,
// "Failures that repeat"). A connection refused or a timeout is not one:
// the next point may well get through.
type Refused struct{ Err error }

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// connCounters sums read syscalls and messages over a scenario's
// connections (nil where a connection never opened).
func ConnCounters(conns []*wsconn.Conn) (reads, messages int64) {
	for _, c := range conns {
		if c != nil {
			reads += c.Reads()
			messages += c.Messages()
		}
	}
	return reads, messages
}

// Drainer is a Scenario that awaits in-flight work for other than Drain
// after the window.
type Drainer interface {
	DrainNs() int64
}

// NothingExplainer is a Scenario that says, in its own terms, why a run
// that ran its window got nothing (fanout: events published, none
// delivered). The error must wrap ErrNothingArrived; why lists the errors
// by reason ("; errors: ...", or empty).
type NothingExplainer interface {
	NothingArrived(res *Result, why string) error
}
