package wire

import "time"

// TimelineTick is a timeline's tick: 100 ms, fine enough to see a
// collector's pauses in a 1 s window and coarse enough that a tick holds
// thousands of messages at a ceiling.
const TimelineTick = 100 * time.Millisecond

// Timeline counts a run's completed operations' messages by the tick they
// completed in, from the window's Open, warm-up included: how the
// throughput moved within a point. The harness sizes a comparison's
// windows from it (docs/compare.md, "Windows sized to the server's
// noise"). A scenario adds to it once per operation (a batch's last
// reply), never per message, so the hot path pays one division a batch.
type Timeline struct {
	// TickNs is the tick; StartTick and EndTick are the ticks where the
	// measured window starts and ends (the warm-up is before StartTick;
	// replies awaited after the window land after EndTick).
	TickNs    int64   `json:"tick_ns"`
	StartTick int     `json:"start_tick"`
	EndTick   int     `json:"end_tick"`
	Counts    []int64 `json:"counts"`

	origin int64
}

// NewTimeline is an empty timeline over a window that opens at open,
// measures from start to end and drains until drain (monotonic
// nanoseconds; load.NewTimeline takes them from its Window).
func NewTimeline(open, start, end, drain int64) *Timeline {
	tick := int64(TimelineTick)
	n := int((drain-open)/tick) + 1
	return &Timeline{TickNs: tick, StartTick: int((start - open) / tick), EndTick: int((end - open) / tick),
		Counts: make([]int64, n), origin: open}
}

// Add counts n messages completed at now (mono ns); one before Open or
// past Drain is not counted. A nil timeline counts nothing.
func (t *Timeline) Add(now int64, n int64) {
	if t == nil || now < t.origin {
		return
	}
	if i := (now - t.origin) / t.TickNs; i < int64(len(t.Counts)) {
		t.Counts[i] += n
	}
}

// Merge adds o's counts into t (both over the same window); t nil takes
// a copy of o.
func (t *Timeline) Merge(o *Timeline) *Timeline {
	if o == nil {
		return t
	}
	if t == nil {
		c := *o
		c.Counts = append([]int64(nil), o.Counts...)
		return &c
	}
	for i, v := range o.Counts {
		if i < len(t.Counts) {
			t.Counts[i] += v
		}
	}
	return t
}
