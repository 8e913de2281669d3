package reactor

import (
	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// Window is the measured interval on the caller's clock (Config.Now):
// batches sent in [Start, End) are measured, none is sent at or after
// End, and replies are awaited until Drain.
type Window struct{ Start, End, Drain int64 }

// In reports whether a batch sent at t is measured.
func (w Window) In(t int64) bool { return t >= w.Start && t < w.End }

// Recorder receives a reactor's results. Only the reactor's goroutine
// calls it, so implementations need no lock; none of its methods may
// block.
type Recorder interface {
	// Reply is one reply of a measured batch with the expected size:
	// latency is its read time minus its batch's send time.
	Reply(latencyNs int64, size int)
	// Batch is a measured batch whose replies have all come.
	Batch()
	// Error counts a failure that does not end the connection (a reply
	// of the wrong size: "echo_size_mismatch").
	Error(reason string)
	// Fail reports a connection lost (or given up on at the drain, with
	// an error that wraps os.ErrDeadlineExceeded); once per connection.
	Fail(err error)
}

// Config is what every connection of a reactor does.
type Config struct {
	Batch      int           // messages per write
	RecordSize int           // payload bytes per message
	Op         wsconn.Opcode // OpText or OpBinary
	Pool       *payload.Pool // payload values, walked from each connection's start
	Now        func() int64  // the clock Window is on, nanoseconds
	Window     Window
	// WakePerBatch sets each socket's SO_RCVLOWAT to the bytes of the
	// replies still missing, so epoll reports a connection once its whole
	// batch is back instead of once per segment: fewer reads and wake-ups
	// per message, but every message of a batch is then timed at the
	// batch's completion (the goroutine loop's default; false is
	// --eager-reads).
	WakePerBatch bool
}

// readBufferSize holds many replies per read syscall and always one whole
// frame of the configured size.
func readBufferSize(recordSize int) int {
	return max(64<<10, wsconn.ServerFrameSize(recordSize)+4<<10)
}
