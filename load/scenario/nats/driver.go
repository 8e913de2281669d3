package nats

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
)

// TsHeader carries a stream-mode record's publish time (this process's
// monotonic clock, ns): publisher and consumer are the same process.
const TsHeader = "Ceiling-Ts"

// Timeouts. Every wait is bounded: an ack or fetch not answered by then
// is an error by its reason, never a hang.
const (
	adminTimeout = 30 * time.Second
	ackTimeout   = 10 * time.Second
	// lostGrace is how long stream still waits for the ack of a publish
	// sent before a disconnect: the reconnect usually took it.
	lostGrace      = 100 * time.Millisecond
	fetchWait      = time.Second
	connectTimeout = 10 * time.Second
)

// driver is one run of a NATS scenario. Connection i has its own
// nats.Conn over WebSocket, its own JetStream context and, for fetch,
// stream and mixed, its own durable consumer; one worker goroutine per
// connection owns its worker (and its recorder).
type driver struct {
	cfg  *load.Config
	p    *Params
	pool *payload.Pool

	subjects []string
	admin    *natsgo.Conn
	adminJS  jetstream.JetStream

	workers []*worker

	prepopulated int64
	summary      *Summary
}

// worker is one connection and all it records. Only its goroutine writes
// it during Load, except the counters the client's callbacks touch
// (atomics) and the stream handler's recorder (sub), written only by the
// client's delivery goroutine of this connection's subscription.
type worker struct {
	i      int
	server int // index into urls
	nc     *natsgo.Conn
	js     jetstream.JetStream
	cons   jetstream.Consumer
	name   string // durable consumer name

	rec *load.Recorder // the worker's own (produce, fetch, mixed; stream: publishes' errors)
	sub *load.Recorder // stream: deliveries (the handler's)

	ackLat, fetchLat *load.Histogram

	published, acked int64 // in the window
	ackedTotal       int64 // every ack of the run
	lastAck          uint64
	maxAck           uint64
	n                int // records published (subject and pool index)

	fetches, fetched, rewinds int64
	lastFetchSeq              uint64
	pending                   uint64 // consumer's pending after the last fetched record, -1 unknown

	// stream: the handler's state.
	lastCons, lastStream uint64
	delivered            atomic.Int64 // delivered stream seq high-water mark, for the drain
	backlog              atomic.Int64 // the consumer's pending after its last delivery
	redelivered          int64
	maxAckedSubj         uint64 // highest acked stream seq of this worker's subject by this worker

	disconnects, reconnects atomic.Int64
	// reconnectedAt is when the connection last came back (load.Mono; 0:
	// never lost), for recovering (stream mode's consume errors).
	reconnectedAt atomic.Int64
	lost          int64         // stream: publishes whose ack a disconnect took
	lostConn      chan struct{} // stream: a disconnect, to the ack awaited
}

func newDriver(c *load.Config, p *Params, pool *payload.Pool) *driver {
	d := &driver{cfg: c, p: p, pool: pool, workers: make([]*worker, c.Connections)}
	for k := 0; k < p.Keys; k++ {
		d.subjects = append(d.subjects, "ceiling."+strconv.Itoa(k))
	}
	return d
}

// urls are the servers: connection i goes to urls[i mod len].
func (d *driver) urls() []string {
	if len(d.cfg.URLs) > 0 {
		return d.cfg.URLs
	}
	return []string{d.cfg.URL}
}

func (d *driver) connect(url, name string, reconnect bool, w *worker) (*natsgo.Conn, error) {
	opts := []natsgo.Option{natsgo.Name(name), natsgo.Timeout(connectTimeout)}
	switch {
	case d.p.CAFile != "":
		opts = append(opts, natsgo.RootCAs(d.p.CAFile))
	case d.p.Insecure:
		opts = append(opts, natsgo.Secure(&tls.Config{InsecureSkipVerify: true}))
	}
	if reconnect {
		opts = append(opts, natsgo.MaxReconnects(-1), natsgo.ReconnectWait(50*time.Millisecond), natsgo.ReconnectJitter(0, 0))
	} else {
		opts = append(opts, natsgo.NoReconnect())
	}
	if w != nil {
		opts = append(opts,
			natsgo.DisconnectErrHandler(func(*natsgo.Conn, error) {
				w.disconnects.Add(1)
				select {
				case w.lostConn <- struct{}{}:
				default:
				}
			}),
			natsgo.ReconnectHandler(func(*natsgo.Conn) {
				w.reconnectedAt.Store(load.Mono())
				w.reconnects.Add(1)
			}),
		)
	}
	return natsgo.Connect(url, opts...)
}

// Preflight makes the stream anew (deleting one of that name: every run
// starts from sequence 1) and, for fetch and mixed, seeds it with
// --prepopulate records, every one acked, before any connection opens.
func (d *driver) Preflight(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout+time.Duration(d.p.Prepopulate)*time.Millisecond)
	defer cancel()
	nc, err := d.connect(d.cfg.URL, "ceiling-admin", true, nil) // it reads the stream's state at Finish, after any restart
	if err != nil {
		return fmt.Errorf("connect %s: %w", d.cfg.URL, err)
	}
	d.admin = nc
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1024))
	if err != nil {
		return err
	}
	d.adminJS = js
	if err := js.DeleteStream(ctx, d.p.Stream); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("delete stream %s: %w (is JetStream enabled? nats-server -js)", d.p.Stream, err)
	}
	storage := jetstream.FileStorage
	if d.p.Storage == "memory" {
		storage = jetstream.MemoryStorage
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: d.p.Stream, Subjects: []string{"ceiling.>"}, Storage: storage}); err != nil {
		return fmt.Errorf("create stream %s: %w (is JetStream enabled? nats-server -js)", d.p.Stream, err)
	}
	if d.p.Mode == Fetch || d.p.Mode == Mixed {
		if err := d.seed(ctx, js); err != nil {
			return fmt.Errorf("--prepopulate %d: %w", d.p.Prepopulate, err)
		}
	}
	return nil
}

// seed publishes --prepopulate records, 256 in flight, each acked, and
// checks the acks are 1..N.
func (d *driver) seed(ctx context.Context, js jetstream.JetStream) error {
	const inflight = 256
	var futs []jetstream.PubAckFuture
	var next uint64 = 1
	await := func() error {
		for _, f := range futs {
			select {
			case a := <-f.Ok():
				if a.Sequence != next {
					return fmt.Errorf("seed ack %d, want %d", a.Sequence, next)
				}
				next++
			case err := <-f.Err():
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		futs = futs[:0]
		return nil
	}
	for n := 0; n < d.p.Prepopulate; n++ {
		f, err := js.PublishMsgAsync(&natsgo.Msg{Subject: d.subjects[n%len(d.subjects)], Data: d.pool.Value(n)})
		if err != nil {
			return err
		}
		futs = append(futs, f)
		if len(futs) == inflight {
			if err := await(); err != nil {
				return err
			}
		}
	}
	if err := await(); err != nil {
		return err
	}
	d.prepopulated = int64(d.p.Prepopulate)
	return nil
}

// consumerConfig is connection i's durable consumer.
func (d *driver) consumerConfig(i int) jetstream.ConsumerConfig {
	name := "ceiling-" + d.p.Mode + "-" + strconv.Itoa(i)
	switch d.p.Mode {
	case Stream:
		return jetstream.ConsumerConfig{
			Durable: name, AckPolicy: jetstream.AckAllPolicy, MaxAckPending: d.p.Window,
			DeliverPolicy: jetstream.DeliverNewPolicy, FilterSubject: d.subjects[i%len(d.subjects)],
			AckWait: 30 * time.Second,
		}
	default: // fetch, mixed: the whole stream from its start, no acks
		return jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckNonePolicy, DeliverPolicy: jetstream.DeliverAllPolicy}
	}
}

// Connect opens connection i over WebSocket and, but for produce, makes
// its consumer.
func (d *driver) Connect(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	w := &worker{i: i, rec: load.NewRecorder(true, false), ackLat: load.NewHistogram(), fetchLat: load.NewHistogram(), pending: ^uint64(0), lostConn: make(chan struct{}, 1)}
	urls := d.urls()
	w.server = i % len(urls)
	nc, err := d.connect(urls[w.server], "ceiling-"+strconv.Itoa(i), d.p.Mode == Stream, w)
	if err != nil {
		return err
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(max(d.cfg.Batch, 1)), jetstream.WithPublishAsyncTimeout(ackTimeout))
	if err != nil {
		nc.Close()
		return err
	}
	w.nc, w.js = nc, js
	if d.p.Mode != Produce {
		cc := d.consumerConfig(i)
		w.name = cc.Durable
		w.cons, err = js.CreateOrUpdateConsumer(ctx, d.p.Stream, cc)
		if err != nil {
			nc.Close()
			return fmt.Errorf("consumer %s: %w", cc.Durable, err)
		}
	}
	if len(urls) > 1 {
		if err := d.awaitRoutes(ctx, w); err != nil {
			nc.Close()
			return err
		}
	}
	d.workers[i] = w // Connect runs concurrently, each on its own index
	return nil
}

// awaitRoutes waits until connection w's server reaches the stream (and,
// in stream mode, w's consumer) across the cluster's routes. The answer
// to making a stream or consumer can reach a node before the interest
// that routes the stream's subjects and the consumer's pull requests to
// it does (they travel on different route connections), so the first
// publishes or pulls on another node would fail with no responders: a
// race of the cluster's making, not of the load. The publish probe
// expects a last sequence the stream cannot have, so the stream refuses
// it (an API error: it answered) and stores nothing; the pull probe is a
// no-wait fetch of a stream that is still empty (stream mode publishes
// only once the load starts).
func (d *driver) awaitRoutes(ctx context.Context, w *worker) error {
	for {
		_, err := w.js.PublishMsg(ctx, &natsgo.Msg{Subject: d.subjects[0]}, jetstream.WithExpectLastSequence(math.MaxUint64), jetstream.WithRetryAttempts(0))
		if !errors.Is(err, jetstream.ErrNoStreamResponse) && !errors.Is(err, natsgo.ErrNoResponders) {
			break
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("the stream never answered on %s: %w", d.urls()[w.server], err)
		}
	}
	if d.p.Mode != Stream {
		return nil
	}
	for {
		b, err := w.cons.FetchNoWait(1)
		if err == nil {
			for range b.Messages() {
			}
			err = b.Error()
		}
		if !errors.Is(err, natsgo.ErrNoResponders) {
			return nil
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("consumer %s never answered on %s: %w", w.name, d.urls()[w.server], err)
		}
	}
}

// recoverGrace is how long after a reconnect a pull without responders
// is the restart's: a restarted server's JetStream answers only once it
// has recovered its streams, moments after the connection is back.
const recoverGrace = 2 * time.Second

// recovering reports whether err is such a pull, within recoverGrace of
// the connection's return: counted in reconnects, not in errors.
func (w *worker) recovering(err error) bool {
	at := w.reconnectedAt.Load()
	return at > 0 && load.Mono()-at < int64(recoverGrace) &&
		(errors.Is(err, natsgo.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func (d *driver) ReadCounters() (reads, messages int64) { return 0, 0 }

// Engine is the client library that drives the connections
// (load.LoopReporter): nats.go, its own goroutines per connection.
func (d *driver) Engine() string { return "nats.go" }

// LoopStats is nil: no event loops.
func (d *driver) LoopStats(load.Window) *load.LoopStats { return nil }

func (d *driver) DrainNs() int64 { return int64(load.Drain) }

// Load runs one goroutine per open connection until the window ends and
// its in-flight work is done (at most Drain after the window).
func (d *driver) Load(ctx context.Context, win load.Window) []*load.Recorder {
	d.compact()
	var wg sync.WaitGroup
	for _, w := range d.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch d.p.Mode {
			case Produce:
				d.produce(ctx, win, w)
			case Fetch:
				d.fetchLoop(ctx, win, w)
			case Mixed:
				d.mixed(ctx, win, w)
			case Stream:
				d.stream(ctx, win, w)
			}
		}()
	}
	wg.Wait()
	var recs []*load.Recorder
	for _, w := range d.workers {
		recs = append(recs, w.rec)
		if w.sub != nil {
			recs = append(recs, w.sub)
		}
	}
	return recs
}

// compact keeps the workers whose connection opened.
func (d *driver) compact() {
	open := d.workers[:0]
	for _, w := range d.workers {
		if w != nil {
			open = append(open, w)
		}
	}
	d.workers = open
}

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
			if w.nc.IsConnected() && !errors.Is(err, jetstream.ErrNoHeartbeat) && !errors.Is(err, jetstream.ErrServerShutdown) && !errors.Is(err, natsgo.ErrConnectionClosed) && !w.recovering(err) {
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

// Finish checks the acks against the stream, writes summary.nats and
// closes every connection.
func (d *driver) Finish(res *load.Result, m *load.Recorder) {
	d.compact() // a run that failed before Load has workers never connected
	s := &Summary{Mode: d.p.Mode, Stream: d.p.Stream, Keys: d.p.Keys, Prepopulated: d.prepopulated, SequenceCheck: "not checked"}
	ackLat, fetchLat := load.NewHistogram(), load.NewHistogram()
	var maxAck uint64
	for _, w := range d.workers {
		s.Published += w.published
		s.Acked += w.acked
		s.AckedTotal += w.ackedTotal
		maxAck = max(maxAck, w.maxAck)
		s.Fetches += w.fetches
		s.Fetched += w.fetched
		s.Rewinds += w.rewinds
		s.Redelivered += w.redelivered
		s.LostInReconnect += w.lost
		s.Disconnects += w.disconnects.Load()
		s.Reconnects += w.reconnects.Load()
		ackLat.Merge(w.ackLat)
		fetchLat.Merge(w.fetchLat)
	}
	if d.p.Mode != Fetch {
		l := ackLat.Latency()
		s.AckLatency = &l
	}
	if d.p.Mode == Fetch || d.p.Mode == Mixed {
		l := fetchLat.Latency()
		s.FetchLatency = &l
	}
	if d.p.Mode == Stream {
		s.Delivered = m.Messages
		s.Window = d.p.Window
	}
	if d.adminJS != nil {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		if st, err := d.adminJS.Stream(ctx, d.p.Stream); err == nil {
			if info, err := st.Info(ctx); err == nil {
				s.StreamLastSeq = info.State.LastSeq
				s.StreamMessages = info.State.Msgs
			}
		}
		cancel()
	}
	if d.p.Mode != Fetch && s.StreamLastSeq > 0 {
		total := uint64(s.AckedTotal + d.prepopulated)
		switch {
		case m.Errors["ack_timeout"] > 0 || publishErrors(m) > 0 || s.LostInReconnect > 0:
			s.SequenceCheck = "not checked: some publishes failed or timed out, their records may be stored unacked"
		case total != s.StreamLastSeq || max(maxAck, uint64(d.prepopulated)) != s.StreamLastSeq:
			s.SequenceCheck = fmt.Sprintf("gap: %d acks (seed included) but the stream's last sequence is %d", total, s.StreamLastSeq)
			res.Summary.Errors++
			res.Summary.ErrorsByReason["ack_gap"]++
		default:
			s.SequenceCheck = "continuous"
		}
	}
	for _, r := range []string{"fetch_gap", "stream_gap", "ack_gap"} {
		s.Gaps += res.Summary.ErrorsByReason[r]
	}
	for _, r := range []string{"fetch_out_of_order", "stream_out_of_order", "ack_out_of_order"} {
		s.OutOfOrder += res.Summary.ErrorsByReason[r]
	}
	// dropped and reconnects are stream's: null elsewhere, where a lost
	// connection is an error by its reason.
	if d.p.Mode == Stream {
		dr, rc := s.Disconnects, s.Reconnects
		res.Summary.Dropped, res.Summary.Reconnects = &dr, &rc
	} else {
		res.Summary.Dropped, res.Summary.Reconnects = nil, nil
	}
	urls := d.urls()
	for _, u := range urls {
		s.Servers = append(s.Servers, ServerCount{URL: u})
	}
	for _, w := range d.workers {
		sc := &s.Servers[w.server]
		sc.Connections++
		sc.Messages += w.rec.Messages
		if w.sub != nil {
			sc.Messages += w.sub.Messages
		}
	}
	_ = res.Summary.SetBlock(BlockKey, s)
	d.summary = s
	for _, w := range d.workers {
		w.nc.Close()
	}
	if d.admin != nil {
		d.admin.Close()
	}
}

func publishErrors(m *load.Recorder) int64 {
	var n int64
	for k, v := range m.Errors {
		if len(k) > 8 && k[:8] == "publish_" {
			n += v
		}
	}
	return n
}

// reason names a client error by kind, for errors_by_reason.
func reason(err error) string {
	var api *jetstream.APIError
	switch {
	case errors.As(err, &api):
		// The status and nats-server's own code: api_429_10167 is
		// JSStreamTooManyRequests, the server shedding publishes.
		return "api_" + strconv.Itoa(api.Code) + "_" + strconv.Itoa(int(api.ErrorCode))
	case errors.Is(err, natsgo.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, natsgo.ErrConnectionClosed), errors.Is(err, jetstream.ErrConnectionClosed):
		return "closed"
	case errors.Is(err, natsgo.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse):
		return "no_responders"
	case errors.Is(err, jetstream.ErrTooManyStalledMsgs):
		return "stalled"
	case errors.Is(err, natsgo.ErrDisconnected), errors.Is(err, natsgo.ErrConnectionReconnecting):
		return "disconnected"
	}
	return load.Reason(err)
}
