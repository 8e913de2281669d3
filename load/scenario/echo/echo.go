package echo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/load"

	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// echo drives a server that sends every message back. An operation is one
// batch: --batch frames of --record-size bytes framed into one write. The
// latency of a message is its receive time minus its batch's send time
// (closed loop) or scheduled time (open loop). Replies come back in order
// on a connection, so a FIFO of batch times per connection is all the
// bookkeeping there is: no ids in the payload.
type echo struct {
	cfg   *load.Config
	p     *Params
	pool  *payload.Pool
	op    wsconn.Opcode
	conns []*wsconn.Conn

	loops load.LoopRunner // --io loop
}

func newEcho(cfg *load.Config, p *Params, pool *payload.Pool) *echo {
	op := wsconn.OpText
	if pool.Binary() {
		op = wsconn.OpBinary
	}
	return &echo{cfg: cfg, p: p, pool: pool, op: op, conns: make([]*wsconn.Conn, cfg.Connections)}
}

func (e *echo) Preflight(context.Context) error { return nil }

func (e *echo) Connect(ctx context.Context, i int) error {
	opts := wsconn.Options{}
	if e.p.IO == IOLoop {
		opts = loopDialOptions
	}
	u := e.cfg.URL
	if n := len(e.cfg.URLs); n > 1 { // a scenario that drives several (connections)
		u = e.cfg.URLs[i%n]
	}
	c, err := wsconn.Dial(ctx, u, opts)
	if err != nil {
		return err
	}
	if e.p.IO == IOLoop {
		c.Shrink() // idle until Load hands it to a loop: no buffers meanwhile
	}
	e.conns[i] = c
	return nil
}

func (e *echo) ReadCounters() (reads, messages int64) {
	reads, messages = load.ConnCounters(e.conns)
	rd, m := e.loops.Counters()
	return reads + rd, messages + m
}

// Engine says how the connections were driven (load.LoopReporter).
func (e *echo) Engine() string {
	if e.p.IO == IOLoop {
		return load.EngineLoop
	}
	return load.EngineGoroutines
}

// IOPattern says how each connection wrote and read (load.IOPatterner):
// a batch per write always; replies woken for once per batch in the
// closed loop at batches above 1, unless --eager-reads.
func (e *echo) IOPattern() string {
	p := load.IOBatchWake
	if e.cfg.OpenLoop() || e.p.EagerReads || e.cfg.Batch <= 1 {
		p = load.IOEager
	}
	if e.p.BusyPoll {
		p += ", busy-poll"
	}
	return p
}

// LoopStats is the event loops' evidence over the window (--io loop).
func (e *echo) LoopStats(load.Window) *load.LoopStats { return e.loops.Stats() }

func (e *echo) Load(ctx context.Context, w load.Window) []*load.Recorder {
	if e.p.IO == IOLoop {
		return e.loopLoad(ctx, w)
	}
	var recs []*load.Recorder
	var wg sync.WaitGroup
	var wakes []chan struct{}
	if e.cfg.OpenLoop() {
		wakes = make([]chan struct{}, len(e.conns))
		for i, c := range e.conns {
			if c != nil {
				wakes[i] = make(chan struct{}, 1)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			load.RunClock(ctx, e.cfg.Rate, w.Open, w.End, wakes)
		}()
	}
	for i, c := range e.conns {
		if c == nil {
			continue
		}
		rec := load.NewRecorder(true, false)
		rec.Timeline = load.NewTimeline(w)
		recs = append(recs, rec)
		var wrec *load.Recorder // the open loop's writer records on its own
		if e.cfg.OpenLoop() {
			wrec = load.NewRecorder(false, true)
			recs = append(recs, wrec)
		}
		wg.Add(1)
		go func(i int, c *wsconn.Conn) {
			defer wg.Done()
			// Unblock a pending read on cancel, and bound it by the drain.
			stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })
			defer stop()
			c.SetReadDeadline(load.MonoTime(w.Drain))
			if e.cfg.OpenLoop() {
				e.openLoop(ctx, c, i, w, rec, wrec, wakes[i])
			} else {
				e.closedLoop(ctx, c, i, w, rec)
			}
		}(i, c)
	}
	wg.Wait()
	return recs
}

// frameBatch frames the next batch of values into buf, walking the pool.
func (e *echo) frameBatch(c *wsconn.Conn, buf []byte, next *int) []byte {
	buf = buf[:0]
	for j := 0; j < e.cfg.Batch; j++ {
		buf = c.AppendFrame(buf, e.op, e.pool.Value(*next))
		*next++
		if *next == e.pool.Len() {
			*next = 0
		}
	}
	return buf
}

// readBatch reads one batch of replies and records each against t0 when
// measured. It returns false on a failed connection (already counted).
func (e *echo) readBatch(ctx context.Context, c *wsconn.Conn, t0 int64, measured bool, w load.Window, rec *load.Recorder) bool {
	for j := 0; j < e.cfg.Batch; j++ {
		_, p, err := c.ReadMessage()
		if err != nil {
			e.fail(ctx, err, w, rec)
			return false
		}
		now := load.Mono()
		if len(p) != e.cfg.RecordSize {
			rec.Error("echo_size_mismatch")
			continue
		}
		if measured {
			rec.Latency.Record(now - t0)
			rec.Messages++
			rec.Bytes += int64(len(p))
		}
	}
	rec.Timeline.Add(load.Mono(), int64(e.cfg.Batch))
	return true
}

// fail counts a connection failure. A connection lost inside the window
// is also counted in dropped; we do not reconnect (an echo connection lost
// mid-run is a failure of the point, not something to paper over). A read
// that hit the drain deadline is a reply that never came.
func (e *echo) fail(ctx context.Context, err error, w load.Window, rec *load.Recorder) {
	if ctx.Err() != nil {
		return // interrupted: the run reports itself as cut short
	}
	now := load.Mono()
	r := load.Reason(err)
	if r == "timeout" && now >= w.Drain {
		r = "no_reply_by_drain"
	}
	rec.Error(r)
	if now < w.End {
		rec.Dropped++
	}
}

func (e *echo) closedLoop(ctx context.Context, c *wsconn.Conn, i int, w load.Window, rec *load.Recorder) {
	buf := make([]byte, 0, e.cfg.Batch*(e.cfg.RecordSize+14))
	next := e.pool.Start(i, e.cfg.Batch)
	// Wake once per batch rather than per segment: the closed loop waits
	// for the whole batch anyway, and reading eagerly would spend the
	// generator's CPU on wake-ups (see docs/efficiency.md).
	expect := 0
	if e.cfg.Batch > 1 && !e.p.EagerReads {
		expect = e.cfg.Batch * wsconn.ServerFrameSize(e.cfg.RecordSize)
	}
	for ctx.Err() == nil {
		buf = e.frameBatch(c, buf, &next)
		t0 := load.Mono()
		if t0 >= w.End {
			return
		}
		if err := c.Write(buf); err != nil {
			e.fail(ctx, err, w, rec)
			return
		}
		measured := w.In(t0)
		if expect > 0 {
			c.ExpectBytes(expect)
		}
		if !e.readBatch(ctx, c, t0, measured, w, rec) {
			return
		}
		if measured {
			rec.Ops++
			rec.OK++ // every reply of the batch came back
		}
	}
}

// openLoop runs a writer on the schedule and a reader matching replies to
// scheduled times. At most --max-inflight batches are outstanding: when
// the cap is reached the writer waits (its operations keep their scheduled
// times, so the wait shows in latency and lag) and the run is saturated.
func (e *echo) openLoop(ctx context.Context, c *wsconn.Conn, i int, w load.Window, rrec, rec *load.Recorder, wake <-chan struct{}) {
	pacer := load.ConnectionPacer(e.cfg.Rate, e.cfg.Connections, i)
	slots := make(chan struct{}, e.cfg.MaxInflight)
	scheds := make(chan int64, e.cfg.MaxInflight)
	readerDone := make(chan struct{})
	go func() { // reader
		defer close(readerDone)
		for sched := range scheds {
			if !e.readBatch(ctx, c, sched, w.In(sched), w, rrec) {
				return
			}
			if w.In(sched) {
				rrec.OK++ // sent on schedule (rec.Ops) and every reply back
			}
			<-slots
		}
	}()
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { close(done) })
	defer stop()

	buf := make([]byte, 0, e.cfg.Batch*(e.cfg.RecordSize+14))
	next := e.pool.Start(i, e.cfg.Batch)
	interval := pacer.Interval()
writer:
	for k := int64(0); ; k++ {
		sched := w.Open + pacer.Due(k)
		if sched >= w.End {
			break
		}
		if !load.WaitDue(sched, wake, done) {
			break
		}
		measured := w.In(sched)
		select {
		case slots <- struct{}{}:
		default:
			if measured && rec.SaturatedReason == "" {
				rec.SaturatedReason = fmt.Sprintf("connection %d reached --max-inflight %d: the requested rate was not met", i, e.cfg.MaxInflight)
			}
			select {
			case slots <- struct{}{}:
			case <-readerDone:
				break writer
			case <-done:
				break writer
			}
		}
		buf = e.frameBatch(c, buf, &next)
		now := load.Mono()
		if measured {
			lag := now - sched
			rec.Lag.Record(lag)
			if lag > interval {
				rec.LateSends++
			}
			rec.Ops++
		}
		scheds <- sched // never blocks: slots bounds it
		if err := c.Write(buf); err != nil {
			// The reader meets the same broken connection and counts it
			// as dropped; here only the failed write is counted.
			if ctx.Err() == nil {
				rec.Error(load.Reason(err))
			}
			break
		}
	}
	close(scheds)
	<-readerDone
}

func (e *echo) Finish(res *load.Result, m *load.Recorder) {
	for i, c := range e.conns {
		if c != nil {
			c.Close()
			e.conns[i] = nil
		}
	}
}

// Drop aborts every connection with no close frame (--drop).
func (e *echo) Drop() int {
	n := 0
	for _, c := range e.conns {
		if c != nil {
			c.Abort()
			n++
		}
	}
	return n
}

// Probe is a new client's round trip: one message sent on a fresh
// connection must come back unchanged.
func (e *echo) Probe(ctx context.Context) error {
	c, err := wsconn.Dial(ctx, e.cfg.URL, wsconn.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetReadDeadline(dl)
		c.SetWriteDeadline(dl)
	}
	msg := []byte("ceiling-probe")
	if err := c.WriteMessage(wsconn.OpText, msg); err != nil {
		return err
	}
	_, got, err := c.ReadMessage()
	if err != nil {
		return err
	}
	if string(got) != string(msg) {
		return fmt.Errorf("the echo came back as %q", got)
	}
	return nil
}
