package load

import (
	"context"
	"fmt"
	"sync"
	"time"

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
	cfg   *Config
	pool  *payload.Pool
	op    wsconn.Opcode
	conns []*wsconn.Conn
}

func newEcho(cfg *Config, pool *payload.Pool) *echo {
	op := wsconn.OpText
	if pool.Binary() {
		op = wsconn.OpBinary
	}
	return &echo{cfg: cfg, pool: pool, op: op, conns: make([]*wsconn.Conn, cfg.Connections)}
}

func (e *echo) Preflight(context.Context) error { return nil }

func (e *echo) Connect(ctx context.Context, i int) error {
	c, err := wsconn.Dial(ctx, e.cfg.URL, wsconn.Options{})
	if err != nil {
		return err
	}
	e.conns[i] = c
	return nil
}

func (e *echo) ReadCounters() (reads, messages int64) {
	for _, c := range e.conns {
		if c != nil {
			reads += c.Reads()
			messages += c.Messages()
		}
	}
	return reads, messages
}

func (e *echo) Load(ctx context.Context, w Window) []*Recorder {
	var recs []*Recorder
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
			runClock(ctx, e.cfg.Rate, w.Open, w.End, wakes)
		}()
	}
	for i, c := range e.conns {
		if c == nil {
			continue
		}
		rec := newRecorder(true, false)
		recs = append(recs, rec)
		var wrec *Recorder // the open loop's writer records on its own
		if e.cfg.OpenLoop() {
			wrec = newRecorder(false, true)
			recs = append(recs, wrec)
		}
		wg.Add(1)
		go func(i int, c *wsconn.Conn) {
			defer wg.Done()
			// Unblock a pending read on cancel, and bound it by the drain.
			stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })
			defer stop()
			c.SetReadDeadline(epoch.Add(time.Duration(w.Drain)))
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
func (e *echo) readBatch(ctx context.Context, c *wsconn.Conn, t0 int64, measured bool, w Window, rec *Recorder) bool {
	for j := 0; j < e.cfg.Batch; j++ {
		_, p, err := c.ReadMessage()
		if err != nil {
			e.fail(ctx, err, w, rec)
			return false
		}
		now := mono()
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
	return true
}

// fail counts a connection failure. A connection lost inside the window
// is also counted in dropped; we do not reconnect (an echo connection lost
// mid-run is a failure of the point, not something to paper over). A read
// that hit the drain deadline is a reply that never came.
func (e *echo) fail(ctx context.Context, err error, w Window, rec *Recorder) {
	if ctx.Err() != nil {
		return // interrupted: the run reports itself as cut short
	}
	now := mono()
	r := reason(err)
	if r == "timeout" && now >= w.Drain {
		r = "no_reply_by_drain"
	}
	rec.Error(r)
	if now < w.End {
		rec.Dropped++
	}
}

func (e *echo) closedLoop(ctx context.Context, c *wsconn.Conn, i int, w Window, rec *Recorder) {
	buf := make([]byte, 0, e.cfg.Batch*(e.cfg.RecordSize+14))
	next := e.pool.Start(i, e.cfg.Batch)
	// Wake once per batch rather than per segment: the closed loop waits
	// for the whole batch anyway, and reading eagerly would spend the
	// generator's CPU on wake-ups (see docs/efficiency.md).
	expect := 0
	if e.cfg.Batch > 1 && !e.cfg.EagerReads {
		expect = e.cfg.Batch * wsconn.ServerFrameSize(e.cfg.RecordSize)
	}
	for ctx.Err() == nil {
		buf = e.frameBatch(c, buf, &next)
		t0 := mono()
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
		}
	}
}

// openLoop runs a writer on the schedule and a reader matching replies to
// scheduled times. At most --max-inflight batches are outstanding: when
// the cap is reached the writer waits (its operations keep their scheduled
// times, so the wait shows in latency and lag) and the run is saturated.
func (e *echo) openLoop(ctx context.Context, c *wsconn.Conn, i int, w Window, rrec, rec *Recorder, wake <-chan struct{}) {
	pacer := connectionPacer(e.cfg.Rate, e.cfg.Connections, i)
	slots := make(chan struct{}, e.cfg.MaxInflight)
	scheds := make(chan int64, e.cfg.MaxInflight)
	readerDone := make(chan struct{})
	go func() { // reader
		defer close(readerDone)
		for sched := range scheds {
			if !e.readBatch(ctx, c, sched, w.In(sched), w, rrec) {
				return
			}
			<-slots
		}
	}()
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { close(done) })
	defer stop()

	buf := make([]byte, 0, e.cfg.Batch*(e.cfg.RecordSize+14))
	next := e.pool.Start(i, e.cfg.Batch)
	interval := pacer.interval()
writer:
	for k := int64(0); ; k++ {
		sched := w.Open + pacer.Due(k)
		if sched >= w.End {
			break
		}
		if !waitDue(sched, wake, done) {
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
		now := mono()
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
				rec.Error(reason(err))
			}
			break
		}
	}
	close(scheds)
	<-readerDone
}

func (e *echo) Finish(res *Result, m *Recorder) {
	for i, c := range e.conns {
		if c != nil {
			c.Close()
			e.conns[i] = nil
		}
	}
}
