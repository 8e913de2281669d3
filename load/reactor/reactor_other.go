//go:build !linux

package reactor

import (
	"context"
	"errors"

	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// Supported reports whether this build has the reactor (Linux only).
const Supported = false

var errUnsupported = errors.New("reactor: needs Linux (epoll)")

// Reactor is a stub outside Linux.
type Reactor struct{}

// New fails outside Linux.
func New(Config, Recorder) (*Reactor, error) { return nil, errUnsupported }

// Add fails outside Linux.
func (r *Reactor) Add(*wsconn.Conn, int) error { return errUnsupported }

// Run does nothing outside Linux.
func (r *Reactor) Run(context.Context) {}

// Counters are zero outside Linux.
func (r *Reactor) Counters() (reads, messages int64) { return 0, 0 }

// Close does nothing outside Linux.
func (r *Reactor) Close() {}
