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

// connectionPacer splits a total rate over n workers: each runs at rate/n,
// and worker i is phase-shifted by i/n of an interval, so the aggregate is
// evenly spaced instead of n operations firing together.
func connectionPacer(rate float64, n, i int) ConstantPacer {
	interval := float64(n) * 1e9 / rate
	return ConstantPacer{PhaseNs: interval * float64(i) / float64(n), IntervalNs: interval}
}
