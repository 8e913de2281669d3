package main

import (
	"math"
	"math/rand/v2"

	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/result"
)

// shifts are the planted changes: head *= 1 - shift. The first, 0, is the
// A/A case whose calls are false alarms.
var shifts = [...]float64{0, 0.03, 0.05, 0.10, 0.20}

const nShifts = len(shifts)

// The decision rules, in the report's order.
const (
	ruleMWSpread = iota
	ruleMW
	rulePaired
	ruleSeqOBF
	ruleSeqPocock
	nRules
)

var ruleNames = [nRules]string{"mw+spread", "mw", "paired", "paired+seq", "paired+seq-pocock"}

func sequential(rule int) bool { return rule == ruleSeqOBF || rule == ruleSeqPocock }

// window is one trial's draw: n (or -max) consecutive blocks of sequence
// seq from block start, wrapping around, arms swapped when swap.
type window struct {
	seq, start int
	swap       bool
}

// drawWindows draws the trials' windows: a start uniform over every usable
// block of every sequence (so a sequence is picked in proportion to its
// length, and every recorded moment is equally likely), and a fair coin
// for swapping the arms. Every shift and rule is then judged on the same
// windows (common random numbers), so differences between rules are not
// differences between draws.
func drawWindows(seqs []sequence, trials int, seed uint64) []window {
	r := rand.New(rand.NewPCG(seed, 0x636f6d7061726573)) // "compares"
	total := 0
	for _, s := range seqs {
		total += len(s.base)
	}
	ws := make([]window, trials)
	for t := range ws {
		u := r.IntN(total)
		i := 0
		for u >= len(seqs[i].base) {
			u -= len(seqs[i].base)
			i++
		}
		ws[t] = window{seq: i, start: u, swap: r.IntN(2) == 1}
	}
	return ws
}

// blocks returns the window's first k blocks (circular), arms swapped if
// asked.
func (w window) blocks(seqs []sequence, k int) (base, head []float64) {
	s := seqs[w.seq]
	base, head = make([]float64, k), make([]float64, k)
	for i := range k {
		j := (w.start + i) % len(s.base)
		base[i], head[i] = s.base[j], s.head[j]
	}
	if w.swap {
		base, head = head, base
	}
	return base, head
}

// decision is one rule's outcome on one synthetic comparison.
type decision struct {
	called bool    // p below the rule's level (and, for mw+spread, beyond the spread)
	dir    int     // sign of the rule's estimate of the change: -1 head slower, +1 faster
	blocks int     // blocks the rule used
	mdc    float64 // the minimum detectable change it reports, as a log ratio (+Inf: none)
}

// tally is one rule's outcomes at one shift over the trials.
type tally struct {
	calls, slower, faster int
	blocks                int // summed over the trials
}

type simResult struct {
	windows []window
	tally   [nRules][nShifts]tally
	mdc     [nRules][]float64 // per trial at shift 0, log ratio
}

// rules holds what every comparison needs: the flags and the sequential
// rules' looks and levels.
type rules struct {
	n, max      int
	alpha       float64
	looks       []int
	obf, pocock []float64 // levels per look
	windowLen   int
}

func newRules(o options) *rules {
	looks := make([]int, 0, o.max-firstLook+1)
	for k := firstLook; k <= o.max; k++ {
		looks = append(looks, k)
	}
	return &rules{
		n: o.n, max: o.max, alpha: o.alpha, looks: looks,
		obf:       stats.SequentialLevels(looks, o.alpha, stats.SpendOBF),
		pocock:    stats.SequentialLevels(looks, o.alpha, stats.SpendPocock),
		windowLen: max(o.n, o.max),
	}
}

// simulate judges every window at every shift with every rule.
func simulate(seqs []sequence, o options) *simResult {
	rs := newRules(o)
	res := &simResult{windows: drawWindows(seqs, o.trials, o.seed)}
	for r := range nRules {
		res.mdc[r] = make([]float64, 0, o.trials)
	}
	h := make([]float64, rs.windowLen)
	for _, w := range res.windows {
		base, head := w.blocks(seqs, rs.windowLen)
		for si, s := range shifts {
			for i := range head {
				h[i] = head[i] * (1 - s)
			}
			ds := rs.decide(base, h)
			for r, d := range ds {
				t := &res.tally[r][si]
				t.blocks += d.blocks
				if d.called {
					t.calls++
					switch {
					case d.dir < 0:
						t.slower++
					case d.dir > 0:
						t.faster++
					}
				}
				if si == 0 {
					res.mdc[r] = append(res.mdc[r], d.mdc)
				}
			}
		}
	}
	return res
}

// decide applies every rule to one synthetic comparison: base and head
// hold rs.windowLen blocks; the fixed-size rules take the first n, the
// sequential ones up to max.
func (rs *rules) decide(base, head []float64) [nRules]decision {
	var out [nRules]decision
	b, h := base[:rs.n], head[:rs.n]

	// The unpaired rules: the arms' repeats pooled, as benchstat does.
	p := stats.MannWhitneyU(b, h)
	mb, mh := stats.Summarize(b, 0.95).Median, stats.Summarize(h, 0.95).Median
	change := mh/mb - 1
	spread := max(stats.RelSpreadPct(b), stats.RelSpreadPct(h)) / 100
	umdc := stats.UnpairedMDC(logs(b), logs(h), rs.alpha, result.MDCPower)
	out[ruleMW] = decision{called: p < rs.alpha, dir: sign(change), blocks: rs.n, mdc: umdc}
	out[ruleMWSpread] = decision{called: p < rs.alpha && math.Abs(change) > spread, dir: sign(change), blocks: rs.n, mdc: umdc}

	// The paired rule: the harness's primary test.
	d := stats.LogRatios(base, head)
	out[rulePaired] = pairedDecision(d[:rs.n], stats.SignedRank(d[:rs.n]) < rs.alpha, rs.alpha)

	// The sequential ones: the same p at each look, two sets of levels.
	ps := make([]float64, len(rs.looks))
	for k := range ps {
		ps[k] = math.NaN()
	}
	out[ruleSeqOBF] = rs.sequential(d, rs.obf, ps)
	out[ruleSeqPocock] = rs.sequential(d, rs.pocock, ps)
	return out
}

// sequential looks at 6, 7, ..., max blocks and stops at the first look
// whose p is below its level; ps caches each look's p (NaN: not yet
// computed), shared by the two spending functions.
func (rs *rules) sequential(d, levels, ps []float64) decision {
	for k, look := range rs.looks {
		if levels[k] == 0 {
			continue // this look cannot stop
		}
		if math.IsNaN(ps[k]) {
			ps[k] = stats.SignedRank(d[:look])
		}
		if ps[k] < levels[k] {
			return pairedDecision(d[:look], true, rs.alpha)
		}
	}
	return pairedDecision(d[:rs.max], false, rs.alpha)
}

// pairedDecision is a paired rule's outcome over the pairs d: the
// direction of the Hodges-Lehmann estimate (the harness's change_pct) and
// the paired MDC.
func pairedDecision(d []float64, called bool, alpha float64) decision {
	dec := decision{called: called, blocks: len(d), mdc: stats.PairedMDC(d, alpha, result.MDCPower)}
	if called {
		est, _, _, _ := stats.PairedShiftCI(d, 1-alpha)
		dec.dir = sign(est)
	}
	return dec
}

func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}
