package load

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
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

// preciseTimer sleeps on a timerfd; it falls back to a Go timer where a
// timerfd cannot be made.
type preciseTimer struct {
	f        *os.File
	fd       int
	buf      [8]byte
	fallback sleeper
}

func newPreciseTimer() *preciseTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &preciseTimer{fd: -1}
	}
	return &preciseTimer{f: os.NewFile(uintptr(fd), "pacer-timerfd"), fd: fd}
}

// sleep waits d nanoseconds (d > 0). It returns false once cancel ran.
func (p *preciseTimer) sleep(d int64, done <-chan struct{}) bool {
	if p.f != nil {
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d)}
		if unix.TimerfdSettime(p.fd, 0, &spec, nil) == nil {
			_, err := p.f.Read(p.buf[:])
			return err == nil
		}
	}
	return p.fallback.until(mono()+d, done)
}

// cancel makes a pending and every later sleep return false.
func (p *preciseTimer) cancel() {
	if p.f != nil {
		p.f.SetReadDeadline(time.Unix(1, 0))
	}
}

func (p *preciseTimer) close() {
	if p.f != nil {
		p.f.Close()
	}
	if p.fallback.t != nil {
		p.fallback.t.Stop()
	}
}

// dueNs is when operation j of the whole run is due, in ns after the
// start of load: j/rate seconds. Workers and the clock both use it, so
// they agree to the nanosecond.
func dueNs(j int64, rate float64) int64 { return int64(float64(j) * 1e9 / rate) }

// runClock walks the global schedule of an open loop: operation j is due
// at open + dueNs(j) on worker j mod len(wakes). At each due time it wakes
// that worker with a token on its channel (capacity 1, never blocking: a
// worker that is behind finds a token waiting and does not sleep). The
// worker itself checks the time again, so a stale token only makes it
// look at the clock once more. nil channels (workers that failed to
// connect) are skipped.
func runClock(ctx context.Context, rate float64, open, end int64, wakes []chan struct{}) {
	t := newPreciseTimer()
	defer t.close()
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { t.cancel(); close(done) })
	defer stop()
	n := int64(len(wakes))
	for j := int64(0); ; j++ {
		due := open + dueNs(j, rate)
		if due >= end {
			return
		}
		if d := due - mono(); d > 0 {
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

// waitDue blocks until mono() >= due, woken by the clock's tokens. It
// returns false when done closes first.
func waitDue(due int64, wake <-chan struct{}, done <-chan struct{}) bool {
	for mono() < due {
		select {
		case <-wake:
		case <-done:
			return false
		}
	}
	return true
}
