package fanout

import (
	"context"
	"runtime"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/evloop"
	"github.com/ceiling-bench/ceiling/load/wsconn"
	"github.com/ceiling-bench/ceiling/pusher"
)

// onLoops reports whether the subscribers run on the event-loop engine
// (load/evloop): wherever it is supported, except with --drop, which
// aborts the subscribers' sockets itself after the run.
func (f *fanout) onLoops() bool { return evloop.Supported && !f.cfg.Drop }

// subscriberDialOptions are the wsconn buffers of a subscriber that goes
// onto the event loops: only the connect handshake and the subscription
// read through them (Detach then releases them), so they are small, for
// memory per connection at scale.
var subscriberDialOptions = wsconn.Options{ReadBufferSize: 4 << 10, WriteBufferSize: 512}

// loopSubscribers puts every subscriber on event loops, one per
// GOMAXPROCS, with a Recorder each, and returns the engine to Run and the
// Recorders. Receive-only: a subscriber answers the server's pusher:ping
// and scans each delivery with pusherclient's zero-allocation scanner.
func (f *fanout) loopSubscribers(ctx context.Context, w load.Window) (*evloop.Engine, []*load.Recorder) {
	var open []int // conns' indexes
	for i, c := range f.conns {
		if c != nil {
			open = append(open, i)
		}
	}
	n := max(1, min(runtime.GOMAXPROCS(0), len(open)))
	cfg := evloop.Config{Now: load.Mono, Drain: w.Drain + int64(fanoutLate), Loops: n}
	cfg.Window.Start, cfg.Window.End = w.Start, w.End
	s := &subscriber{ctx: ctx, f: f, w: w, recs: make([]*load.Recorder, n), tallies: make([]*tally, n)}
	for k := range s.recs {
		s.recs[k] = load.NewRecorder(true, false)
		s.tallies[k] = f.newTally()
	}
	eng, err := evloop.New(cfg)
	if err != nil {
		s.recs[0].ErrorN("evloop", int64(len(open)))
		return nil, s.recs
	}
	for _, i := range open {
		if _, err := eng.Add(f.conns[i], s); err != nil {
			f.lost(ctx, i, err, w, s.recs[0], s.tallies[0])
			continue
		}
		f.loopIdx = append(f.loopIdx, i) // Index counts successful Adds
	}
	return eng, s.recs
}

// subscriber is every loop subscriber's Handler: it keeps no state per
// connection, only a Recorder and a tally per loop (a connection's
// index, in the order added, finds its subscriber: fanout.loopIdx).
type subscriber struct {
	ctx     context.Context
	f       *fanout
	w       load.Window
	recs    []*load.Recorder
	tallies []*tally
}

func (s *subscriber) Message(c *evloop.Conn, op wsconn.Opcode, p []byte, now int64) {
	l := c.Loop()
	if s.f.deliver(p, now, s.w, s.recs[l], s.tallies[l], s.f.server(s.f.loopIdx[c.Index()])) {
		c.Send(wsconn.OpText, pusher.AppendPong(c.Scratch())) // the server's keep-alive
	}
}

func (s *subscriber) Timer(*evloop.Conn, int64, int64) {}

func (s *subscriber) Closed(c *evloop.Conn, err error) {
	l := c.Loop()
	s.f.lost(s.ctx, s.f.loopIdx[c.Index()], err, s.w, s.recs[l], s.tallies[l])
}
