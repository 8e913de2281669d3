package evloop

import (
	"fmt"
	"os"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// Config is what every loop of an Engine shares.
type Config struct {
	// Now is the clock every time below is on: monotonic nanoseconds
	// (load.Mono).
	Now func() int64
	// Drain is when Run ends: connections still open then get
	// Closed(c, ErrDrain). 0 is no drain: Run ends when every connection
	// has, or its context is cancelled.
	Drain int64
	// Window is the measured interval: the loops' busy time and lag are
	// counted inside [Start, End) only.
	Window struct{ Start, End int64 }
	// Loops is the number of event loops (default GOMAXPROCS);
	// connections are assigned to them round-robin in the order of Add.
	Loops int
	// BusyPoll keeps every loop polling epoll until it has events or the
	// drain, never parking: a measurement factor (docs/efficiency.md,
	// "What a client's pattern costs the server"), not a way to run.
	// On loopback the server's CPU pays for waking a parked client; a
	// client that never sleeps costs it none of that, and a whole core
	// of its own, so its loops read busy for the whole window.
	BusyPoll bool
}

// ErrDrain ends the connections still open at Config.Drain. It wraps
// os.ErrDeadlineExceeded, so it counts as a read deadline does.
var ErrDrain = fmt.Errorf("evloop: still open at the drain deadline: %w", os.ErrDeadlineExceeded)

// Handler is one connection's protocol logic. It is called only from the
// connection's loop goroutine, never concurrently for the same loop; it
// must not block. Anything it keeps per loop (a load.Recorder) can be
// picked by c.Loop() without locks.
type Handler interface {
	// Message is one complete data message (text or binary). p is valid
	// only until Message returns (it points into a shared read buffer).
	// now is the Now() of the read that completed it.
	Message(c *Conn, op wsconn.Opcode, p []byte, now int64)
	// Timer is the connection's timer come due: due is when it was set
	// for, now is when it runs.
	Timer(c *Conn, due, now int64)
	// Closed is the connection's end, called once: err is nil after a
	// Close, a *wsconn.CloseError for a server's close frame, ErrDrain at
	// the drain, the context's error when Run's context was cancelled, a
	// *wsconn.ProtocolError, or the I/O error.
	Closed(c *Conn, err error)
}

// LoopCounters are one loop's cumulative counters, safe to read mid-run
// (Snapshot): take them at the window's edges and subtract.
type LoopCounters struct {
	Reads    int64 // read syscalls
	Messages int64 // data messages handed to Message
	Timers   int64 // Timer calls
	WaitNs   int64 // time blocked waiting for events (parked in the netpoller)
}

// Stats is the loops' evidence over Config.Window, after Run.
type Stats struct {
	// Busy is each loop's share of the window it was not blocked waiting
	// for events: 1 - blocked / window. A loop at 1 never waited: it was
	// saturated.
	Busy []float64
	// Lag is ready -> handled over every loop, in ns: epoll_wait returning
	// a connection -> its read starting, and a timer's due time -> its
	// Timer call. Recorded inside the window only.
	Lag *hdrhistogram.Histogram
	// WindowNs is the span Busy is a fraction of: the window, or less
	// when Run ended (cancelled) before the window did.
	WindowNs int64
}

// Lag histogram range: 1 ns to 100 s, 3 significant digits (the engine's
// latency histograms use the same precision).
const (
	lagMin, lagMax = 1, 100e9
	lagSigFigs     = 3
)

func newLagHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(lagMin, lagMax, lagSigFigs)
}

// MaxBusy is the busiest loop's fraction (0 without loops).
func (s Stats) MaxBusy() float64 {
	m := 0.0
	for _, b := range s.Busy {
		m = max(m, b)
	}
	return m
}
