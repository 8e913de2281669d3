package nats

import (
	"context"
	"errors"
	"strconv"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ceiling-bench/ceiling/load"
)

// inflight is one publish awaiting its ack.
type inflight struct {
	f   jetstream.PubAckFuture
	t0  int64
	gen int64 // the connection's disconnects when it was sent
}

// publish sends record w.n (async) to its subject.
func (d *driver) publish(w *worker, t0 int64, stamp bool) (jetstream.PubAckFuture, error) {
	n := w.n
	w.n++
	var subj string
	if d.p.Mode == Stream {
		subj = d.subjects[w.i%len(d.subjects)]
	} else {
		subj = d.subjects[(w.i+n)%len(d.subjects)]
	}
	m := &natsgo.Msg{Subject: subj, Data: d.pool.Value(d.pool.Start(w.i, d.cfg.Batch) + n)}
	if stamp {
		m.Header = natsgo.Header{TsHeader: []string{strconv.FormatInt(t0, 10)}}
	}
	return w.js.PublishMsgAsync(m)
}

// awaitAck waits for the oldest publish's ack (at most until deadline),
// checks its sequence and records it.
func (d *driver) awaitAck(ctx context.Context, win load.Window, w *worker, q inflight, deadline int64) {
	wait := time.Duration(max(deadline-load.Mono(), int64(time.Millisecond)))
	if d.p.Mode == Stream && w.disconnects.Load() != q.gen {
		wait = min(wait, lostGrace)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	in := win.In(q.t0)
	select {
	case a := <-q.f.Ok():
		now := load.Mono()
		w.ackedTotal++
		if a.Duplicate {
			w.rec.Error("ack_duplicate")
		}
		if a.Sequence <= w.lastAck {
			w.rec.Error("ack_out_of_order")
		}
		w.lastAck = a.Sequence
		w.maxAck = max(w.maxAck, a.Sequence)
		if d.p.Mode == Stream {
			w.maxAckedSubj = max(w.maxAckedSubj, a.Sequence)
		}
		if in {
			w.acked++
			w.rec.OK++
			w.ackLat.Record(now - q.t0)
			if d.p.Mode != Stream {
				w.rec.Latency.Record(now - q.t0)
				w.rec.Messages++
				w.rec.Bytes += int64(len(q.f.Msg().Data))
			}
		}
	case err := <-q.f.Err():
		if d.lostInReconnect(w, q) {
			return
		}
		w.rec.Error("publish_" + reason(err))
	case <-w.lostConn:
		// A disconnect while waiting: this ack may be lost with it.
		d.awaitAck(ctx, win, w, q, min(deadline, load.Mono()+int64(lostGrace)))
	case <-timer.C:
		if d.lostInReconnect(w, q) {
			return
		}
		w.rec.Error("ack_timeout")
	case <-ctx.Done():
	}
}

// lostInReconnect reports (and counts) a stream-mode publish whose ack
// was lost to a disconnect: stream counts a lost connection in dropped and
// reconnects, not in errors, and the publishes it took with it here.
func (d *driver) lostInReconnect(w *worker, q inflight) bool {
	if d.p.Mode != Stream || (w.disconnects.Load() == q.gen && w.nc.IsConnected()) {
		return false
	}
	w.lost++
	return true
}

// produce keeps --batch publishes in flight until the window ends, then
// awaits the rest (until Drain).
func (d *driver) produce(ctx context.Context, win load.Window, w *worker) {
	d.pipeline(ctx, win, w, false)
}

func (d *driver) pipeline(ctx context.Context, win load.Window, w *worker, stamp bool) {
	ring := make([]inflight, d.cfg.Batch) // FIFO: acks are awaited oldest first
	head, n := 0, 0
	for ctx.Err() == nil {
		now := load.Mono()
		if now >= win.End {
			break
		}
		// stream: the publisher keeps within the consumer's credit, so
		// the backlog stays bounded by --window instead of growing
		// until nothing published in the window is delivered in it.
		behind := stamp && w.backlog.Load() > int64(d.p.Window)
		if behind && n == 0 {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		if n == len(ring) || behind {
			d.awaitAck(ctx, win, w, ring[head], min(now+int64(ackTimeout), win.Drain))
			ring[head] = inflight{}
			head, n = (head+1)%len(ring), n-1
			continue
		}
		f, err := d.publish(w, now, stamp)
		if win.In(now) {
			w.published++
			w.rec.Ops++
		}
		if err != nil {
			w.rec.Error("publish_" + reason(err))
			if !w.nc.IsConnected() && d.p.Mode != Stream {
				w.rec.Dropped++
				break
			}
			time.Sleep(time.Millisecond) // a stalled or reconnecting client: do not spin
			continue
		}
		ring[(head+n)%len(ring)] = inflight{f, now, w.disconnects.Load()}
		n++
	}
	for ; n > 0; n-- {
		d.awaitAck(ctx, win, w, ring[head], win.Drain)
		head = (head + 1) % len(ring)
	}
}

// fetchOnce fetches up to --max records (fewer when the consumer has
// fewer pending), checks their stream sequences follow on from the last
// one, and records the round trip once per fetch.
func (d *driver) fetchOnce(ctx context.Context, win load.Window, w *worker, wait time.Duration) (n int, err error) {
	want := d.p.Max
	if d.p.Mode == Fetch && w.pending != ^uint64(0) && w.pending < uint64(want) {
		want = int(w.pending)
	}
	t0 := load.Mono()
	var b jetstream.MessageBatch
	if wait > 0 {
		b, err = w.cons.Fetch(want, jetstream.FetchMaxWait(wait))
	} else {
		b, err = w.cons.FetchNoWait(want) // mixed: what is there now, never a wait for a full batch
	}
	if err != nil {
		w.rec.Error("fetch_" + reason(err))
		return 0, err
	}
	var bytes int64
	for m := range b.Messages() {
		meta, err := m.Metadata()
		if err != nil {
			w.rec.Error("fetch_metadata")
			continue
		}
		seq := meta.Sequence.Stream
		switch {
		case seq > w.lastFetchSeq+1:
			w.rec.Error("fetch_gap")
		case seq <= w.lastFetchSeq:
			w.rec.Error("fetch_out_of_order")
		}
		w.lastFetchSeq = seq
		w.pending = meta.NumPending
		bytes += int64(len(m.Data()))
		n++
	}
	if err := b.Error(); err != nil && !errors.Is(err, natsgo.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) {
		w.rec.Error("fetch_" + reason(err))
	}
	now := load.Mono()
	if win.In(t0) {
		w.fetches++
		w.rec.Ops++
		if n > 0 {
			w.fetched += int64(n)
			w.rec.OK++
			w.rec.Messages += int64(n)
			w.rec.Bytes += bytes
			w.fetchLat.Record(now - t0)
			w.rec.Latency.Record(now - t0)
		}
	}
	return n, nil
}

// rewind makes the consumer anew once it has read the whole backlog, so
// a fetch run never runs dry.
func (d *driver) rewind(ctx context.Context, w *worker) error {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	if err := w.js.DeleteConsumer(ctx, d.p.Stream, w.name); err != nil {
		return err
	}
	c, err := w.js.CreateConsumer(ctx, d.p.Stream, d.consumerConfig(w.i))
	if err != nil {
		return err
	}
	w.cons, w.lastFetchSeq, w.pending = c, 0, ^uint64(0)
	w.rewinds++
	return nil
}

func (d *driver) fetchLoop(ctx context.Context, win load.Window, w *worker) {
	for ctx.Err() == nil && load.Mono() < win.End {
		n, err := d.fetchOnce(ctx, win, w, fetchWait)
		if err != nil {
			if !w.nc.IsConnected() {
				w.rec.Dropped++
				return
			}
			time.Sleep(time.Millisecond)
			continue
		}
		if n > 0 && w.pending == 0 {
			if err := d.rewind(ctx, w); err != nil {
				w.rec.Error("rewind_" + reason(err))
				return
			}
		}
	}
}

// mixed interleaves, on one connection: --batch publishes in flight,
// every ack awaited, then one fetch of --max.
func (d *driver) mixed(ctx context.Context, win load.Window, w *worker) {
	q := make([]inflight, 0, d.cfg.Batch)
	for ctx.Err() == nil && load.Mono() < win.End {
		q = q[:0]
		for range d.cfg.Batch {
			now := load.Mono()
			f, err := d.publish(w, now, false)
			if win.In(now) {
				w.published++
				w.rec.Ops++
			}
			if err != nil {
				w.rec.Error("publish_" + reason(err))
				break
			}
			q = append(q, inflight{f, now, 0})
		}
		for _, f := range q {
			d.awaitAck(ctx, win, w, f, min(load.Mono()+int64(ackTimeout), win.Drain))
		}
		if _, err := d.fetchOnce(ctx, win, w, 0); err != nil && !w.nc.IsConnected() {
			w.rec.Dropped++
			return
		}
	}
}

// stream consumes connection i's subject (a credit of --window) while the
// same connection publishes to it, --batch in flight. Deliveries of
// records published in the window count; each is timed from its header.
// After the window the drain waits until the consumer has delivered the
// last acked record, or Drain.
func (d *driver) stream(ctx context.Context, win load.Window, w *worker) {
	w.sub = load.NewRecorder(true, false)
	ackEvery := uint64(max(1, d.p.Window/2))
	cc, err := w.cons.Consume(func(m jetstream.Msg) { d.deliver(win, w, m, ackEvery) },
		jetstream.PullMaxMessages(d.p.Window),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			// The connection's loss and its announcements (the server
			// shutting down, heartbeats missed while away) are counted
			// in dropped and reconnects, not here.
			switch {
			case !w.nc.IsConnected() || errors.Is(err, jetstream.ErrNoHeartbeat) || errors.Is(err, jetstream.ErrServerShutdown) || errors.Is(err, natsgo.ErrConnectionClosed) || w.recovering(err):
			case noResponders(err):
				w.held.pull(load.Mono()) // the server going away, or an error: settled below
			default:
				w.rec.Error("consume_" + reason(err))
			}
		}))
	if err != nil {
		w.rec.Error("consume_" + reason(err))
		return
	}
	d.pipeline(ctx, win, w, true)
	for ctx.Err() == nil && load.Mono() < win.Drain && uint64(w.delivered.Load()) < w.maxAckedSubj {
		time.Sleep(5 * time.Millisecond)
	}
	cc.Stop()
	select {
	case <-cc.Closed():
	case <-time.After(5 * time.Second):
		w.rec.Error("consume_stop_timeout")
	}
	for range w.held.errors() {
		w.rec.Error("consume_no_responders")
	}
}

// deliver accounts one streamed record (the subscription's goroutine).
func (d *driver) deliver(win load.Window, w *worker, m jetstream.Msg, ackEvery uint64) {
	now := load.Mono()
	rec := w.sub
	meta, err := m.Metadata()
	if err != nil {
		rec.Error("stream_metadata")
		return
	}
	if meta.NumDelivered > 1 {
		w.redelivered++
	} else {
		switch {
		case meta.Sequence.Consumer > w.lastCons+1 && w.lastCons > 0:
			rec.Error("stream_gap")
		case meta.Sequence.Stream <= w.lastStream:
			rec.Error("stream_out_of_order")
		}
	}
	w.lastCons = max(w.lastCons, meta.Sequence.Consumer)
	w.lastStream = max(w.lastStream, meta.Sequence.Stream)
	w.delivered.Store(int64(w.lastStream))
	w.backlog.Store(int64(meta.NumPending))
	if meta.Sequence.Consumer%ackEvery == 0 || meta.NumPending == 0 {
		_ = m.Ack()
	}
	if meta.NumDelivered > 1 {
		return
	}
	ts, err := strconv.ParseInt(m.Headers().Get(TsHeader), 10, 64)
	if err != nil {
		rec.Error("stream_without_timestamp")
		return
	}
	if !win.In(ts) {
		return
	}
	if now >= win.Drain {
		rec.Late++
		return
	}
	rec.Latency.Record(now - ts)
	rec.Messages++
	rec.Bytes += int64(len(m.Data()))
}
