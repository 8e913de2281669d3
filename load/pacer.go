package load

// Pacer is the open loop's schedule: the offset in nanoseconds from the
// start of load at which operation k (0, 1, 2...) of one connection is
// due. The engine sends each operation at its due time whether or not
// earlier ones finished, and measures latency from that time.
type Pacer interface {
	Due(k int64) int64
}

// PacerFunc adapts a function to Pacer.
type PacerFunc func(k int64) int64

// Due calls f.
func (f PacerFunc) Due(k int64) int64 { return f(k) }

// ConstantPacer spaces operations IntervalNs apart starting at PhaseNs.
type ConstantPacer struct {
	PhaseNs, IntervalNs float64
}

var _ Pacer = ConstantPacer{}

// Due is PhaseNs + k*IntervalNs, computed from k (not accumulated), so
// rounding never drifts the schedule.
func (p ConstantPacer) Due(k int64) int64 { return int64(p.PhaseNs + float64(k)*p.IntervalNs) }

// WorkerPacer is worker i's share of a total rate split over n workers:
// its k-th operation is operation k*n+i of the whole run, so together the
// workers fire evenly spaced instead of n operations at once, and each
// due time is exactly the one the clock (runClock) wakes it for.
type WorkerPacer struct {
	rate float64
	n, i int64
}

var _ Pacer = WorkerPacer{}

func (p WorkerPacer) Due(k int64) int64 { return DueNs(k*p.n+p.i, p.rate) }

// interval is the time between two operations of one worker.
func (p WorkerPacer) Interval() int64 { return int64(float64(p.n) * 1e9 / p.rate) }

func ConnectionPacer(rate float64, n, i int) WorkerPacer {
	return WorkerPacer{rate: rate, n: int64(n), i: int64(i)}
}
