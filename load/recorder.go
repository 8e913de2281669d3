package load

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"

	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// Recorder is one worker's private record: histograms and counters that
// only its goroutine touches, so recording takes no lock. The engine
// merges every worker's Recorder after they have all stopped.
type Recorder struct {
	Latency *Histogram // per message, ns
	Lag     *Histogram // open loop: actual send - scheduled, per operation

	Ops, Messages, Bytes int64
	OK                   int64 // operations that succeeded (Ops counts every one attempted)
	LateSends            int64 // open loop: sent more than one interval late
	Dropped              int64 // connections lost during the window
	Late                 int64 // fanout: deliveries seen only after the grace
	Errors               map[string]int64

	SaturatedReason string // first reason the worker could not keep the schedule

	// Timeline counts replies by the tick they completed in (nil: the
	// scenario keeps none).
	Timeline *Timeline
}

// newRecorder returns an empty recorder with the histograms its worker
// fills (each is about 250 KiB, so a writer that records no latency gets
// none).
func NewRecorder(latency, lag bool) *Recorder {
	r := &Recorder{}
	if latency {
		r.Latency = NewHistogram()
	}
	if lag {
		r.Lag = NewHistogram()
	}
	return r
}

// Error counts one failure under reason. Errors are rare, so the map is
// made on first use.
func (r *Recorder) Error(reason string) { r.ErrorN(reason, 1) }

// ErrorN counts n failures under reason.
func (r *Recorder) ErrorN(reason string, n int64) {
	if n == 0 {
		return
	}
	if r.Errors == nil {
		r.Errors = map[string]int64{}
	}
	r.Errors[reason] += n
}

// Merge adds o into r.
func (r *Recorder) Merge(o *Recorder) {
	if o.Latency != nil {
		if r.Latency == nil {
			r.Latency = NewHistogram()
		}
		r.Latency.Merge(o.Latency)
	}
	if o.Lag != nil {
		if r.Lag == nil {
			r.Lag = NewHistogram()
		}
		r.Lag.Merge(o.Lag)
	}
	r.Ops += o.Ops
	r.OK += o.OK
	r.Messages += o.Messages
	r.Bytes += o.Bytes
	r.LateSends += o.LateSends
	r.Dropped += o.Dropped
	r.Late += o.Late
	for k, v := range o.Errors {
		r.ErrorN(k, v)
	}
	if r.SaturatedReason == "" {
		r.SaturatedReason = o.SaturatedReason
	}
	r.Timeline = r.Timeline.Merge(o.Timeline)
}

// TotalErrors sums every reason.
func (r *Recorder) TotalErrors() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// reason names an error by kind, not by text, so errors_by_reason has a
// bounded set of keys: ECONNRESET, EPIPE, timeout, EOF, close_1009,
// handshake_401, ...
func Reason(err error) string {
	var ce *wsconn.CloseError
	var he *wsconn.HandshakeError
	var pe *wsconn.ProtocolError
	var errno syscall.Errno
	switch {
	case err == nil:
		return "none"
	case errors.As(err, &ce):
		return "close_" + strconv.Itoa(ce.Code)
	case errors.As(err, &he):
		return "handshake_" + strconv.Itoa(he.Status)
	case errors.As(err, &pe):
		return "protocol_error"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	case errors.Is(err, net.ErrClosed):
		return "closed"
	case errors.As(err, &errno):
		switch errno {
		case syscall.ECONNRESET:
			return "ECONNRESET"
		case syscall.ECONNREFUSED:
			return "ECONNREFUSED"
		case syscall.EPIPE:
			return "EPIPE"
		case syscall.ETIMEDOUT:
			return "ETIMEDOUT"
		case syscall.EADDRNOTAVAIL: // no local port left: --source-addrs
			return "EADDRNOTAVAIL"
		case syscall.EMFILE, syscall.ENFILE: // RLIMIT_NOFILE or fs.file-max
			return "EMFILE"
		}
		return "errno_" + strconv.Itoa(int(errno))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "other"
}
