package nats

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"slices"
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
	// adminTry is one try of an admin request within adminTimeout: a
	// reply the cluster lost is asked for again.
	adminTry   = 5 * time.Second
	ackTimeout = 10 * time.Second
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
	// held are stream mode's pulls without responders on a connection
	// that was up and had not just come back: a server shutting down
	// stops answering pulls before it closes its connections, so each
	// is the restart's when a disconnect followed it within
	// shutdownGrace, an error otherwise (settleHeld, after the load).
	held     held
	lost     int64         // stream: publishes whose ack a disconnect took
	lostConn chan struct{} // stream: a disconnect, to the ack awaited
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
				w.held.disconnected(load.Mono())
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
	if err := createStream(ctx, js, jetstream.StreamConfig{Name: d.p.Stream, Subjects: []string{"ceiling.>"}, Storage: storage}); err != nil {
		return fmt.Errorf("create stream %s: %w (is JetStream enabled? nats-server -js)", d.p.Stream, err)
	}
	if d.p.Mode == Fetch || d.p.Mode == Mixed {
		if err := d.seed(ctx, js); err != nil {
			return fmt.Errorf("--prepopulate %d: %w", d.p.Prepopulate, err)
		}
	}
	return nil
}

// createStream asks for the stream until it is answered, each try
// bounded by adminTry, all of them by ctx. In a cluster the reply can be
// lost: the stream's node answers across a route that is not up yet, or
// the meta leader changes. The request is idempotent (the same config
// again is the same stream), so a try that timed out is simply repeated.
func createStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	for {
		try, cancel := context.WithTimeout(ctx, adminTry)
		_, err := js.CreateStream(try, cfg)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
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
// has recovered its streams, after the connection is back (docs/nats.md,
// stream mode).
const recoverGrace = 5 * time.Second

// recovering reports whether err is such a pull, within recoverGrace of
// the connection's return: counted in reconnects, not in errors. The
// client runs the reconnect handler on a goroutine of its own, so a pull
// can fail before the handler has stored the time: a reconnect the
// connection counts but the handler has not seen is one just now.
func (w *worker) recovering(err error) bool {
	if !noResponders(err) {
		return false
	}
	if w.nc != nil && int64(w.nc.Stats().Reconnects) > w.reconnects.Load() {
		return true
	}
	at := w.reconnectedAt.Load()
	return at > 0 && load.Mono()-at < int64(recoverGrace)
}

// noResponders: err is a request no JetStream answered.
func noResponders(err error) bool {
	return errors.Is(err, natsgo.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// shutdownGrace is how long before its connection closes a shutting-down
// server may stop answering pulls (held).
const shutdownGrace = 2 * time.Second

// held records pulls without responders and disconnects (load.Mono
// times), from the client's handler goroutines.
type held struct {
	mu          sync.Mutex
	pulls, gone []int64
}

func (h *held) pull(at int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pulls = append(h.pulls, at)
}

func (h *held) disconnected(at int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gone = append(h.gone, at)
}

// errors is how many held pulls no disconnect followed within
// shutdownGrace: those were the server's answer, not its going away.
func (h *held) errors() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, p := range h.pulls {
		if !slices.ContainsFunc(h.gone, func(g int64) bool { return g >= p && g-p <= int64(shutdownGrace) }) {
			n++
		}
	}
	return n
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
