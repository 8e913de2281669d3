package fanout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
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
	cfg     *load.Config
	p       *Params
	pool    *payload.Pool
	urls    []string               // --url, each server's
	clients []*pusherclient.Client // one per server, for its REST API

	channels []string
	conns    []*wsconn.Conn
	// live[s*len(channels)+c] are channel c's subscribers on server s
	// still connected: an event is owed to those connected when it is
	// published.
	live     []atomic.Int64
	gone     []atomic.Bool // conns[i] was lost (live counted it down)
	connsPer []int         // subscribers each server held at the window

	pubs        []*publisher
	tallies     []*tally // the subscribers' per-server counts, one per reader
	splitNs     int64    // --split-at on the monotonic clock; 0: none
	windowStart int64

	loops   load.LoopRunner // the subscribers' event loops
	loopIdx []int           // an event-loop connection's index -> conns index
}

// tally is one reader's (a loop's, or a subscriber goroutine's) counts by
// server: deliveries before and after the split, and subscribers lost.
type tally struct {
	delivered [][2]int64
	dropped   []int64
}

func (f *fanout) newTally() *tally {
	t := &tally{delivered: make([][2]int64, len(f.urls)), dropped: make([]int64, len(f.urls))}
	f.tallies = append(f.tallies, t)
	return t
}

// server and channel place subscriber i: server i mod N, channel
// (i div N) mod channels, so every channel has subscribers on every
// server and most deliveries cross from one node to another.
func (f *fanout) server(i int) int  { return i % len(f.urls) }
func (f *fanout) channel(i int) int { return (i / len(f.urls)) % len(f.channels) }

// phase is an event's side of the split by its publish time: 0 before
// (or no split), 1 after.
func (f *fanout) phase(ts int64) int {
	if f.splitNs > 0 && ts >= f.splitNs {
		return 1
	}
	return 0
}

// fanoutEvent is the event name the generator publishes.
const fanoutEvent = "ceiling-load"

// fanoutLate is how long after the grace subscribers keep reading, to
// count deliveries that came late instead of losing them silently.
const fanoutLate = 250 * time.Millisecond

func newFanout(cfg *load.Config, p *Params, pool *payload.Pool) *fanout {
	f := &fanout{
		cfg:   cfg,
		p:     p,
		pool:  pool,
		urls:  cfg.URLs,
		conns: make([]*wsconn.Conn, cfg.Connections),
		gone:  make([]atomic.Bool, cfg.Connections),
	}
	if len(f.urls) == 0 {
		f.urls = []string{cfg.URL}
	}
	for _, u := range f.urls {
		f.clients = append(f.clients, pusherclient.New(u, p.AppID, p.Key, p.Secret, nil))
	}
	for c := 0; c < p.Channels; c++ {
		f.channels = append(f.channels, "ceiling-"+strconv.Itoa(c))
	}
	f.live = make([]atomic.Int64, len(f.urls)*len(f.channels))
	f.connsPer = make([]int, len(f.urls))
	return f
}

// Preflight proves delivery end to end before any load: a preflight
// subscriber on every server subscribes to its own channel, one signed
// event is published through each server in turn, and every subscriber
// must receive every event within preflightDeliveryTimeout — across
// nodes, when there are several. A wrong app id, key or secret fails here
// with the server's own message, whether it says so with a 4xx status or
// with HTTP 200 and the error in the body (pusherclient.BodyError); a
// server that accepts the publish but delivers nothing fails here too,
// instead of reporting thousands of events "published" and none
// delivered, and so do nodes that are not one cluster.
func (f *fanout) Preflight(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	const ch = "ceiling-preflight"
	subs := make([]*wsconn.Conn, len(f.urls))
	defer func() {
		for _, c := range subs {
			if c != nil {
				c.Close()
			}
		}
	}()
	for s := range f.urls {
		c, err := wsconn.Dial(ctx, f.wsURL(s), wsconn.Options{})
		if err != nil {
			return fmt.Errorf("preflight subscriber%s: %w", f.on(s), err)
		}
		subs[s] = c
		dl, _ := ctx.Deadline()
		c.SetReadDeadline(dl)
		if err := f.awaitEvent(c, pusher.EventConnectionEstablished, ""); err != nil {
			return fmt.Errorf("preflight subscriber%s: %w (check --key)", f.on(s), err)
		}
		if err := c.WriteMessage(wsconn.OpText, pusher.AppendSubscribe(nil, ch, false)); err != nil {
			return fmt.Errorf("preflight subscriber%s: %w", f.on(s), err)
		}
		if err := f.awaitEvent(c, pusher.EventSubscriptionSucceeded, ch); err != nil {
			return fmt.Errorf("preflight subscriber%s: %w", f.on(s), err)
		}
	}
	for via, client := range f.clients {
		nonce := strconv.FormatInt(time.Now().UnixNano(), 10)
		err := client.Trigger(ctx, pusher.Event{Name: fanoutEvent, Channel: ch, Data: `{"preflight":` + nonce + `}`})
		var he *pusherclient.HTTPError
		var be *pusherclient.BodyError
		switch {
		case errors.As(err, &be):
			return &load.Refused{Err: fmt.Errorf("%w%s (check --app-id, --key and --secret)", err, f.on(via))}
		case errors.As(err, &he) && (he.Status == 401 || he.Status == 403 || he.Status == 404):
			return &load.Refused{Err: fmt.Errorf("%w%s (check --app-id, --key and --secret)", err, f.on(via))}
		case err != nil:
			return fmt.Errorf("%w%s", err, f.on(via))
		}
		for s, c := range subs {
			if err := awaitPreflight(c, ch, nonce); err != nil {
				hint := "the server accepts publishes it does not deliver (check --app-id, and that REST and WebSocket reach the same server)"
				if len(f.urls) > 1 {
					hint = fmt.Sprintf("published through %s, not heard by the subscriber on %s: are the --url servers nodes of one cluster? (check --app-id too)", f.urls[via], f.urls[s])
				}
				// Accepted and not delivered: the next point's server
				// will do the same.
				return &load.Refused{Err: fmt.Errorf("%w: the signed publish to %s was accepted, but the event did not reach its subscriber within %v (%v): %s",
					ErrNotDelivered, ch, preflightDeliveryTimeout, load.Reason(err), hint)}
			}
		}
	}
	return nil
}

// on is " on URL" for server s of several, "" for the one.
func (f *fanout) on(s int) string {
	if len(f.urls) == 1 {
		return ""
	}
	return " on " + f.urls[s]
}

// awaitPreflight reads c until the preflight event carrying nonce.
func awaitPreflight(c *wsconn.Conn, ch, nonce string) error {
	c.SetReadDeadline(time.Now().Add(preflightDeliveryTimeout))
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return err
		}
		ev, evCh, data, ok := pusherclient.ScanEvent(msg)
		if !ok {
			continue
		}
		if string(ev) == pusher.EventError {
			return fmt.Errorf("pusher:error %s", data)
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

// wsURL is server s's app endpoint.
func (f *fanout) wsURL(s int) string {
	u := f.urls[s]
	for len(u) > 0 && u[len(u)-1] == '/' {
		u = u[:len(u)-1]
	}
	return u + pusher.AppPath(f.p.Key) + "?protocol=" + strconv.Itoa(pusher.ProtocolVersion)
}

// Connect opens subscriber i on its server, waits for
// connection_established, subscribes to its channel and waits for
// subscription_succeeded.
func (f *fanout) Connect(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	opts := wsconn.Options{}
	if f.onLoops() {
		opts = subscriberDialOptions
	}
	c, err := wsconn.Dial(ctx, f.wsURL(f.server(i)), opts)
	if err != nil {
		return err
	}
	dl, _ := ctx.Deadline()
	c.SetReadDeadline(dl)
	ch := f.channels[f.channel(i)]
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
			f.live[f.server(i)*len(f.channels)+f.channel(i)].Add(1)
			f.connsPer[f.server(i)]++
		}
	}
	f.windowStart = w.Start
	if f.p.SplitAt > 0 {
		f.splitNs = w.Start + int64(f.p.SplitAt*float64(w.End-w.Start))
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
	for i, c := range f.conns {
		if c == nil || f.onLoops() {
			continue
		}
		rec := load.NewRecorder(true, false)
		recs = append(recs, rec)
		t := f.newTally()
		wg.Add(1)
		go func() {
			defer wg.Done()
			stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })
			defer stop()
			f.subscribe(ctx, c, i, w, rec, t)
		}()
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

// subscribe reads subscriber i's deliveries until the grace (plus the
// late margin) ends.
func (f *fanout) subscribe(ctx context.Context, c *wsconn.Conn, i int, w load.Window, rec *load.Recorder, t *tally) {
	var pong []byte
	c.SetReadDeadline(load.MonoTime(w.Drain + int64(fanoutLate)))
	srv := f.server(i)
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			f.lost(ctx, i, err, w, rec, t)
			return
		}
		if f.deliver(msg, load.Mono(), w, rec, t, srv) {
			// Answer the server's keep-alive; this goroutine is the only
			// writer once subscribed.
			pong = pusher.AppendPong(pong[:0])
			if err := c.WriteMessage(wsconn.OpText, pong); err != nil && ctx.Err() == nil {
				rec.Error(load.Reason(err))
			}
		}
	}
}

// lost counts subscriber i's end: from now on no event is owed to it;
// and an error, and dropped inside the window (by its server), unless it
// is the read deadline after the grace (the end of the run) or the run
// was interrupted.
func (f *fanout) lost(ctx context.Context, i int, err error, w load.Window, rec *load.Recorder, t *tally) {
	if !f.gone[i].Swap(true) {
		f.live[f.server(i)*len(f.channels)+f.channel(i)].Add(-1)
	}
	if ctx.Err() != nil || err == nil {
		return
	}
	now := load.Mono()
	if r := load.Reason(err); r != "timeout" || now < w.Drain {
		rec.Error(r)
		if now < w.End {
			rec.Dropped++
			t.dropped[f.server(i)]++
		}
	}
}

// deliver accounts one message a subscriber of server srv received at
// now: our events published inside the window are delivered (or late,
// after the grace); anything else is skipped. It reports whether msg was
// a pusher:ping.
func (f *fanout) deliver(msg []byte, now int64, w load.Window, rec *load.Recorder, t *tally, srv int) (ping bool) {
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
	t.delivered[srv][f.phase(ts)]++
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
	if f.splitNs > 0 {
		fs.SplitAtNs = f.splitNs - f.windowStart
	}
	split := make([][2]load.Delivery, len(f.urls))
	for s, u := range f.urls {
		fs.Servers = append(fs.Servers, ServerCount{URL: u, Connections: f.connsPer[s]})
	}
	pubLat := load.NewHistogram()
	for _, p := range f.pubs {
		for _, w := range p.workers {
			fs.EventsPublished += w.events
			fs.RateLimited429 += w.rateLimited
			for k, v := range w.httpFailures {
				fs.HTTPFailures[k] += v
			}
			pubLat.Merge(w.publishLatency)
			for s := range fs.Servers {
				fs.Servers[s].Publishes += w.publishes[s]
				fs.Servers[s].PublishFailures += w.failures[s]
				for ph := range 2 {
					split[s][ph].Expected += w.expected[s][ph]
					fs.DeliveriesExpected += w.expected[s][ph]
				}
			}
		}
	}
	for _, t := range f.tallies {
		for s := range fs.Servers {
			fs.Servers[s].Dropped += t.dropped[s]
			for ph := range 2 {
				split[s][ph].Delivered += t.delivered[s][ph]
			}
		}
	}
	for s := range fs.Servers {
		sv := &fs.Servers[s]
		b, a := split[s][0], split[s][1]
		sv.Delivery = load.Delivery{Expected: b.Expected + a.Expected, Delivered: b.Delivered + a.Delivered}
		sv.SetPct()
		if f.splitNs > 0 {
			b.SetPct()
			a.SetPct()
			sv.Before, sv.After = &b, &a
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
