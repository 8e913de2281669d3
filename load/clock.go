package load

import "time"

// epoch anchors mono: every timestamp in the engine is nanoseconds on the
// monotonic clock since process start, an int64 that costs no allocation
// and never steps with the wall clock.
var epoch = time.Now()

func mono() int64 { return int64(time.Since(epoch)) }

// sleeper waits for scheduled times with one reused timer, so pacing an
// open loop allocates nothing per operation.
type sleeper struct{ t *time.Timer }

// until sleeps until mono() >= t or done closes; it reports false when
// done closed first.
func (s *sleeper) until(t int64, done <-chan struct{}) bool {
	d := t - mono()
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
func sleepUntil(t int64, done <-chan struct{}) bool {
	var s sleeper
	ok := s.until(t, done)
	if s.t != nil {
		s.t.Stop()
	}
	return ok
}
