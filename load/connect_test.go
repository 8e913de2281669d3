package load

import (
	"context"
	"errors"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// concurrencyProbe is a ConnectFunc that records how many connects were
// in flight at once and when each started.
type concurrencyProbe struct {
	inflight, peak atomic.Int64
	mu             sync.Mutex
	starts         []time.Duration
	t0             time.Time
	hold           time.Duration
}

func (p *concurrencyProbe) connect(ctx context.Context, i int) error {
	n := p.inflight.Add(1)
	defer p.inflight.Add(-1)
	for {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}
	p.mu.Lock()
	p.starts = append(p.starts, time.Since(p.t0))
	p.mu.Unlock()
	time.Sleep(p.hold)
	if i == 3 {
		return errors.New("refused")
	}
	return nil
}

func TestConnectStrategies(t *testing.T) {
	t.Run("bounded never exceeds its concurrency", func(t *testing.T) {
		p := &concurrencyProbe{t0: time.Now(), hold: 5 * time.Millisecond}
		errs := connectAll(context.Background(), ConnectBounded, 3, 0, 20, p.connect)
		if peak := p.peak.Load(); peak > 3 {
			t.Fatalf("peak in flight %d, want at most 3", peak)
		}
		if len(p.starts) != 20 || errs[3] == nil || errs[2] != nil {
			t.Fatalf("starts %d, errs %v", len(p.starts), errs)
		}
	})
	t.Run("stagger spaces the starts", func(t *testing.T) {
		p := &concurrencyProbe{t0: time.Now()}
		const gap = 20 * time.Millisecond
		connectAll(context.Background(), ConnectStagger, 0, gap, 5, p.connect)
		sort.Slice(p.starts, func(i, j int) bool { return p.starts[i] < p.starts[j] })
		for i, s := range p.starts {
			if s < time.Duration(i)*gap {
				t.Fatalf("connection %d started at %v, before %v", i, s, time.Duration(i)*gap)
			}
		}
	})
	t.Run("all-at-once has every connect in flight together", func(t *testing.T) {
		// Each connect waits until all ten have started: only a strategy
		// that starts them together gets there before the timeout.
		var started atomic.Int64
		all := make(chan struct{})
		var timedOut atomic.Bool
		connectAll(context.Background(), ConnectAllAtOnce, 0, 0, 10, func(ctx context.Context, i int) error {
			if started.Add(1) == 10 {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				timedOut.Store(true)
			}
			return nil
		})
		if timedOut.Load() {
			t.Fatal("not all ten connects were in flight at once")
		}
	})
	t.Run("cancel stops the rest", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var n atomic.Int64
		errs := connectAll(ctx, ConnectBounded, 1, 0, 10, func(ctx context.Context, i int) error {
			if n.Add(1) == 2 {
				cancel()
			}
			return nil
		})
		if !errors.Is(errs[9], context.Canceled) {
			t.Fatalf("errs %v: the last connect ran after cancel", errs)
		}
	})
}

// refusingScenario refuses the connections whose index is in refuse
// (load.Refused) and times out the others that are not in ok.
type refusingScenario struct {
	Scenario
	refuse, ok map[int]bool
}

func (s refusingScenario) Connect(ctx context.Context, i int) error {
	switch {
	case s.ok[i]:
		return nil
	case s.refuse[i]:
		return &Refused{Err: errors.New("handshake failed: the server answered denied")}
	}
	return context.DeadlineExceeded
}

// TestConnectPhaseRefused: a point whose every connection was refused
// fails as a refusal (a sweep stops there); one where some only timed out
// fails as not refused, and one where any opened does not fail.
func TestConnectPhaseRefused(t *testing.T) {
	all := map[int]bool{0: true, 1: true, 2: true}
	for _, tt := range []struct {
		name       string
		refuse, ok map[int]bool
		failed     bool
		refused    bool
	}{
		{"every one refused", all, nil, true, true},
		{"one timed out", map[int]bool{0: true, 1: true}, nil, true, false},
		{"one opened", map[int]bool{1: true, 2: true}, map[int]bool{0: true}, false, false},
	} {
		cfg := &Config{Connections: 3, ConnectStrategy: "bounded", ConnectConcurrency: 3}
		_, err := connectPhase(context.Background(), cfg, refusingScenario{refuse: tt.refuse, ok: tt.ok}, NewRecorder(false, false), io.Discard)
		var rf *Refused
		if (err != nil) != tt.failed || errors.As(err, &rf) != tt.refused {
			t.Errorf("%s: err %v; want failed %v, refused %v", tt.name, err, tt.failed, tt.refused)
		}
	}
}
