package fanout

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/ceiling-bench/ceiling/load"

	"github.com/ceiling-bench/ceiling/load/pusherclient"
	"github.com/ceiling-bench/ceiling/pusher"
)

// publisher is one of --publishers. Closed loop: publish, await the HTTP
// answer, publish. Open loop: a scheduler hands due times to workers, each
// running one request at a time; a worker is started when none is free, up
// to --max-inflight, and reaching that cap saturates the run. Each worker
// owns its counters, so nothing is shared while running.
type publisher struct {
	f       *fanout
	id      int
	recs    []*load.Recorder
	workers []*pubWorker
}

type pubWorker struct {
	rec            *load.Recorder // ops, lag, errors
	publishLatency *load.Histogram
	events         int64
	expected       [][2]int64 // by server, before and after the split
	publishes      []int64    // accepted, by the server that took them
	failures       []int64
	scratch        [][2]int64 // one request's expected, by server
	rateLimited    int64
	httpFailures   map[string]int64
	reqEvents      []pusher.Event // reused request
	data           []byte
	next           int   // pool position
	seq            int64 // last sequence number used
	index          int   // among its publisher's workers
}

func newPublisher(f *fanout, id int) *publisher { return &publisher{f: f, id: id} }

func (p *publisher) newWorker() *pubWorker {
	n := len(p.f.urls)
	w := &pubWorker{
		rec:            load.NewRecorder(false, p.f.cfg.OpenLoop()),
		publishLatency: load.NewHistogram(),
		expected:       make([][2]int64, n),
		publishes:      make([]int64, n),
		failures:       make([]int64, n),
		scratch:        make([][2]int64, n),
		reqEvents:      make([]pusher.Event, p.f.cfg.Batch),
		next:           p.f.pool.Start(p.id*p.f.cfg.MaxInflight+len(p.workers), p.f.cfg.Batch),
		// Sequence numbers never collide: publisher and worker in the top bits.
		seq:   int64(p.id)<<44 | int64(len(p.workers))<<32,
		index: len(p.workers),
	}
	p.recs = append(p.recs, w.rec)
	p.workers = append(p.workers, w)
	return w
}

func (p *publisher) run(ctx context.Context, w load.Window, wake <-chan struct{}) {
	if p.f.cfg.OpenLoop() {
		p.openLoop(ctx, w, wake)
		return
	}
	wk := p.newWorker()
	var k int64
	for ctx.Err() == nil {
		t := load.Mono()
		if t >= w.End {
			return
		}
		p.publish(ctx, wk, t, w, k)
		k++
	}
}

func (p *publisher) openLoop(ctx context.Context, w load.Window, wake <-chan struct{}) {
	pacer := load.ConnectionPacer(p.f.cfg.Rate, p.f.p.Publishers, p.id)
	interval := pacer.Interval()
	jobs := make(chan int64)
	var wg sync.WaitGroup
	defer func() { close(jobs); wg.Wait() }()
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { close(done) })
	defer stop()
	start := func() {
		wk := p.newWorker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var k int64
			for sched := range jobs {
				if w.In(sched) {
					lag := load.Mono() - sched
					wk.rec.Lag.Record(lag)
					if lag > interval {
						wk.rec.LateSends++
					}
				}
				p.publish(ctx, wk, sched, w, k)
				k++
			}
		}()
	}
	start()
	saturated := ""
	for k := int64(0); ; k++ {
		sched := w.Open + pacer.Due(k)
		if sched >= w.End || !load.WaitDue(sched, wake, done) {
			break
		}
		select {
		case jobs <- sched:
			continue
		default:
		}
		if len(p.workers) < p.f.cfg.MaxInflight {
			start()
		} else if w.In(sched) && saturated == "" {
			saturated = fmt.Sprintf("publisher %d reached --max-inflight %d requests: the requested rate was not met", p.id, p.f.cfg.MaxInflight)
			p.workers[0].rec.SaturatedReason = saturated // read only after wg.Wait
		}
		select {
		case jobs <- sched:
		case <-done:
			return
		}
	}
}

// publish sends one request of --batch events stamped with ts (the send
// time in the closed loop, the scheduled time in the open loop) through
// the next server in turn (publisher id + worker + k, mod N), and counts
// it when ts is inside the window. Each event is owed to its channel's
// subscribers connected, on every server, as it is sent.
func (p *publisher) publish(ctx context.Context, wk *pubWorker, ts int64, w load.Window, k int64) {
	f := p.f
	cfg := f.cfg
	nch := len(f.channels)
	via := int((int64(p.id) + int64(wk.index) + k) % int64(len(f.urls)))
	ph := f.phase(ts)
	for s := range wk.scratch {
		wk.scratch[s][ph] = 0
	}
	for j := range wk.reqEvents {
		ch := int((int64(p.id) + (k*int64(cfg.Batch)+int64(j))*int64(f.p.Publishers)) % int64(nch))
		for s := range wk.scratch {
			wk.scratch[s][ph] += f.live[s*nch+ch].Load()
		}
		wk.data = appendEventData(wk.data[:0], ts, wk.nextSeq(), f.pool.Value(wk.next), f.pool.Mode())
		wk.next++
		wk.reqEvents[j] = pusher.Event{Name: fanoutEvent, Channel: f.channels[ch], Data: string(wk.data)}
	}
	rctx, cancel := context.WithDeadline(ctx, load.MonoTime(w.Drain))
	var err error
	if cfg.Batch == 1 {
		err = f.clients[via].Trigger(rctx, wk.reqEvents[0])
	} else {
		err = f.clients[via].TriggerBatch(rctx, wk.reqEvents)
	}
	cancel()
	now := load.Mono()
	if !w.In(ts) || ctx.Err() != nil {
		return
	}
	wk.rec.Ops++ // attempted; OK below only when the server accepted it
	if err != nil {
		r := pusherclient.Reason(err)
		if r == "status_429" {
			wk.rateLimited++
		}
		if wk.httpFailures == nil {
			wk.httpFailures = map[string]int64{}
		}
		wk.httpFailures[r]++
		wk.failures[via]++
		wk.rec.Error("publish_" + r)
		return
	}
	wk.rec.OK++
	wk.publishLatency.Record(now - ts)
	wk.events += int64(cfg.Batch)
	wk.publishes[via]++
	for s := range wk.scratch {
		wk.expected[s][ph] += wk.scratch[s][ph]
	}
}

func (wk *pubWorker) nextSeq() int64 {
	wk.seq++
	return wk.seq
}

// appendEventData builds an event's data: our timestamp and sequence
// first (so a scan finds them before any field of the payload), then the
// payload value, raw for json and as a string for constant.
func appendEventData(b []byte, ts, seq int64, value []byte, mode string) []byte {
	b = append(b, `{"ceiling_ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"ceiling_seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"payload":`...)
	if mode == "json" {
		b = append(b, value...)
	} else {
		b = append(b, '"')
		b = append(b, value...)
		b = append(b, '"')
	}
	return append(b, '}')
}
