//go:build !linux

package evloop

import (
	"context"
	"errors"

	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// Supported reports whether this build has the engine (Linux only).
const Supported = false

var errUnsupported = errors.New("evloop: needs Linux (epoll)")

// Engine is a stub outside Linux.
type Engine struct{}

// New fails outside Linux.
func New(Config) (*Engine, error) { return nil, errUnsupported }

// Add fails outside Linux.
func (e *Engine) Add(*wsconn.Conn, Handler) (*Conn, error) { return nil, errUnsupported }

// Run does nothing outside Linux.
func (e *Engine) Run(context.Context) {}

// Counters are zero outside Linux.
func (e *Engine) Counters() (reads, messages int64) { return 0, 0 }

// Snapshot is empty outside Linux.
func (e *Engine) Snapshot() []LoopCounters { return nil }

// Stats is empty outside Linux.
func (e *Engine) Stats() Stats { return Stats{Lag: newLagHistogram()} }

// Conn is a stub outside Linux.
type Conn struct{}

func (c *Conn) Index() int                                                { return 0 }
func (c *Conn) Loop() int                                                 { return 0 }
func (c *Conn) AppendFrame(dst []byte, op wsconn.Opcode, p []byte) []byte { return dst }
func (c *Conn) Send(op wsconn.Opcode, p []byte)                           {}
func (c *Conn) SendFrames(frames []byte)                                  {}
func (c *Conn) Scratch() []byte                                           { return nil }
func (c *Conn) SetTimer(at int64)                                         {}
func (c *Conn) SetLowWater(n int)                                         {}
func (c *Conn) Close()                                                    {}
func (c *Conn) Pending() int                                              { return 0 }
