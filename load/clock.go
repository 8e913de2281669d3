package load

import "time"

// epoch anchors mono: every timestamp in the engine is nanoseconds on the
// monotonic clock since process start, an int64 that costs no allocation
// and never steps with the wall clock.
var epoch = time.Now()

func mono() int64 { return int64(time.Since(epoch)) }

// sleepUntil sleeps until mono() >= t or done closes; it reports false when
// done closed first.
func sleepUntil(t int64, done <-chan struct{}) bool {
	d := t - mono()
	if d <= 0 {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	timer := time.NewTimer(time.Duration(d))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-done:
		return false
	}
}
