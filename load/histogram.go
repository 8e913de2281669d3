package load

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 ns to one hour at 3 significant figures (0.1%). A
// value outside the range is not clamped into it: it is counted in
// OutOfRange and the report shows the count.
const (
	histMinNs   = 1
	histMaxNs   = int64(3600e9)
	histSigFigs = 3
)

// Histogram is one worker's latency histogram. It is not safe for
// concurrent use on purpose: each worker owns its own and they are merged
// after the workers stop, so recording takes no lock.
type Histogram struct {
	h          *hdrhistogram.Histogram
	min, max   int64 // exact, because hdr reports bucket edges
	outOfRange int64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(histMinNs, histMaxNs, histSigFigs)}
}

// Record adds one value in nanoseconds. Negative values (a clock step) and
// values beyond an hour are counted in OutOfRange instead.
func (h *Histogram) Record(ns int64) { h.RecordN(ns, 1) }

// RecordN adds n values of ns nanoseconds at once, exactly as n calls of
// Record would: the event loops hand a batch's replies over together, and
// those one read completed share their latency (load/scenario/echo).
func (h *Histogram) RecordN(ns, n int64) {
	if n <= 0 {
		return
	}
	if ns < 0 || ns > histMaxNs {
		h.outOfRange += n
		return
	}
	if ns == 0 {
		ns = 1 // below the resolution of any clock we read; hdr's floor
	}
	if h.h.TotalCount() == 0 || ns < h.min {
		h.min = ns
	}
	if ns > h.max {
		h.max = ns
	}
	_ = h.h.RecordValues(ns, n) // in range by the check above
}

// Count is the number of recorded values (OutOfRange excluded).
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// OutOfRange is the number of values Record refused.
func (h *Histogram) OutOfRange() int64 { return h.outOfRange }

// Merge adds o into h. o is unchanged.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || (o.h.TotalCount() == 0 && o.outOfRange == 0) {
		return
	}
	if dropped := h.merge(o); dropped != 0 {
		h.outOfRange += dropped // cannot happen with equal ranges; never lose it silently
	}
}

// merge adds o's values, exact min and max and out-of-range count into h
// and returns hdr's dropped count.
func (h *Histogram) merge(o *Histogram) (dropped int64) {
	if o.h.TotalCount() > 0 {
		if h.h.TotalCount() == 0 || o.min < h.min {
			h.min = o.min
		}
		if o.max > h.max {
			h.max = o.max
		}
	}
	h.outOfRange += o.outOfRange
	return h.h.Merge(o.h)
}

// Quantile returns the value at q percent (0 < q <= 100). hdr answers with
// the top of the bucket holding that rank, which can exceed the largest
// value seen; the true quantile never does, so the answer is bounded by
// the exact max.
func (h *Histogram) Quantile(q float64) int64 {
	if h.h.TotalCount() == 0 {
		return 0
	}
	v := h.h.ValueAtQuantile(q)
	if v > h.max {
		v = h.max
	}
	if v < h.min {
		v = h.min
	}
	return v
}

// Latency summarises the histogram for the result document.
func (h *Histogram) Latency() Latency {
	if h.h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Count: h.h.TotalCount(),
		Min:   h.min,
		Mean:  h.h.Mean(),
		P50:   h.Quantile(50),
		P90:   h.Quantile(90),
		P99:   h.Quantile(99),
		P999:  h.Quantile(99.9),
		Max:   h.max,
	}
}

// CountAbove is the number of recorded values above ns (at histogram
// resolution).
func (h *Histogram) CountAbove(ns int64) int64 {
	var n int64
	for _, b := range h.h.Distribution() {
		if b.From > ns {
			n += b.Count
		}
	}
	return n
}

func (h *Histogram) String() string {
	l := h.Latency()
	return fmt.Sprintf("n=%d p50=%d p99=%d max=%d", l.Count, l.P50, l.P99, l.Max)
}

// EncodedHistogram is a Histogram for the wire: HdrHistogram's own
// compressed encoding (V2, base64; readable by the Java and C
// implementations) and the exact figures the encoding cannot carry.
type EncodedHistogram struct {
	Hdr        string `json:"hdr"`          // hdrhistogram-go EncodeV2: compressed, base64
	Min        int64  `json:"min"`          // exact, as Histogram keeps it
	Max        int64  `json:"max"`          // exact
	OutOfRange int64  `json:"out_of_range"` // values Record refused
}

// Encode is h in its wire form.
func (h *Histogram) Encode() (EncodedHistogram, error) {
	b, err := h.h.EncodeV2()
	if err != nil {
		return EncodedHistogram{}, err
	}
	return EncodedHistogram{Hdr: string(b), Min: h.min, Max: h.max, OutOfRange: h.outOfRange}, nil
}

// HistogramConfig is an HdrHistogram's configuration: two histograms
// merge exactly only when theirs are equal.
type HistogramConfig struct {
	Lowest, Highest int64
	SigFigs         int64
}

// Config is h's configuration.
func (h *Histogram) Config() HistogramConfig {
	return HistogramConfig{h.h.LowestTrackableValue(), h.h.HighestTrackableValue(), h.h.SignificantFigures()}
}

// DecodeHistogram reads e back. Its configuration is whatever the
// encoding says; the caller checks it against its own (Config) before
// merging.
func DecodeHistogram(e EncodedHistogram) (*Histogram, error) {
	hh, err := hdrhistogram.Decode([]byte(e.Hdr))
	if err != nil {
		return nil, err
	}
	if e.OutOfRange < 0 || e.Min < 0 || e.Max < e.Min {
		return nil, fmt.Errorf("min %d, max %d, out_of_range %d: inconsistent", e.Min, e.Max, e.OutOfRange)
	}
	return &Histogram{h: hh, min: e.Min, max: e.Max, outOfRange: e.OutOfRange}, nil
}

// MergeExact adds o into h when both have the same configuration and
// returns how many of o's values h could not hold (hdr's dropped count;
// 0 for equal configurations, but never assumed). An error means
// nothing was merged.
func (h *Histogram) MergeExact(o *Histogram) (dropped int64, err error) {
	if hc, oc := h.Config(), o.Config(); hc != oc {
		return 0, fmt.Errorf("histogram configuration %+v differs from %+v", oc, hc)
	}
	return h.merge(o), nil
}
