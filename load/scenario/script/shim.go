package script

// Local stand-ins for helpers package load does not export yet (see the
// issue 9 contract: the lead replaces this file at merge with load.Mono,
// load.NewRecorder, load.Reason and Summary.SetBlock).

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// epoch anchors mono. load's own epoch is a different time.Now taken at
// its package init: until load.Mono replaces this, the Window the engine
// hands to Load is off by the microseconds between the two inits.
var epoch = time.Now()

// mono is load.mono: ns on the monotonic clock since process start.
func mono() int64 { return int64(time.Since(epoch)) }

// monoTime converts a mono timestamp to a time.Time (for deadlines).
func monoTime(t int64) time.Time { return epoch.Add(time.Duration(t)) }

// newRecorder is load.newRecorder.
func newRecorder(latency, lag bool) *load.Recorder {
	r := &load.Recorder{}
	if latency {
		r.Latency = load.NewHistogram()
	}
	if lag {
		r.Lag = load.NewHistogram()
	}
	return r
}

// setBlock is res.Summary.SetBlock(key, v) (summary.<key>), which the lead
// is adding to package load. Until then the block is only on the
// scenario (Scenario.Kinds), where the tests read it.
func setBlock(res *load.Result, key string, v any) {}

// reason is load.Reason, reduced to what this package needs until the
// lead exports it: close codes, timeouts and EOF by name, the rest "other".
func reason(err error) string {
	var ce *wsconn.CloseError
	var he *wsconn.HandshakeError
	var ne net.Error
	switch {
	case err == nil:
		return "none"
	case errors.As(err, &ce):
		return "close_" + strconv.Itoa(ce.Code)
	case errors.As(err, &he):
		return "handshake_" + strconv.Itoa(he.Status)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "other"
}
