package load

import "time"

// epoch anchors mono: every timestamp in the engine is nanoseconds on the
// monotonic clock since process start, an int64 that costs no allocation
// and never steps with the wall clock.
var epoch = time.Now()

func Mono() int64 { return int64(time.Since(epoch)) }

// Sleeper waits for scheduled times with one reused timer, so pacing an
// open loop allocates nothing per operation.
type Sleeper struct{ t *time.Timer }

// until sleeps until Mono() >= t or done closes; it reports false when
// done closed first.
func (s *Sleeper) Until(t int64, done <-chan struct{}) bool {
	d := t - Mono()
	if d <= 0 {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	if s.t == nil {
		s.t = time.NewTimer(time.Duration(d))
	} else {
		s.t.Reset(time.Duration(d)) // Go >= 1.23: no stale value to drain
	}
	select {
	case <-s.t.C:
		return true
	case <-done:
		s.t.Stop()
		return false
	}
}

// sleepUntil is until with a timer of its own, for one-off waits.
func SleepUntil(t int64, done <-chan struct{}) bool {
	var s Sleeper
	ok := s.Until(t, done)
	if s.t != nil {
		s.t.Stop()
	}
	return ok
}

// MonoTime is the wall-clock time.Time of a Mono timestamp, for deadlines.
func MonoTime(ns int64) time.Time { return epoch.Add(time.Duration(ns)) }
