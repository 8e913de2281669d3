package load

import (
	"context"
	"time"
)

// Why a clock of our own: an idle Go process waits for its timers in
// epoll_wait with a timeout in whole milliseconds, so time.Sleep and
// time.Timer wake up to ~1 ms late when nothing else is running. An open
// loop paced by them shows a schedule lag that is the runtime's, not an
// overloaded generator's, and every latency (measured from the scheduled
// time) carries it. A timerfd read through the netpoller wakes at the
// requested microsecond instead, and the goroutine waiting on it holds no
// thread and no P.

// minPacerSleep bounds how often the clock wakes: operations due sooner
// than this after the last wake-up are sent together at the next one, so
// a high rate costs at most 1/minPacerSleep wake-ups per second.
const minPacerSleep = 200 * time.Microsecond

// dueNs is when operation j of the whole run is due, in ns after the
// start of load: j/rate seconds. Workers and the clock both use it, so
// they agree to the nanosecond.
func DueNs(j int64, rate float64) int64 { return int64(float64(j) * 1e9 / rate) }

// runClock walks the global schedule of an open loop: operation j is due
// at open + DueNs(j) on worker j mod len(wakes). At each due time it wakes
// that worker with a token on its channel (capacity 1, never blocking: a
// worker that is behind finds a token waiting and does not sleep). The
// worker itself checks the time again, so a stale token only makes it
// look at the clock once more. nil channels (workers that failed to
// connect) are skipped.
func RunClock(ctx context.Context, rate float64, open, end int64, wakes []chan struct{}) {
	t := newPreciseTimer()
	defer t.close()
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { t.cancel(); close(done) })
	defer stop()
	n := int64(len(wakes))
	for j := int64(0); ; j++ {
		due := open + DueNs(j, rate)
		if due >= end {
			return
		}
		if d := due - Mono(); d > 0 {
			if d < int64(minPacerSleep) {
				d = int64(minPacerSleep)
			}
			if !t.sleep(d, done) {
				return
			}
		}
		if w := wakes[j%n]; w != nil {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	}
}

// WaitDue blocks until Mono() >= due, woken by the clock's tokens. It
// returns false when done closes first.
func WaitDue(due int64, wake <-chan struct{}, done <-chan struct{}) bool {
	for Mono() < due {
		select {
		case <-wake:
		case <-done:
			return false
		}
	}
	return true
}
