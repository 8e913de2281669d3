package load

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/google/go-cmp/cmp"
)

func TestConnectionPacerSpreadsConnections(t *testing.T) {
	// 4 connections sharing 1000 ops/s: each runs every 4 ms, shifted by
	// 1 ms, so together they fire every millisecond.
	var got []int64
	for k := int64(0); k < 2; k++ {
		for i := 0; i < 4; i++ {
			got = append(got, connectionPacer(1000, 4, i).Due(k))
		}
	}
	want := []int64{0, 1e6, 2e6, 3e6, 4e6, 5e6, 6e6, 7e6}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("due times (-want +got):\n%s", diff)
	}
	if iv := connectionPacer(1000, 4, 0).interval(); iv != 4e6 {
		t.Fatalf("interval %d, want 4 ms", iv)
	}
	// Computed from k, not accumulated: no drift after a million steps.
	p := ConstantPacer{IntervalNs: 1e9 / 3.0}
	if got, want := p.Due(3_000_000), int64(1e15); got != want {
		t.Fatalf("Due(3e6) = %d, want %d", got, want)
	}
	if got, want := connectionPacer(3, 1, 0).Due(3_000_000), int64(1e15); got != want {
		t.Fatalf("worker Due(3e6) = %d, want %d", got, want)
	}
	var f Pacer = PacerFunc(func(k int64) int64 { return k * 7 })
	if f.Due(3) != 21 {
		t.Fatal("PacerFunc does not call through")
	}
}

// stallOnce returns an onMessage hook that sleeps stall once, on the first
// message after the measure marker appeared: inside the window, whatever
// connecting and the warm-up took on a busy machine.
func stallOnce(marker string, stall time.Duration) func() {
	var done atomic.Bool
	return func() {
		if done.Load() {
			return
		}
		if _, err := os.Stat(marker); err == nil && done.CompareAndSwap(false, true) {
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
	run := func(rate float64) Summary {
		t.Helper()
		es := startEchoServer(t, nil)
		cfg := testConfig(es.URL)
		cfg.Connections, cfg.Batch = 1, 1
		cfg.DurationNs = int64(1500 * time.Millisecond)
		cfg.Rate = rate
		cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
		es.onMessage = stallOnce(cfg.MeasureMarker, stall)
		res, err := Run(context.Background(), cfg, Options{})
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
	es := startEchoServer(t, nil)
	cfg := testConfig(es.URL)
	cfg.Connections, cfg.Batch = 1, 1
	cfg.Rate, cfg.MaxInflight = 200, 4
	cfg.MeasureMarker = filepath.Join(t.TempDir(), "marker")
	es.onMessage = stallOnce(cfg.MeasureMarker, 400*time.Millisecond)
	res, err := Run(context.Background(), cfg, Options{})
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

func TestSleeperReusesItsTimer(t *testing.T) {
	var s sleeper
	done := make(chan struct{})
	s.until(mono()+1000, done) // creates the timer
	if a := testing.AllocsPerRun(20, func() { s.until(mono()+1000, done) }); a != 0 {
		t.Fatalf("%v allocations per wait", a)
	}
	close(done)
	if s.until(mono()+int64(time.Hour), done) {
		t.Fatal("until returned true after done closed")
	}
}

// The clock wakes worker j mod n for operation j at its due time, never
// before, and a worker behind schedule finds a token waiting.
func TestRunClockWakesEachWorkerOnSchedule(t *testing.T) {
	const rate, n = 2000.0, 4 // one operation every 500 µs
	wakes := make([]chan struct{}, n)
	for i := range wakes {
		wakes[i] = make(chan struct{}, 1)
	}
	open := mono()
	end := open + dueNs(40, rate) // 40 operations, 10 per worker
	go runClock(context.Background(), rate, open, end, wakes)
	done := make(chan struct{})
	for i := 0; i < n; i++ {
		p := connectionPacer(rate, n, i)
		for k := int64(0); k < 10; k++ {
			due := open + p.Due(k)
			if !waitDue(due, wakes[i], done) {
				t.Fatal("waitDue gave up")
			}
			if now := mono(); now < due {
				t.Fatalf("worker %d op %d released at %d, before its due time %d", i, k, now, due)
			}
		}
	}
}

// The open loop (clock, writer, reader, channels) allocates nothing per
// operation: over a run of 2,000 operations the whole process allocates
// only its fixed setup.
func TestEchoOpenLoopAllocatesNothingPerOperation(t *testing.T) {
	url := startRawEchoServer(t)
	cfg := testConfig(url)
	cfg.Connections, cfg.Batch, cfg.Rate = 2, 1, 4000
	cfg.DurationNs, cfg.WarmupNs = int64(500*time.Millisecond), 0
	pool, _ := payload.New(payload.Constant, 0, cfg.RecordSize, 100)
	e := newEcho(&cfg, pool)
	for i := 0; i < cfg.Connections; i++ {
		if err := e.Connect(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { e.Finish(&Result{}, nil) })
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs := e.Load(context.Background(), newWindow(mono(), &cfg, int64(time.Second)))
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
