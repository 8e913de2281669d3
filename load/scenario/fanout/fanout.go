package fanout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/load"

	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/pusherclient"
	"github.com/ceiling-bench/ceiling/load/wsconn"
	"github.com/ceiling-bench/ceiling/pusher"
)

// fanout drives a Pusher Channels server: --connections subscribers spread
// evenly over --channels public channels (connection i on channel i mod
// channels), and --publishers REST publishers. An operation is one publish
// request (--batch events; > 1 uses batch_events). Each event's data
// carries its publish time (the scheduled time in the open loop) and a
// sequence number:
//
//	{"ceiling_ts":<ns>,"ceiling_seq":<n>,"payload":<value>}
//
// so a subscriber measures publish -> deliver latency on every delivery by
// scanning the bytes (pusherclient.IntField), never by json.Unmarshal. The
// timestamps are this process's monotonic clock: publisher and subscribers
// share it. Deliveries of events published inside the window are awaited
// for Grace after it; expected deliveries are the subscribers of each
// successfully published event's channel.
type fanout struct {
	cfg    *load.Config
	p      *Params
	pool   *payload.Pool
	client *pusherclient.Client

	channels []string
	conns    []*wsconn.Conn
	subs     []int64 // subscribed connections per channel

	pubs []*publisher

	loops load.LoopRunner // the subscribers' event loops
}

// fanoutEvent is the event name the generator publishes.
const fanoutEvent = "ceiling-load"

// fanoutLate is how long after the grace subscribers keep reading, to
// count deliveries that came late instead of losing them silently.
const fanoutLate = 250 * time.Millisecond

func newFanout(cfg *load.Config, p *Params, pool *payload.Pool) *fanout {
	f := &fanout{
		cfg:    cfg,
		p:      p,
		pool:   pool,
		client: pusherclient.New(cfg.URL, p.AppID, p.Key, p.Secret, nil),
		conns:  make([]*wsconn.Conn, cfg.Connections),
		subs:   make([]int64, p.Channels),
	}
	for c := 0; c < p.Channels; c++ {
		f.channels = append(f.channels, "ceiling-"+strconv.Itoa(c))
	}
	return f
}

// Preflight proves delivery end to end before any load: a preflight
// subscriber connects and subscribes to its own channel, one signed event
// is published to it, and the event must arrive within
// preflightDeliveryTimeout. A wrong app id, key or secret fails here with
// the server's own message, whether it says so with a 4xx status or with
// HTTP 200 and the error in the body (pusherclient.BodyError); a server
// that accepts the publish but delivers nothing fails here too, instead of
// reporting thousands of events "published" and none delivered.
func (f *fanout) Preflight(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	const ch = "ceiling-preflight"
	c, err := wsconn.Dial(ctx, f.wsURL(), wsconn.Options{})
	if err != nil {
		return fmt.Errorf("preflight subscriber: %w", err)
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	c.SetReadDeadline(dl)
	if err := f.awaitEvent(c, pusher.EventConnectionEstablished, ""); err != nil {
		return fmt.Errorf("preflight subscriber: %w (check --key)", err)
	}
	if err := c.WriteMessage(wsconn.OpText, pusher.AppendSubscribe(nil, ch, false)); err != nil {
		return fmt.Errorf("preflight subscriber: %w", err)
	}
	if err := f.awaitEvent(c, pusher.EventSubscriptionSucceeded, ch); err != nil {
		return fmt.Errorf("preflight subscriber: %w", err)
	}
	nonce := strconv.FormatInt(time.Now().UnixNano(), 10)
	err = f.client.Trigger(ctx, pusher.Event{Name: fanoutEvent, Channel: ch, Data: `{"preflight":` + nonce + `}`})
	var he *pusherclient.HTTPError
	var be *pusherclient.BodyError
	switch {
	case errors.As(err, &be):
		return fmt.Errorf("%w (check --app-id, --key and --secret)", err)
	case errors.As(err, &he) && (he.Status == 401 || he.Status == 403 || he.Status == 404):
		return fmt.Errorf("%w (check --app-id, --key and --secret)", err)
	case err != nil:
		return err
	}
	c.SetReadDeadline(time.Now().Add(preflightDeliveryTimeout))
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return fmt.Errorf("%w: the signed publish to %s was accepted, but the event did not reach its subscriber within %v (%v): the server accepts publishes it does not deliver (check --app-id, and that REST and WebSocket reach the same server)",
				ErrNotDelivered, ch, preflightDeliveryTimeout, load.Reason(err))
		}
		ev, evCh, data, ok := pusherclient.ScanEvent(msg)
		if !ok {
			continue
		}
		if string(ev) == pusher.EventError {
			return fmt.Errorf("preflight subscriber: pusher:error %s", data)
		}
		if string(ev) == fanoutEvent && string(evCh) == ch {
			if n, ok := pusherclient.IntField(data, "preflight"); ok && strconv.FormatInt(n, 10) == nonce {
				return nil
			}
		}
	}
}

// preflightDeliveryTimeout bounds the wait for the preflight event.
const preflightDeliveryTimeout = 5 * time.Second

// ErrNotDelivered is a fan-out run (or its preflight) in which the server
// accepted publishes but no event reached a subscriber.
var ErrNotDelivered = errors.New("nothing delivered")

func (f *fanout) wsURL() string {
	u := f.cfg.URL
	for len(u) > 0 && u[len(u)-1] == '/' {
		u = u[:len(u)-1]
	}
	return u + pusher.AppPath(f.p.Key) + "?protocol=" + strconv.Itoa(pusher.ProtocolVersion)
}

// Connect opens subscriber i, waits for connection_established, subscribes
// to its channel and waits for subscription_succeeded.
func (f *fanout) Connect(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	opts := wsconn.Options{}
	if f.onLoops() {
		opts = subscriberDialOptions
	}
	c, err := wsconn.Dial(ctx, f.wsURL(), opts)
	if err != nil {
		return err
	}
	dl, _ := ctx.Deadline()
	c.SetReadDeadline(dl)
	ch := f.channels[i%len(f.channels)]
	if err := f.awaitEvent(c, pusher.EventConnectionEstablished, ""); err != nil {
		c.Close()
		return err
	}
	if err := c.WriteMessage(wsconn.OpText, pusher.AppendSubscribe(nil, ch, false)); err != nil {
		c.Close()
		return err
	}
	if err := f.awaitEvent(c, pusher.EventSubscriptionSucceeded, ch); err != nil {
		c.Close()
		return err
	}
	c.SetReadDeadline(time.Time{})
	if f.onLoops() {
		c.Shrink() // idle until Load hands it to a loop: no buffers meanwhile
	}
	f.conns[i] = c
	return nil
}

// errPusher is a pusher:error received while connecting.
type errPusher struct{ data string }

func (e errPusher) Error() string { return "pusher:error " + e.data }

func (f *fanout) awaitEvent(c *wsconn.Conn, event, channel string) error {
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return err
		}
		ev, ch, data, ok := pusherclient.ScanEvent(msg)
		if !ok {
			continue
		}
		if string(ev) == pusher.EventError {
			return errPusher{string(data)}
		}
		if string(ev) == event && (channel == "" || string(ch) == channel) {
			return nil
		}
	}
}

func (f *fanout) ReadCounters() (reads, messages int64) {
	reads, messages = load.ConnCounters(f.conns)
	rd, m := f.loops.Counters()
	return reads + rd, messages + m
}

// Engine says how the subscribers were driven (load.LoopReporter); the
// REST publishers are goroutines either way.
func (f *fanout) Engine() string {
	if f.onLoops() {
		return load.EngineLoop
	}
	return load.EngineGoroutines
}

// LoopStats is the subscribers' event loops' evidence over the window.
func (f *fanout) LoopStats(load.Window) *load.LoopStats { return f.loops.Stats() }

func (f *fanout) Load(ctx context.Context, w load.Window) []*load.Recorder {
	for i, c := range f.conns {
		if c != nil {
			f.subs[i%len(f.channels)]++
		}
	}
	var recs []*load.Recorder
	var wg sync.WaitGroup
	if f.onLoops() {
		eng, subRecs := f.loopSubscribers(ctx, w)
		recs = subRecs
		if eng != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f.loops.Run(ctx, eng)
			}()
		}
	}
	for _, c := range f.conns {
		if c == nil || f.onLoops() {
			continue
		}
		rec := load.NewRecorder(true, false)
		recs = append(recs, rec)
		wg.Add(1)
		go func(c *wsconn.Conn) {
			defer wg.Done()
			stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })
			defer stop()
			f.subscribe(ctx, c, w, rec)
		}(c)
	}
	var pwg sync.WaitGroup
	wakes := make([]chan struct{}, f.p.Publishers)
	for p := range wakes {
		wakes[p] = make(chan struct{}, 1)
	}
	if f.cfg.OpenLoop() {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			load.RunClock(ctx, f.cfg.Rate, w.Open, w.End, wakes)
		}()
	}
	for p := 0; p < f.p.Publishers; p++ {
		pub := newPublisher(f, p)
		f.pubs = append(f.pubs, pub)
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			pub.run(ctx, w, wakes[p])
		}()
	}
	pwg.Wait()
	for _, p := range f.pubs {
		recs = append(recs, p.recs...)
	}
	wg.Wait()
	return recs
}

// subscribe reads deliveries until the grace (plus the late margin) ends.
func (f *fanout) subscribe(ctx context.Context, c *wsconn.Conn, w load.Window, rec *load.Recorder) {
	var pong []byte
	c.SetReadDeadline(load.MonoTime(w.Drain + int64(fanoutLate)))
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			f.lost(ctx, err, w, rec)
			return
		}
		if f.deliver(msg, load.Mono(), w, rec) {
			// Answer the server's keep-alive; this goroutine is the only
			// writer once subscribed.
			pong = pusher.AppendPong(pong[:0])
			if err := c.WriteMessage(wsconn.OpText, pong); err != nil && ctx.Err() == nil {
				rec.Error(load.Reason(err))
			}
		}
	}
}

// lost counts a subscriber's end: an error, and dropped inside the
// window, unless it is the read deadline after the grace (the end of the
// run) or the run was interrupted.
func (f *fanout) lost(ctx context.Context, err error, w load.Window, rec *load.Recorder) {
	if ctx.Err() != nil || err == nil {
		return
	}
	now := load.Mono()
	if r := load.Reason(err); r != "timeout" || now < w.Drain {
		rec.Error(r)
		if now < w.End {
			rec.Dropped++
		}
	}
}

// deliver accounts one message a subscriber received at now: our events
// published inside the window are delivered (or late, after the grace);
// anything else is skipped. It reports whether msg was a pusher:ping.
func (f *fanout) deliver(msg []byte, now int64, w load.Window, rec *load.Recorder) (ping bool) {
	ev, _, data, ok := pusherclient.ScanEvent(msg)
	if !ok || string(ev) != fanoutEvent {
		if ok && string(ev) == pusher.EventError {
			rec.Error("pusher_error")
		}
		return ok && string(ev) == pusher.EventPing
	}
	ts, ok := pusherclient.IntField(data, "ceiling_ts")
	if !ok {
		rec.Error("delivery_without_timestamp")
		return false
	}
	if !w.In(ts) {
		return false
	}
	if now >= w.Drain {
		rec.Late++
		return false
	}
	rec.Latency.Record(now - ts)
	rec.Messages++
	rec.Bytes += int64(len(data))
	return false
}

func (f *fanout) Finish(res *load.Result, m *load.Recorder) {
	for i, c := range f.conns {
		if c != nil {
			c.Close()
			f.conns[i] = nil
		}
	}
	fs := &Summary{GraceNs: int64(Grace), HTTPFailures: map[string]int64{}}
	pubLat := load.NewHistogram()
	for _, p := range f.pubs {
		for _, w := range p.workers {
			fs.EventsPublished += w.events
			fs.DeliveriesExpected += w.expected
			fs.RateLimited429 += w.rateLimited
			for k, v := range w.httpFailures {
				fs.HTTPFailures[k] += v
			}
			pubLat.Merge(w.publishLatency)
		}
	}
	fs.PublishLatency = pubLat.Latency()
	fs.Delivered = m.Messages
	fs.Duplicates = max(0, fs.Delivered-fs.DeliveriesExpected)
	fs.Late = m.Late
	if fs.DeliveriesExpected > 0 {
		fs.DeliveredPct = 100 * float64(fs.Delivered-fs.Duplicates) / float64(fs.DeliveriesExpected)
	}
	_ = res.Summary.SetBlock(Name, fs)
}

// Drop aborts every subscriber with no close frame (--drop).
func (f *fanout) Drop() int {
	n := 0
	for _, c := range f.conns {
		if c != nil {
			c.Abort()
			n++
		}
	}
	return n
}

// Probe is a new client's round trip: the preflight's subscribe, signed
// publish and delivery, on fresh connections.
func (f *fanout) Probe(ctx context.Context) error { return f.Preflight(ctx) }
