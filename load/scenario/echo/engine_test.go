package echo

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// stallOnce returns an onMessage hook that sleeps stall once, on the
// second message after the measure marker appeared: inside the window,
// whatever connecting and the warm-up took on a busy machine. Not the
// first: that one may have been sent in the warm-up and only reached the
// server after the marker (on a loaded machine it did, and a closed loop
// then charged the stall to a warm-up operation); with one connection in
// a closed loop, the second was sent after the first's answer, inside
// the window.
func stallOnce(marker string, stall time.Duration) func() {
	var seen atomic.Int64
	return func() {
		if seen.Load() >= 2 {
			return
		}
		if _, err := os.Stat(marker); err == nil && seen.Add(1) == 2 {
			time.Sleep(stall)
		}
	}
}

// A server that stalls once: the open loop keeps scheduling through the
// stall and charges every operation that queued behind it from its
// scheduled time, so the stall reaches p99; the closed loop stops sending
// during the stall, so it appears as a single slow sample and p99 stays
// low: coordinated omission, shown.
func TestOpenLoopShowsStallClosedLoopHidesIt(t *testing.T) {
	const stall = 300 * time.Millisecond
	run := func(rate float64) load.Summary {
		t.Helper()
		es := startEchoServer(t, nil)
		cfg := testConfig(es.URL)
		cfg.Connections, cfg.Batch = 1, 1
		cfg.DurationNs = int64(1500 * time.Millisecond)
		cfg.Rate = rate
		cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
		es.onMessage = stallOnce(cfg.MeasureMarker, stall)
		res, err := load.Run(context.Background(), cfg, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.Errors != 0 {
			t.Fatalf("errors: %v", res.Summary.ErrorsByReason)
		}
		return res.Summary
	}
	open := run(200)
	if open.Latency.Max < int64(stall) || open.Latency.P99 < int64(stall)*9/10 {
		t.Errorf("open loop: p99 %v max %v, want the %v stall in p99", time.Duration(open.Latency.P99), time.Duration(open.Latency.Max), stall)
	}
	// ~60 operations were scheduled during the stall: every one is slow.
	closed := run(0)
	if closed.Latency.Max < int64(stall) {
		t.Errorf("closed loop: max %v, the stall is missing entirely", time.Duration(closed.Latency.Max))
	}
	if closed.Latency.P99 >= int64(stall)/2 {
		t.Errorf("closed loop: p99 %v; expected the stall to hide in one sample out of %d", time.Duration(closed.Latency.P99), closed.Latency.Count)
	}
}

// When the server stops answering, the writer hits --max-inflight, waits,
// and the run says it is saturated instead of pretending the rate was met.
func TestOpenLoopSaturatesAtMaxInflight(t *testing.T) {
	for _, io := range ioModes() {
		t.Run(io, func(t *testing.T) { testOpenLoopSaturatesAtMaxInflight(t, io) })
	}
}

func testOpenLoopSaturatesAtMaxInflight(t *testing.T, io string) {
	es := startEchoServer(t, nil)
	cfg := testConfig(es.URL)
	ep(&cfg).IO = io
	cfg.Connections, cfg.Batch = 1, 1
	cfg.Rate, cfg.MaxInflight = 200, 4
	cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
	es.onMessage = stallOnce(cfg.MeasureMarker, 400*time.Millisecond)
	res, err := load.Run(context.Background(), cfg, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if !s.Saturated || s.SaturatedReason == "" {
		t.Fatalf("not saturated: %+v", s)
	}
	g := res.Generator
	if g.ScheduleLag.Max < int64(300*time.Millisecond) || g.LateSendsFrac <= 0 {
		t.Fatalf("the wait does not show in the schedule lag: %+v late %v", g.ScheduleLag, g.LateSendsFrac)
	}
}

// The open loop (clock, writer, reader, channels) allocates nothing per
// operation: over a run of 2,000 operations the whole process allocates
// only its fixed setup.
func TestEchoOpenLoopAllocatesNothingPerOperation(t *testing.T) {
	for _, io := range ioModes() {
		t.Run(io, func(t *testing.T) { testOpenLoopAllocatesNothingPerOperation(t, io) })
	}
}

func testOpenLoopAllocatesNothingPerOperation(t *testing.T, io string) {
	url := startRawEchoServer(t)
	cfg := testConfig(url)
	ep(&cfg).IO = io
	cfg.Connections, cfg.Batch, cfg.Rate = 2, 1, 4000
	cfg.DurationNs, cfg.WarmupNs = int64(500*time.Millisecond), 0
	pool, _ := payload.New(payload.Constant, 0, cfg.RecordSize, 100)
	e := newEcho(&cfg, cfg.Params.(*Params), pool)
	for i := 0; i < cfg.Connections; i++ {
		if err := e.Connect(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { e.Finish(&load.Result{}, nil) })
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs := e.Load(context.Background(), load.NewWindow(load.Mono(), &cfg, int64(time.Second)))
	runtime.ReadMemStats(&after)
	var msgs int64
	for _, r := range recs {
		msgs += r.Messages
	}
	mallocs := int64(after.Mallocs - before.Mallocs)
	if msgs < 1900 {
		t.Fatalf("only %d messages", msgs)
	}
	if mallocs > msgs/5 {
		t.Fatalf("%d allocations for %d operations: something allocates per operation", mallocs, msgs)
	}
	t.Logf("%d allocations in all for %d operations", mallocs, msgs)
}

// The echo hot path (frame a batch, one write, read and record every
// reply) allocates nothing per message once warm.
func TestEchoHotPathDoesNotAllocate(t *testing.T) {
	url := startRawEchoServer(t)
	cfg := testConfig(url)
	cfg.Batch = 10
	pool, err := payload.New(payload.JSON, 1, 256, 100)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RecordSize = 256
	e := newEcho(&cfg, cfg.Params.(*Params), pool)
	c, err := wsconn.Dial(context.Background(), url, wsconn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rec := load.NewRecorder(true, true)
	w := load.Window{Start: 0, End: 1 << 62, Drain: 1 << 62}
	buf := make([]byte, 0, cfg.Batch*(cfg.RecordSize+14))
	next := 0
	ctx := context.Background()
	op := func() {
		buf = e.frameBatch(c, buf, &next)
		t0 := load.Mono()
		if err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
		c.ExpectBytes(cfg.Batch * wsconn.ServerFrameSize(cfg.RecordSize))
		if !e.readBatch(ctx, c, t0, true, w, rec) {
			t.Fatal("read failed")
		}
		rec.Lag.Record(load.Mono() - t0)
	}
	op()
	if a := testing.AllocsPerRun(200, op); a != 0 {
		t.Fatalf("%v allocations per batch of %d", a, cfg.Batch)
	}
	if rec.Messages != 202*10 || rec.TotalErrors() != 0 {
		t.Fatalf("messages %d errors %v", rec.Messages, rec.Errors)
	}
}
