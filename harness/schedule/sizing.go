package schedule

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Windows sized to the server's noise (docs/compare.md, "Windows sized
// to the server's noise").
//
// A block's paired difference d = ln(head/base) varies with the window w
// for two reasons: the noise within each repeat's window, which falls as
// the window grows (a collector's pause is one tick in forty of a long
// window and one in ten of a short one), and what changes between the
// base's window and the head's (the machine's drift, each run's own
// level), which grows with the lag L between them (the window, the
// warm-up and the overhead):
//
//	Var(d) ≈ 2·V(w) + k·L(w).
//
// V(w), the variance of a window's mean throughput (relative to its
// level), is the Allan variance of the first pass's timelines (replies
// per 100 ms tick of each point near the compared rung) over chunks of w,
// where they are long enough to measure it; past the longest chunk they
// measure, it falls as the last chunks measured fell (flat for a level
// that moves for seconds, 1/w for white noise), never faster. k is what
// the first pass's own blocks say beyond that: the spread of their d
// (both arms at each key, back to back, a lag L1 apart) less twice the
// window noise they carried, per second of lag; with too few blocks, the
// timelines' Allan variance at its longest chunks. A budget buys blocks
// in proportion to 1/cost(w), so the MDC it buys goes as
// sqrt(Var(d)·cost(w)): the window that minimises it within [MinWindow,
// MaxWindow] is chosen when it beats the default's by SizingGain, else
// the default stays. The warm-up is where the timelines settle after
// their connections open (settle: the first batch of ticks from which
// every one holds the level the window's second half holds), the median
// of them, within [MinWarmup, MaxWarmup]. The windows are chosen before
// any block runs, from data the blocks do not contain: the paired test's
// level holds whatever they are; only its power depends on the choice.

// Series is a point's timeline as the schedule reads it: replies per
// tick from the point's open, the tick, and where its measured window
// starts and ends (load.Timeline).
type Series struct {
	Tick       time.Duration
	Start, End int
	Counts     []int64
}

// The sizing's bounds and rule.
const (
	MinWindow  = 500 * time.Millisecond
	MaxWindow  = 4 * time.Second
	MinWarmup  = 500 * time.Millisecond
	MaxWarmup  = 2 * time.Second
	SizingGain = 0.10 // the MDC a sized window must save over the default's
)

// candidateWindows are the windows the sizing weighs.
var candidateWindows = []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second, 3 * time.Second, 4 * time.Second}

// Sizing is the windows chosen for the blocks and why.
type Sizing struct {
	Window Window
	// Sized: chosen from the timelines (else the default, or the knobs).
	Sized  bool
	Reason string
	// A is a 1 s window's noise (relative variance) and K the drift
	// between a block's runs (relative variance per second of lag), as
	// measured; Candidates each window's predicted MDC relative to the
	// default's.
	A, K       float64
	Candidates []Candidate
}

// Candidate is one window weighed: its predicted MDC relative to the
// default window's (1 = the same).
type Candidate struct {
	Window   Window
	Relative float64
}

// noiseModel is Var(d) ≈ 2·V(w) + k·L: allan holds V at the chunk
// lengths the timelines measured (seconds to relative variance), k is in
// relative variance per second of lag.
type noiseModel struct {
	allan map[time.Duration]float64
	k     float64
	// kFrom says where k came from, in words.
	kFrom string
}

// v is the variance of a window's mean at w: measured; below the
// shortest chunk measured, 1/w from it; between two chunks measured, the
// power law through them; past the longest, the slope its last two
// chunks measured, held between flat and 1/w. White noise falls as 1/w;
// a machine whose level moves for seconds at a time (flicker) does not
// fall at all, and a fall nobody measured must not buy a long window:
// it buys fewer blocks for nothing.
func (m noiseModel) v(w time.Duration) float64 {
	if v, ok := m.allan[w]; ok {
		return v
	}
	chunks := make([]time.Duration, 0, len(m.allan))
	for c := range m.allan {
		chunks = append(chunks, c)
	}
	slices.Sort(chunks)
	if len(chunks) == 0 {
		return 0
	}
	first, last := chunks[0], chunks[len(chunks)-1]
	switch {
	case w < first:
		return m.allan[first] * first.Seconds() / w.Seconds()
	case w > last:
		e := -1.0
		if len(chunks) > 1 {
			e = m.slope(chunks[len(chunks)-2], last)
		}
		return m.allan[last] * math.Pow(w.Seconds()/last.Seconds(), e)
	}
	i, _ := slices.BinarySearch(chunks, w)
	lo, hi := chunks[i-1], chunks[i]
	return m.allan[lo] * math.Pow(w.Seconds()/lo.Seconds(), m.slope(lo, hi))
}

// slope is the exponent of V's power law from chunk a to chunk b, held
// within [-1, 0]: from white noise's 1/w to a level that never settles.
func (m noiseModel) slope(a, b time.Duration) float64 {
	va, vb := m.allan[a], m.allan[b]
	if va <= 0 || vb <= 0 {
		return -1
	}
	return min(0, max(-1, math.Log(vb/va)/math.Log(b.Seconds()/a.Seconds())))
}

// varD is the model's variance of a block's log ratio at window w with
// lag between the two repeats' windows.
func (m noiseModel) varD(w, lag time.Duration) float64 {
	return 2*m.v(w) + m.k*lag.Seconds()
}

// allan is the Allan variance of the series' measured windows (relative
// to each series' mean) over chunks of m ticks, pooled over the series,
// and how many chunk pairs it rests on.
func allan(ss []Series, m int) (v float64, pairs int) {
	var sum float64
	for _, s := range ss {
		x := s.measured()
		var means []float64
		for j := 0; j+m <= len(x); j += m {
			means = append(means, mean(x[j:j+m]))
		}
		for j := 1; j < len(means); j++ {
			d := means[j] - means[j-1]
			sum += d * d / 2
			pairs++
		}
	}
	if pairs == 0 {
		return 0, 0
	}
	return sum / float64(pairs), pairs
}

// minPairs is the fewest chunk pairs an Allan variance is read from, and
// the fewest first-pass blocks k is read from.
const minPairs = 4

// fitNoise measures V at the candidate windows the series are long
// enough for, and k from the first pass's blocks (pairs: their d, their
// window and their lag); false when the series measure no window, or
// the blocks are too few to read k from.
func fitNoise(ss []Series, pairs []float64, w1, lag1 time.Duration) (noiseModel, bool) {
	m := noiseModel{allan: map[time.Duration]float64{}}
	var tick time.Duration
	for _, s := range ss {
		if s.Tick > 0 {
			tick = s.Tick
		}
	}
	if tick <= 0 {
		return m, false
	}
	for _, w := range append([]time.Duration{tick}, candidateWindows...) {
		n := int(w / tick)
		if n < 1 {
			continue
		}
		if v, p := allan(ss, n); p >= minPairs {
			m.allan[time.Duration(n)*tick] = v
		}
	}
	if len(m.allan) == 0 {
		return m, false
	}
	if len(pairs) >= minPairs && lag1 > 0 {
		spread := robustVar(pairs)
		m.k = max(0, (spread-2*m.v(w1))/lag1.Seconds())
		m.kFrom = fmt.Sprintf("the first pass's %d blocks", len(pairs))
		return m, true
	}
	// Too few blocks: the timelines alone cannot tell a drift from a
	// cycle longer than their chunks (a collector's), and a guess would
	// not earn a change.
	return m, false
}

// robustVar is the variance of xs from their median absolute deviation,
// which one block straddling a move of the machine does not inflate.
func robustVar(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	dev := make([]float64, len(s))
	for i, x := range s {
		dev[i] = math.Abs(x - med)
	}
	slices.Sort(dev)
	sd := 1.4826 * dev[len(dev)/2]
	return sd * sd
}

// measured is the series' measured window, relative to its mean: the
// fluctuation of each tick's replies.
func (s Series) measured() []float64 {
	if s.Start < 0 || s.End > len(s.Counts) || s.End-s.Start < 2 {
		return nil
	}
	c := s.Counts[s.Start:s.End]
	var sum float64
	for _, v := range c {
		sum += float64(v)
	}
	mu := sum / float64(len(c))
	if mu <= 0 {
		return nil
	}
	out := make([]float64, len(c))
	for i, v := range c {
		out[i] = float64(v)/mu - 1
	}
	return out
}

// settle is when the series settles after its open: the first batch of
// 5 ticks from which every batch to the window's end lies within three
// spreads of the level the window's second half holds (its batches'
// median; the spread, the larger of their deviation and what the ticks'
// own noise gives a batch). A throughput still climbing while a JIT
// compiles, or a heap grows, settles late; a flat one at once.
func (s Series) settle() (time.Duration, bool) {
	const b = 5
	if s.End > len(s.Counts) || s.End < 4*b {
		return 0, false
	}
	var batches []float64
	for j := 0; j+b <= s.End; j += b {
		var sum float64
		for _, v := range s.Counts[j : j+b] {
			sum += float64(v)
		}
		batches = append(batches, sum/b)
	}
	half := batches[len(batches)/2:]
	level := median(half)
	dev := make([]float64, len(half))
	for i, v := range half {
		dev[i] = math.Abs(v - level)
	}
	spread := 1.4826 * median(dev)
	var ticks []float64
	for _, v := range s.Counts[s.End-len(half)*b : s.End] {
		ticks = append(ticks, float64(v))
	}
	mu := mean(ticks)
	var ss float64
	for _, v := range ticks {
		ss += (v - mu) * (v - mu)
	}
	spread = max(spread, math.Sqrt(ss/float64(len(ticks)-1)/b))
	cut := len(batches)
	for j := len(batches) - 1; j >= 0 && math.Abs(batches[j]-level) <= 3*spread; j-- {
		cut = j
	}
	return time.Duration(cut*b) * s.Tick, true
}

// Size chooses the blocks' windows from the first pass: ss, the
// timelines near the compared rung; pairs, its blocks' d (a block being
// both arms at one key, first run w1 apart by lag1); under costs c, for
// blocks warm or fresh, against the default window def. fits says
// whether the time left buys the blocks the paired test needs at a
// window (nil: no budget, every window does): the MDC model buys blocks
// in proportion to the time, but a window that leaves fewer than the
// test needs buys no verdict at all, so such a window is never chosen,
// and when the default is one of them, the best window that fits is.
func Size(ss []Series, pairs []float64, w1, lag1 time.Duration, c Costs, def Window, warm, duet bool, every int, fits func(Window) bool) Sizing {
	model, ok := fitNoise(ss, pairs, w1, lag1)
	switch {
	case !ok && len(model.allan) == 0:
		return Sizing{Window: def, Reason: fmt.Sprintf("the default windows, %s + %s warm-up: the first pass gave no timeline long enough to size them from", def.Duration, def.Warmup)}
	case !ok:
		return Sizing{Window: def, Reason: fmt.Sprintf("the default windows, %s + %s warm-up: the first pass ran %d blocks with both arms clean, too few (%d) to tell the drift between a block's runs from the noise within its windows", def.Duration, def.Warmup, len(pairs), minPairs)}
	}
	// The median of the timelines' settling: a ramp (a JIT, a heap
	// growing) is in every one of them, a level that moves for seconds
	// puts a late "settle" in a few, and the latest of them would make
	// every warm-up the longest on such a machine.
	var settled []time.Duration
	for _, s := range ss {
		if d, ok := s.settle(); ok {
			settled = append(settled, d)
		}
	}
	warmup := MinWarmup
	if len(settled) > 0 {
		warmup = max(warmup, median(settled))
	}
	warmup = min(roundUp(warmup, 250*time.Millisecond), MaxWarmup)
	score := func(w Window) float64 {
		lag := w.Duration + w.Warmup + c.overhead()
		return math.Sqrt(model.varD(w.Duration, lag) * float64(c.perBlock(w, warm, duet, every)))
	}
	base := score(def)
	out := Sizing{Window: def, A: model.v(time.Second), K: model.k}
	affordable := func(w Window) bool { return fits == nil || fits(w) }
	defFits := affordable(def)
	var best *Window
	var tooLong []string
	for _, d := range candidateWindows {
		w := Window{Duration: d, Warmup: warmup}
		out.Candidates = append(out.Candidates, Candidate{Window: w, Relative: score(w) / base})
		switch {
		case !affordable(w):
			tooLong = append(tooLong, d.String())
		case best == nil || score(w) < score(*best):
			best = &w
		}
	}
	desc := fmt.Sprintf("the first pass's timelines put a 1 s window's noise at %.2g%% and its settling at %s; %s put the drift between a block's runs at %.2g%%² a second; ",
		100*math.Sqrt(model.v(time.Second)), warmup, model.kFrom, 1e4*model.k)
	if len(tooLong) > 0 {
		desc += fmt.Sprintf("windows of %s would leave the time left too few blocks for the paired test; ", strings.Join(tooLong, ", "))
	}
	if best == nil {
		out.Reason = desc + fmt.Sprintf("no window the time left can buy: the default %s + %s warm-up kept", def.Duration, def.Warmup)
		return out
	}
	rel := score(*best) / base
	switch {
	case !defFits:
		out.Window, out.Sized = *best, true
		out.Reason = desc + fmt.Sprintf("%s windows after %s of warm-up are the best the time left buys (the default %s + %s is not)", best.Duration, best.Warmup, def.Duration, def.Warmup)
	case rel > 1-SizingGain:
		out.Reason = desc + fmt.Sprintf("no window beats the default %s + %s warm-up by %.0f%% of its MDC (the best, %s + %s, by %.0f%%): kept",
			def.Duration, def.Warmup, SizingGain*100, best.Duration, best.Warmup, (1-rel)*100)
	default:
		out.Window, out.Sized = *best, true
		out.Reason = desc + fmt.Sprintf("%s windows after %s of warm-up buy an MDC %.0f%% below the default %s + %s", best.Duration, best.Warmup, (1-rel)*100, def.Duration, def.Warmup)
	}
	return out
}

// String lists the candidates, for a note.
func (s Sizing) String() string {
	var parts []string
	for _, c := range s.Candidates {
		parts = append(parts, fmt.Sprintf("%s: %.2f", c.Window.Duration, c.Relative))
	}
	return strings.Join(parts, ", ")
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func roundUp(d, to time.Duration) time.Duration {
	return (d + to - 1) / to * to
}
