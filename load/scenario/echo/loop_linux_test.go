package echo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"

	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

// startRefserver runs the bundled server in-process and returns its echo
// URL.
func startRefserver(t *testing.T) string { return refservertest.Start(t, refserver.Config{}).EchoURL() }

// Every reply of every measured batch is accounted for, at small and
// large batches, with connections that do not divide evenly over the
// event loops.
func TestLoopAgainstRefserver(t *testing.T) {
	url := startRefserver(t)
	for _, tc := range []struct {
		batch, conns int
		eager        bool
	}{{1, 3, false}, {10, 4, false}, {10, 4, true}, {100, 5, false}} {
		cfg := testConfig(url)
		ep(&cfg).IO, ep(&cfg).EagerReads = IOLoop, tc.eager
		cfg.Batch, cfg.Connections = tc.batch, tc.conns
		res, err := load.Run(context.Background(), cfg, load.Options{})
		if err != nil {
			t.Fatalf("batch %d: %v", tc.batch, err)
		}
		s, g := res.Summary, res.Generator
		if s.Errors != 0 || *s.Dropped != 0 {
			t.Fatalf("batch %d: errors %d %v dropped %d", tc.batch, s.Errors, s.ErrorsByReason, *s.Dropped)
		}
		if s.Messages == 0 || s.Messages%int64(tc.batch) != 0 || s.Latency.Count != s.Messages {
			t.Fatalf("batch %d: messages %d latency count %d", tc.batch, s.Messages, s.Latency.Count)
		}
		if ops := int64(s.AchievedOpsPerS*float64(s.MeasuredNs)/1e9 + 0.5); ops*int64(tc.batch) != s.Messages {
			t.Fatalf("batch %d: %d ops for %d messages", tc.batch, ops, s.Messages)
		}
		if s.BytesPerS != s.ThroughputPerS*64 || s.ConnectionsOpen != tc.conns {
			t.Fatalf("batch %d: summary %+v", tc.batch, s)
		}
		if l := s.Latency; !(0 < l.Min && l.Min <= l.P50 && l.P50 <= l.P99 && l.P99 <= l.Max) {
			t.Fatalf("batch %d: latency %+v", tc.batch, l)
		}
		checkTimeline(t, s, cfg)
		if io := recordedParams(t, res.Config).IO; g.ReadSyscalls <= 0 || g.MessagesPerRead <= 0 || io != IOLoop {
			t.Fatalf("batch %d: generator %+v io %q", tc.batch, g, io)
		}
		if l := g.Loops; g.Engine != load.EngineLoop || l == nil || l.Count != min(runtime.GOMAXPROCS(0), tc.conns) ||
			len(l.BusyFraction) != l.Count || l.MaxBusy <= 0 || l.MaxBusy > 1 || l.LagMaxNs < l.LagP99Ns || l.LagP99Ns <= 0 {
			t.Fatalf("batch %d: engine %q loops %+v", tc.batch, g.Engine, g.Loops)
		}
		// Waking once per batch reads about once per batch; a server
		// that writes each echo on its own makes eager reads read more.
		if !tc.eager && tc.batch > 1 && g.MessagesPerRead < float64(tc.batch)/2 {
			t.Errorf("batch %d: %.2f messages per read, want about %d (SO_RCVLOWAT)", tc.batch, g.MessagesPerRead, tc.batch)
		}
	}
}

// endOneInWindow makes the server end one connection with end once the
// measure marker exists (inside the window).
func endOneInWindow(es *echoServer, marker string, end func(*websocket.Conn)) {
	var cut atomic.Bool
	es.onConn = func(c *websocket.Conn) bool {
		if _, err := os.Stat(marker); err == nil && cut.CompareAndSwap(false, true) {
			end(c)
			return false
		}
		return true
	}
}

// A connection cut inside the window counts as the goroutine loop counts
// it: one error, one dropped; the others carry on.
func TestLoopDroppedConnection(t *testing.T) {
	es := startEchoServer(t, nil)
	cfg := testConfig(es.URL)
	ep(&cfg).IO = IOLoop
	cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
	endOneInWindow(es, cfg.MeasureMarker, func(c *websocket.Conn) {
		c.NetConn().Close() // abrupt: no close frame
	})
	res, err := load.Run(context.Background(), cfg, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if *s.Dropped != 1 || s.Errors != 1 || s.ErrorsByReason["EOF"]+s.ErrorsByReason["ECONNRESET"] != 1 {
		t.Fatalf("dropped %d errors %d %v", *s.Dropped, s.Errors, s.ErrorsByReason)
	}
	if s.Messages == 0 || s.Latency.Count != s.Messages {
		t.Fatalf("the other connections stopped too: %+v", s)
	}
}

// A server that closes with a close frame: counted by its code, and the
// event loop answers the close.
func TestLoopServerCloseFrame(t *testing.T) {
	es := startEchoServer(t, nil)
	cfg := testConfig(es.URL)
	ep(&cfg).IO = IOLoop
	cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
	endOneInWindow(es, cfg.MeasureMarker, func(c *websocket.Conn) {
		c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "bye"))
	})
	res, err := load.Run(context.Background(), cfg, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; *s.Dropped != 1 || s.Errors != 1 || s.ErrorsByReason["close_4001"] != 1 {
		t.Fatalf("dropped %d errors %d %v", *s.Dropped, s.Errors, s.ErrorsByReason)
	}
}

// A fixed amount of work: the server answers the first 40 messages of
// every connection and then stalls past the drain. Both modes must count
// exactly the same (every answered message, every batch, one
// no_reply_by_drain per connection, nothing dropped) and neither hangs.
func TestLoopAgreesWithGoroutines(t *testing.T) {
	const conns, batch, answered = 3, 5, 40
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	es := startEchoServer(t, nil)
	counts := map[*websocket.Conn]int{}
	es.onConn = func(c *websocket.Conn) bool {
		es.mu.Lock()
		counts[c]++
		n := counts[c]
		es.mu.Unlock()
		if n > answered {
			<-release // stall beyond the drain, until the test ends
			return false
		}
		return true
	}
	type got struct {
		Messages, Ops, Latency, Dropped int64
		Errors                          map[string]int64
	}
	run := func(io string) got {
		cfg := testConfig(es.URL)
		ep(&cfg).IO, cfg.Connections, cfg.Batch = io, conns, batch
		cfg.WarmupNs, cfg.DurationNs = 0, int64(time.Second) // the 8 round trips fit however loaded the machine
		res, err := load.Run(context.Background(), cfg, load.Options{})
		if err != nil {
			t.Fatalf("%s: %v", io, err)
		}
		s := res.Summary
		return got{s.Messages, int64(s.AchievedOpsPerS*float64(s.MeasuredNs)/1e9 + 0.5), s.Latency.Count, *s.Dropped, s.ErrorsByReason}
	}
	want := got{conns * answered, conns * answered / batch, conns * answered, 0, map[string]int64{"no_reply_by_drain": conns}}
	for _, io := range []string{IOGoroutines, IOLoop} {
		if diff := cmp.Diff(want, run(io)); diff != "" {
			t.Errorf("--io %s (-want +got):\n%s", io, diff)
		}
	}
}

// Cancelling the run stops the event loops at once: the window is cut short.
func TestLoopStopsOnCancel(t *testing.T) {
	url := startRefserver(t)
	cfg := testConfig(url)
	ep(&cfg).IO = IOLoop
	cfg.DurationNs = int64(time.Minute)
	cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(cfg.MeasureMarker); err == nil {
				time.Sleep(200 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res, err := load.Run(ctx, cfg, load.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if s := res.Summary; s.MeasuredNs >= cfg.DurationNs || s.Errors != 0 || s.Messages == 0 {
		t.Fatalf("measured %v of %v, errors %d %v, messages %d", time.Duration(s.MeasuredNs), time.Duration(cfg.DurationNs), s.Errors, s.ErrorsByReason, s.Messages)
	}
}

// The event loops' run allocates a constant amount, nothing per message,
// closed and open loop: the allocation-free raw echo server keeps the
// count to the generator's.
func TestLoopNoAllocationPerMessage(t *testing.T) {
	url := startRawEchoServer(t)
	for _, rate := range []float64{0, 4000} {
		cfg := testConfig(url)
		cfg.Batch, cfg.Connections, cfg.Rate = 10, 2, rate
		pool, err := payload.New(payload.Constant, 1, cfg.RecordSize, 100)
		if err != nil {
			t.Fatal(err)
		}
		run := func() (allocs uint64, msgs int64) {
			e := newEcho(&cfg, ep(&cfg), pool)
			for i := range cfg.Connections {
				if err := e.Connect(context.Background(), i); err != nil {
					t.Fatal(err)
				}
			}
			defer e.Finish(&load.Result{}, nil)
			open := load.Mono()
			w := load.Window{Open: open, Start: open, End: open + int64(300*time.Millisecond), Drain: open + int64(2*time.Second)}
			var a, b runtime.MemStats
			runtime.ReadMemStats(&a)
			recs := e.Load(context.Background(), w)
			runtime.ReadMemStats(&b)
			for _, r := range recs {
				if r.TotalErrors() != 0 {
					t.Fatalf("rate %v: errors %v", rate, r.Errors)
				}
				msgs += r.Messages
			}
			return b.Mallocs - a.Mallocs, msgs
		}
		run() // warm-up
		allocs, msgs := run()
		if msgs < 2000 {
			t.Fatalf("rate %v: %d messages per run", rate, msgs)
		}
		if allocs*20 > uint64(msgs) {
			t.Fatalf("rate %v: %v allocations in a run of %d messages", rate, allocs, msgs)
		}
		t.Logf("rate %v: %v allocations in a run of %d messages", rate, allocs, msgs)
	}
}
