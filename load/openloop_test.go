package load

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestConnectionPacerSpreadsConnections(t *testing.T) {
	// 4 connections sharing 1000 ops/s: each runs every 4 ms, shifted by
	// 1 ms, so together they fire every millisecond.
	var got []int64
	for k := int64(0); k < 2; k++ {
		for i := 0; i < 4; i++ {
			got = append(got, ConnectionPacer(1000, 4, i).Due(k))
		}
	}
	want := []int64{0, 1e6, 2e6, 3e6, 4e6, 5e6, 6e6, 7e6}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("due times (-want +got):\n%s", diff)
	}
	if iv := ConnectionPacer(1000, 4, 0).Interval(); iv != 4e6 {
		t.Fatalf("interval %d, want 4 ms", iv)
	}
	// Computed from k, not accumulated: no drift after a million steps.
	p := ConstantPacer{IntervalNs: 1e9 / 3.0}
	if got, want := p.Due(3_000_000), int64(1e15); got != want {
		t.Fatalf("Due(3e6) = %d, want %d", got, want)
	}
	if got, want := ConnectionPacer(3, 1, 0).Due(3_000_000), int64(1e15); got != want {
		t.Fatalf("worker Due(3e6) = %d, want %d", got, want)
	}
	var f Pacer = PacerFunc(func(k int64) int64 { return k * 7 })
	if f.Due(3) != 21 {
		t.Fatal("PacerFunc does not call through")
	}
}

func TestSleeperReusesItsTimer(t *testing.T) {
	var s Sleeper
	done := make(chan struct{})
	s.Until(Mono()+1000, done) // creates the timer
	if a := testing.AllocsPerRun(20, func() { s.Until(Mono()+1000, done) }); a != 0 {
		t.Fatalf("%v allocations per wait", a)
	}
	close(done)
	if s.Until(Mono()+int64(time.Hour), done) {
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
	open := Mono()
	end := open + DueNs(40, rate) // 40 operations, 10 per worker
	go RunClock(context.Background(), rate, open, end, wakes)
	done := make(chan struct{})
	for i := 0; i < n; i++ {
		p := ConnectionPacer(rate, n, i)
		for k := int64(0); k < 10; k++ {
			due := open + p.Due(k)
			if !WaitDue(due, wakes[i], done) {
				t.Fatal("waitDue gave up")
			}
			if now := Mono(); now < due {
				t.Fatalf("worker %d op %d released at %d, before its due time %d", i, k, now, due)
			}
		}
	}
}
