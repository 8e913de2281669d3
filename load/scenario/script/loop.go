package script

import (
	"bytes"
	"context"
	"runtime"
	"sync"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/evloop"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// The loop engine (--io loop, the default on Linux): the WebSocket
// connections are spread over load/evloop's event loops, one per
// GOMAXPROCS, and each loop has its own shard, which only its goroutine
// touches.

// loopSupported: the event loops run here (Linux).
const loopSupported = evloop.Supported

// loopHandler is the evloop.Handler of a scenario's connections: conns
// in their order of Add.
type loopHandler struct{ conns []*conn }

func (h *loopHandler) Message(lc *evloop.Conn, _ wsconn.Opcode, p []byte, now int64) {
	h.conns[lc.Index()].message(p, now)
}

func (h *loopHandler) Timer(lc *evloop.Conn, due, now int64) { h.conns[lc.Index()].timer(due, now) }

func (h *loopHandler) Closed(lc *evloop.Conn, err error) {
	h.conns[lc.Index()].closed(err, load.Mono())
}

// runLoops drives conns on event loops until the drain (or ctx). If the
// loops cannot be made, the connections run on goroutines instead (and
// generator.engine says so).
func (s *scenario) runLoops(ctx context.Context, conns []*conn, done <-chan struct{}, wg *sync.WaitGroup) {
	n := min(len(conns), runtime.GOMAXPROCS(0))
	eng, err := evloop.New(evloop.Config{
		Now:    load.Mono,
		Drain:  s.w.Drain,
		Window: struct{ Start, End int64 }{s.w.Start, s.w.End},
		Loops:  n,
	})
	if err != nil {
		for _, c := range conns {
			c.sh = s.goShard(c)
			c.goStart(ctx, done, wg)
		}
		return
	}
	shards := make([]*shard, n)
	for i := range shards {
		shards[i] = s.newShard(false)
	}
	s.shards = append(s.shards, shards...)
	h := &loopHandler{}
	rest := make([][]byte, 0, len(conns))
	for _, c := range conns {
		// The handshake's last frame is released by Detach: keep its
		// messages not yet handled (connect.split "newline").
		p := bytes.Clone(c.pending)
		c.pending = nil
		c.detached.Store(true)
		lc, err := eng.Add(c.ws, h)
		if err != nil {
			c.sh = s.goShard(c)
			c.readError(err, load.Mono()) // its socket is gone
			continue
		}
		c.out, c.sh = lc, shards[lc.Loop()]
		h.conns = append(h.conns, c)
		rest = append(rest, p)
	}
	now := load.Mono()
	for i, c := range h.conns {
		if len(rest[i]) > 0 {
			c.message(rest[i], now)
		}
		c.start(now)
	}
	s.loops.Run(ctx, eng)
}

// Engine says how the WebSocket connections were driven (load.LoopReporter).
func (s *scenario) Engine() string {
	if s.loops.Stats() != nil {
		return load.EngineLoop
	}
	return load.EngineGoroutines
}

// LoopStats is the loops' evidence over the window, nil on goroutines
// (load.LoopReporter).
func (s *scenario) LoopStats(load.Window) *load.LoopStats { return s.loops.Stats() }

var _ load.LoopReporter = (*scenario)(nil)
