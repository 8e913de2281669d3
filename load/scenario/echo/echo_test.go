package echo

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/evloop"

	"github.com/gorilla/websocket"
)

// echoServer is a real gorilla echo server on a kernel-chosen loopback
// port. onMessage, when set, runs before each echo (a test stalls there).
type echoServer struct {
	URL         string
	upgrades    atomic.Int64
	mu          sync.Mutex
	lastUpgrade time.Time
	onMessage   func()
	onConn      func(*websocket.Conn) bool // per message; false ends the connection
}

func startEchoServer(t *testing.T, onMessage func()) *echoServer {
	t.Helper()
	es := &echoServer{onMessage: onMessage}
	up := websocket.Upgrader{ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Before the 101 goes out, so it is never later than the moment
		// the client sees its connection open.
		es.mu.Lock()
		es.lastUpgrade = time.Now()
		es.mu.Unlock()
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		es.upgrades.Add(1)
		for {
			op, p, err := c.ReadMessage()
			if err != nil {
				return
			}
			if es.onMessage != nil {
				es.onMessage()
			}
			if es.onConn != nil && !es.onConn(c) {
				return
			}
			if err := c.WriteMessage(op, p); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	es.URL = "ws" + strings.TrimPrefix(srv.URL, "http") + "/echo"
	return es
}

func testConfig(url string) load.Config {
	c := load.DefaultConfig()
	c.URL = url
	c.Connections = 4
	c.Batch = 5
	c.RecordSize = 64
	c.DurationNs = int64(time.Second)
	c.WarmupNs = int64(200 * time.Millisecond)
	c.Params = &Params{IO: DefaultIO}
	return c
}

// ep is the config's echo Params.
func ep(c *load.Config) *Params { return c.Params.(*Params) }

// recordedParams are the params a run's document recorded.
func recordedParams(t *testing.T, c load.RecordedConfig) Params {
	t.Helper()
	var p Params
	if err := json.Unmarshal(c.Params, &p); err != nil {
		t.Fatalf("config.params %s: %v", c.Params, err)
	}
	return p
}

func TestEchoClosedLoop(t *testing.T) {
	es := startEchoServer(t, nil)
	cfg := testConfig(es.URL)
	cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
	if err := os.WriteFile(cfg.MeasureMarker, nil, 0o644); err != nil { // stale, from an earlier run
		t.Fatal(err)
	}
	// Watch as the harness does: the marker must go away, then appear
	// only after every connection is open and the warm-up has ended.
	appeared := make(chan time.Time, 1)
	stopWatch := make(chan struct{})
	go func() {
		gone := false
		for {
			select {
			case <-stopWatch:
				close(appeared)
				return
			case <-time.After(time.Millisecond):
			}
			_, err := os.Stat(cfg.MeasureMarker)
			if err != nil {
				gone = true
			} else if gone {
				appeared <- time.Now()
				return
			}
		}
	}()
	res, err := load.Run(context.Background(), cfg, load.Options{Version: "test", Command: []string{"x"}})
	close(stopWatch)
	if err != nil {
		t.Fatal(err)
	}
	seen, ok := <-appeared
	es.mu.Lock()
	if !ok || seen.Before(es.lastUpgrade.Add(time.Duration(cfg.WarmupNs))) {
		t.Errorf("marker seen at %v (ok %v), before the last upgrade + warm-up %v", seen, ok, es.lastUpgrade.Add(time.Duration(cfg.WarmupNs)))
	}
	es.mu.Unlock()
	s := res.Summary
	if s.Errors != 0 || len(s.ErrorsByReason) != 0 {
		t.Fatalf("errors: %d %v", s.Errors, s.ErrorsByReason)
	}
	if s.Scenario != "echo" || s.Mode != "closed" || s.RequestedOpsPerS != nil {
		t.Fatalf("scenario/mode %q %q requested %v", s.Scenario, s.Mode, s.RequestedOpsPerS)
	}
	if s.ConnectionsOpen != 4 || s.ConnectionsRequested != 4 || es.upgrades.Load() != 4 {
		t.Fatalf("connections open %d requested %d upgrades %d", s.ConnectionsOpen, s.ConnectionsRequested, es.upgrades.Load())
	}
	if s.Messages == 0 || s.Messages%5 != 0 {
		t.Fatalf("messages %d: want a positive multiple of the batch", s.Messages)
	}
	if s.Latency.Count != s.Messages {
		t.Fatalf("latency count %d != messages %d", s.Latency.Count, s.Messages)
	}
	if s.MeasuredNs != cfg.DurationNs {
		t.Fatalf("measured %d, want %d", s.MeasuredNs, cfg.DurationNs)
	}
	wantTput := float64(s.Messages) / 1.0
	if s.ThroughputPerS != wantTput || s.BytesPerS != wantTput*64 {
		t.Fatalf("throughput %v bytes %v, want %v and %v", s.ThroughputPerS, s.BytesPerS, wantTput, wantTput*64)
	}
	l := s.Latency
	if !(0 < l.Min && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Fatalf("latency not ordered: %+v", l)
	}
	checkTimeline(t, s, cfg)
	if s.Dropped == nil || *s.Dropped != 0 || s.Reconnects == nil || *s.Reconnects != 0 || s.Saturated {
		t.Fatalf("dropped %v reconnects %v saturated %v", s.Dropped, s.Reconnects, s.Saturated)
	}
	g := res.Generator
	if g.CPUCores <= 0 || g.ReadSyscalls <= 0 || g.MessagesPerRead <= 0 || g.ScheduleLag.Count != 0 {
		t.Fatalf("generator stats: %+v", g)
	}
	if res.Meta.Version != "test" || res.Meta.Hardware.LogicalCPUs < 1 || res.Meta.Hardware.GOMAXPROCS < 1 || len(res.Meta.Hardware.CPUAffinity) < 1 || res.Meta.GitRef == "" {
		t.Fatalf("meta: %+v", res.Meta)
	}
	// The marker appears only after every connection is open and the
	// warm-up has ended.
	fi, err := os.Stat(cfg.MeasureMarker)
	if err != nil {
		t.Fatalf("marker: %v", err)
	}
	es.mu.Lock()
	last := es.lastUpgrade
	es.mu.Unlock()
	// File times come from the kernel's coarse clock (a jiffy, up to
	// 10 ms), hence the tolerance; a marker made at connect time would be
	// the whole 200 ms warm-up early.
	if early := last.Add(time.Duration(cfg.WarmupNs)).Sub(fi.ModTime()); early > 15*time.Millisecond {
		t.Fatalf("marker created %v before the last upgrade + warm-up", early)
	}
}

// ioModes are the I/O modes this build runs.
func ioModes() []string {
	if evloop.Supported {
		return []string{IOLoop, IOGoroutines}
	}
	return []string{IOGoroutines}
}

func TestEchoOpenLoopMeetsRate(t *testing.T) {
	for _, io := range ioModes() {
		t.Run(io, func(t *testing.T) { testOpenLoopMeetsRate(t, io) })
	}
}

func testOpenLoopMeetsRate(t *testing.T, io string) {
	es := startEchoServer(t, nil)
	cfg := testConfig(es.URL)
	cfg.Rate = 200 // batches per second, in total
	ep(&cfg).IO = io
	res, err := load.Run(context.Background(), cfg, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Generator.Engine != io || (res.Generator.Loops != nil) != (io == IOLoop) {
		t.Fatalf("engine %q loops %+v", res.Generator.Engine, res.Generator.Loops)
	}
	s := res.Summary
	if s.Errors != 0 || s.Mode != "open" || s.RequestedOpsPerS == nil || *s.RequestedOpsPerS != 200 {
		t.Fatalf("summary: %+v", s)
	}
	// The schedule decides the count, not the server: 200/s over exactly
	// 1 s is 200 batches, give or take the phase of each connection.
	ops := s.AchievedOpsPerS * float64(s.MeasuredNs) / 1e9
	if ops < 196 || ops > 204 {
		t.Fatalf("ops in window %v, want 200±4", ops)
	}
	if s.Messages != int64(ops+0.5)*5 {
		t.Fatalf("messages %d for %v batches of 5", s.Messages, ops)
	}
	g := res.Generator
	if g.ScheduleLag.Count != int64(ops+0.5) || g.ScheduleLagP99 != g.ScheduleLag.P99 {
		t.Fatalf("schedule lag: %+v", g.ScheduleLag)
	}
}

// A connection the server cuts inside the window is counted in errors and
// in dropped; the other connections carry on, and nothing reconnects.
func TestEchoDroppedConnection(t *testing.T) {
	es := startEchoServer(t, nil)
	cfg := testConfig(es.URL)
	cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
	var cut atomic.Bool
	es.onConn = func(c *websocket.Conn) bool {
		if _, err := os.Stat(cfg.MeasureMarker); err == nil && cut.CompareAndSwap(false, true) {
			c.NetConn().Close() // abrupt: no close frame
			return false
		}
		return true
	}
	res, err := load.Run(context.Background(), cfg, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if *s.Dropped != 1 || s.Errors != 1 || *s.Reconnects != 0 {
		t.Fatalf("dropped %d errors %d %v reconnects %d", *s.Dropped, s.Errors, s.ErrorsByReason, *s.Reconnects)
	}
	if s.Messages == 0 || s.ConnectionsOpen != 4 {
		t.Fatalf("the other connections stopped too: %+v", s)
	}
}

func TestEchoOpenLoopDroppedCountedOnce(t *testing.T) {
	for _, io := range ioModes() {
		t.Run(io, func(t *testing.T) { testOpenLoopDroppedCountedOnce(t, io) })
	}
}

func testOpenLoopDroppedCountedOnce(t *testing.T, io string) {
	es := startEchoServer(t, nil)
	cfg := testConfig(es.URL)
	cfg.Rate = 400
	ep(&cfg).IO = io
	cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
	var cut atomic.Bool
	es.onConn = func(c *websocket.Conn) bool {
		if _, err := os.Stat(cfg.MeasureMarker); err == nil && cut.CompareAndSwap(false, true) {
			c.NetConn().Close()
			return false
		}
		return true
	}
	res, err := load.Run(context.Background(), cfg, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; *s.Dropped != 1 || s.Errors < 1 {
		t.Fatalf("dropped %d errors %d %v", *s.Dropped, s.Errors, s.ErrorsByReason)
	}
}

// The generator reports its client pattern as it ran.
func TestIOPattern(t *testing.T) {
	for _, tc := range []struct {
		batch int
		rate  float64
		eager bool
		busy  bool
		want  string
	}{
		{10, 0, false, false, load.IOBatchWake},
		{10, 0, true, false, load.IOEager},
		{1, 0, false, false, load.IOEager}, // one reply: nothing to wait for
		{10, 100, false, false, load.IOEager},
		{10, 0, false, true, load.IOBatchWake + ", busy-poll"},
	} {
		cfg := &load.Config{Batch: tc.batch, Rate: tc.rate}
		e := &echo{cfg: cfg, p: &Params{IO: IOLoop, EagerReads: tc.eager, BusyPoll: tc.busy}}
		if got := e.IOPattern(); got != tc.want {
			t.Errorf("batch %d rate %v eager %v busy-poll %v: %q, want %q", tc.batch, tc.rate, tc.eager, tc.busy, got, tc.want)
		}
	}
}

// checkTimeline: the summary's timeline spans the warm-up and the window
// in ticks, counts whole batches, and holds at least the window's
// messages (it counts the warm-up's replies too, by completion).
func checkTimeline(t *testing.T, s load.Summary, cfg load.Config) {
	t.Helper()
	tl := s.Timeline
	if tl == nil {
		t.Fatal("no timeline")
	}
	tick := int64(load.TimelineTick)
	if tl.TickNs != tick || tl.StartTick != int(cfg.WarmupNs/tick) || tl.EndTick != int((cfg.WarmupNs+cfg.DurationNs)/tick) || len(tl.Counts) <= tl.EndTick {
		t.Fatalf("timeline %+v for a warm-up of %d ns and a window of %d ns", tl, cfg.WarmupNs, cfg.DurationNs)
	}
	var sum int64
	for i, c := range tl.Counts {
		if c < 0 || c%int64(cfg.Batch) != 0 {
			t.Fatalf("tick %d counts %d, not whole batches of %d", i, c, cfg.Batch)
		}
		sum += c
	}
	if sum < s.Messages {
		t.Errorf("the timeline counts %d replies, fewer than the window's %d messages", sum, s.Messages)
	}
}
