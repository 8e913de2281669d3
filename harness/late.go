package harness

import (
	"sync"
	"time"
)

// lateWork is what points leave behind them: the stops an interrupted
// point left running (so that the partial result is written first), and
// the warnings found after the result was written (those stops'
// escalations, a log that could not be redacted). Drain waits for the
// one and hands over the other.
type lateWork struct {
	bg   sync.WaitGroup
	mu   sync.Mutex
	late []string
}

// warn keeps a warning for the next drain.
func (l *lateWork) warn(w string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.late = append(l.late, w)
}

// goStop runs stop in the background, for drain to wait for.
func (l *lateWork) goStop(stop func()) {
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		stop()
	}()
}

// drain waits, at most limit on clock, for the stops left running, and
// returns the warnings kept so far.
func (l *lateWork) drain(clock Clock, limit time.Duration) []string {
	done := make(chan struct{})
	go func() { l.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-clock.After(limit):
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	late := l.late
	l.late = nil
	return late
}
