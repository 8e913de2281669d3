package echo

import (
	"context"
	"fmt"
	"runtime"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/evloop"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// loopDialOptions are the wsconn buffers of a connection that goes onto
// the event loops: only the handshake reads through them (the loops read
// into a buffer of their own, and Detach releases these), so they are
// small, for memory per connection at scale.
var loopDialOptions = wsconn.Options{ReadBufferSize: 4 << 10, WriteBufferSize: 512}

// loopRun is what every connection of an --io loop run shares: a
// Recorder per loop, so recording takes no lock.
type loopRun struct {
	ctx       context.Context
	e         *echo
	w         load.Window
	recs      []*load.Recorder // by loop
	frameSize int              // wire bytes of one reply
	lowWater  bool             // closed loop: wake once per batch (SO_RCVLOWAT)
}

// loopLoad drives every open connection on event loops (load/evloop), one
// per GOMAXPROCS: no goroutine per connection. The closed loop sends each
// batch when the last reply of the one before is in; the open loop sends
// each operation from the connection's timer at its scheduled time. The
// measurement rules are the goroutine loops'.
func (e *echo) loopLoad(ctx context.Context, w load.Window) []*load.Recorder {
	var open []int
	for i, c := range e.conns {
		if c != nil {
			open = append(open, i)
		}
	}
	n := max(1, min(runtime.GOMAXPROCS(0), len(open)))
	cfg := evloop.Config{Now: load.Mono, Drain: w.Drain, Loops: n, BusyPoll: e.p.BusyPoll}
	cfg.Window.Start, cfg.Window.End = w.Start, w.End
	r := &loopRun{ctx: ctx, e: e, w: w, recs: make([]*load.Recorder, n), frameSize: wsconn.ServerFrameSize(e.cfg.RecordSize)}
	for k := range r.recs {
		r.recs[k] = load.NewRecorder(true, e.cfg.OpenLoop())
		r.recs[k].Timeline = load.NewTimeline(w)
	}
	eng, err := evloop.New(cfg)
	if err != nil {
		r.recs[0].ErrorN("evloop", int64(len(open)))
		return r.recs
	}
	r.lowWater = !e.cfg.OpenLoop() && e.cfg.Batch > 1 && !e.p.EagerReads // as the goroutine loop
	start := load.Mono()
	for _, i := range open {
		var h evloop.Handler
		var first int64
		if e.cfg.OpenLoop() {
			oc := &openConn{r: r, i: i, pacer: load.ConnectionPacer(e.cfg.Rate, e.cfg.Connections, i), next: e.pool.Start(i, e.cfg.Batch)}
			oc.interval = oc.pacer.Interval()
			h, first = oc, oc.sched(0)
		} else {
			h, first = &closedConn{r: r, next: e.pool.Start(i, e.cfg.Batch)}, start
		}
		c, err := eng.Add(e.conns[i], h)
		if err != nil {
			e.fail(ctx, err, w, r.recs[0])
			continue
		}
		if first >= w.End {
			c.Close() // no operation of its own in the window
			continue
		}
		c.SetTimer(first)
	}
	e.loops.Run(ctx, eng)
	return r.recs
}

// frameBatch frames the connection's next batch into the loop's scratch
// buffer, walking the pool.
func (r *loopRun) frameBatch(c *evloop.Conn, next *int) []byte {
	e := r.e
	b := c.Scratch()
	for range e.cfg.Batch {
		b = c.AppendFrame(b, e.op, e.pool.Value(*next))
		if *next++; *next == e.pool.Len() {
			*next = 0
		}
	}
	return b
}

// closed counts a connection's end as the goroutine loops do; nil is a
// Close of ours (nothing more to send or await).
func (r *loopRun) closed(c *evloop.Conn, err error) {
	if err != nil {
		r.e.fail(r.ctx, err, r.w, r.recs[c.Loop()])
	}
}

// latencyRun holds a connection's consecutive equal latencies until one
// differs or its batch ends, to record them with one histogram update:
// the replies of a batch that one read completed share their read's time
// and their batch's send time, so at batch B a read usually records one
// value B times. The histogram ends up exactly as with a Record per reply.
type latencyRun struct{ v, n int64 }

func (l *latencyRun) add(h *load.Histogram, v int64) {
	if l.n > 0 && v != l.v {
		h.RecordN(l.v, l.n)
		l.n = 0
	}
	l.v = v
	l.n++
}

func (l *latencyRun) flush(h *load.Histogram) {
	if l.n > 0 {
		h.RecordN(l.v, l.n)
		l.n = 0
	}
}

// closedConn is one connection of the closed loop: one batch in flight.
type closedConn struct {
	r        *loopRun
	next     int   // pool position of the next value
	t0       int64 // send time of the batch in flight
	pending  int   // its replies still to come
	measured bool
	lat      latencyRun // the batch's latencies not yet recorded
}

// Timer sends the first batch.
func (h *closedConn) Timer(c *evloop.Conn, due, now int64) { h.send(c) }

// send frames and writes the next batch, unless the window has ended:
// then the connection is closed.
func (h *closedConn) send(c *evloop.Conn) {
	r := h.r
	b := r.frameBatch(c, &h.next)
	t0 := load.Mono()
	if t0 >= r.w.End {
		c.Close()
		return
	}
	h.t0, h.measured, h.pending = t0, r.w.In(t0), r.e.cfg.Batch
	c.SendFrames(b)
	if r.lowWater {
		c.SetLowWater(h.pending * r.frameSize)
	}
}

// Message is one reply: timed from its batch's send, at the read that
// completed it; the batch's last sends the next.
func (h *closedConn) Message(c *evloop.Conn, op wsconn.Opcode, p []byte, now int64) {
	r := h.r
	rec := r.recs[c.Loop()]
	if h.pending == 0 {
		rec.Error("echo_unexpected_reply")
		return
	}
	h.pending--
	switch {
	case len(p) != r.e.cfg.RecordSize:
		rec.Error("echo_size_mismatch")
	case h.measured:
		h.lat.add(rec.Latency, now-h.t0)
		rec.Messages++
		rec.Bytes += int64(len(p))
	}
	if h.pending > 0 {
		if r.lowWater {
			c.SetLowWater(h.pending * r.frameSize)
		}
		return
	}
	rec.Timeline.Add(now, int64(r.e.cfg.Batch))
	if h.measured {
		h.lat.flush(rec.Latency)
		rec.Ops++
		rec.OK++ // every reply of the batch came back
	}
	h.send(c)
}

func (h *closedConn) Closed(c *evloop.Conn, err error) {
	h.lat.flush(h.r.recs[c.Loop()].Latency) // replies of a batch cut short
	h.r.closed(c, err)
}

// openConn is one connection of the open loop: operation k is due at its
// schedule whether or not earlier ones are back, up to --max-inflight in
// flight. Replies come back in order, so the operations in flight are
// k in [oldest, k) and each one's scheduled time is recomputed from the
// pacer: no queue of times per connection.
type openConn struct {
	r        *loopRun
	i        int
	pacer    load.WorkerPacer
	interval int64
	next     int        // pool position of the next value
	k        int64      // the next operation to send
	oldest   int64      // the oldest operation in flight (== k: none)
	pending  int        // replies of the oldest still to come
	waiting  bool       // operation k is due but --max-inflight are in flight
	last     bool       // operation k is scheduled at or after the window's end
	lat      latencyRun // the oldest operation's latencies not yet recorded
}

func (h *openConn) sched(k int64) int64 { return h.r.w.Open + h.pacer.Due(k) }

// Timer is operation k come due (due is its scheduled time).
func (h *openConn) Timer(c *evloop.Conn, due, now int64) {
	r := h.r
	if h.k-h.oldest >= int64(r.e.cfg.MaxInflight) {
		// Wait for a slot: the operation keeps its scheduled time, so
		// the wait shows in its lag and its replies' latency.
		rec := r.recs[c.Loop()]
		if r.w.In(due) && rec.SaturatedReason == "" {
			rec.SaturatedReason = fmt.Sprintf("connection %d reached --max-inflight %d: the requested rate was not met", h.i, r.e.cfg.MaxInflight)
		}
		h.waiting = true
		return
	}
	h.send(c)
}

// send writes operation k now, recording how late it is against its
// schedule, and sets the timer for the next one.
func (h *openConn) send(c *evloop.Conn) {
	r := h.r
	sched := h.sched(h.k)
	b := r.frameBatch(c, &h.next)
	now := load.Mono()
	if r.w.In(sched) {
		rec := r.recs[c.Loop()]
		lag := now - sched
		rec.Lag.Record(lag)
		if lag > h.interval {
			rec.LateSends++
		}
		rec.Ops++
	}
	if h.k == h.oldest {
		h.pending = r.e.cfg.Batch
	}
	h.k++
	c.SendFrames(b)
	if next := h.sched(h.k); next < r.w.End {
		c.SetTimer(next)
	} else {
		h.last = true
	}
}

// Message is one reply of the oldest operation in flight, timed from its
// scheduled time.
func (h *openConn) Message(c *evloop.Conn, op wsconn.Opcode, p []byte, now int64) {
	r := h.r
	rec := r.recs[c.Loop()]
	if h.k == h.oldest {
		rec.Error("echo_unexpected_reply")
		return
	}
	sched := h.sched(h.oldest)
	measured := r.w.In(sched)
	switch {
	case len(p) != r.e.cfg.RecordSize:
		rec.Error("echo_size_mismatch")
	case measured:
		h.lat.add(rec.Latency, now-sched)
		rec.Messages++
		rec.Bytes += int64(len(p))
	}
	if h.pending--; h.pending > 0 {
		return
	}
	h.lat.flush(rec.Latency)
	rec.Timeline.Add(now, int64(r.e.cfg.Batch))
	if measured {
		rec.OK++ // sent on schedule (Ops) and every reply back
	}
	if h.oldest++; h.oldest < h.k {
		h.pending = r.e.cfg.Batch
	}
	switch {
	case h.waiting:
		h.waiting = false
		h.send(c)
	case h.last && h.oldest == h.k:
		c.Close() // every operation sent and answered
	}
}

func (h *openConn) Closed(c *evloop.Conn, err error) {
	h.lat.flush(h.r.recs[c.Loop()].Latency) // replies of an operation cut short
	h.r.closed(c, err)
}
