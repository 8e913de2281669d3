package result

import (
	"fmt"
	"math"

	"github.com/ceiling-bench/ceiling/internal/stats"
)

// Memory verdicts (MemoryComparison.Verdict), beside within_noise and
// cannot_conclude.
const (
	MemoryHigher = "higher"
	MemoryLower  = "lower"
)

// MemoryComparison is the server's memory per connection, head against
// base, at one compared point: the same paired test as the throughput's,
// over the same blocks, on each block's difference in bytes per
// connection (head - base). Differences, not log ratios: a figure per
// connection can be zero or below (a server that gave memory back after
// its baseline), where a ratio means nothing.
//
// It is information: it gates only when the policy asks (FAIL_ON
// memory). Its level is ALPHA, whatever the stopping rule: the run
// stopped on the throughput's test, not on this one.
type MemoryComparison struct {
	Verdict string `json:"verdict"` // higher | lower | within_noise | cannot_conclude
	Reason  string `json:"reason"`
	Measure string `json:"measure,omitempty"` // pss | rss, the blocks' measure
	// BaseMedianBytes and HeadMedianBytes are each arm's median figure
	// per connection over the blocks that count.
	BaseMedianBytes *float64 `json:"base_median_bytes"`
	HeadMedianBytes *float64 `json:"head_median_bytes"`
	// ChangeBytes is the Hodges-Lehmann estimate of head - base per
	// connection, with Tukey's interval at 1 - ALPHA; ChangePct is it
	// against the base's median (nil when that is not above zero).
	ChangeBytes *float64 `json:"change_bytes"`
	CILowBytes  *float64 `json:"ci_low_bytes"`
	CIHighBytes *float64 `json:"ci_high_bytes"`
	ChangePct   *float64 `json:"change_pct"`
	// PValue is the exact two-sided Wilcoxon signed-rank test's; NPairs
	// the blocks where both arms have a figure in the same measure.
	PValue *float64 `json:"p_value"`
	NPairs int      `json:"n_pairs"`
	// MDCBytes is the smallest change per connection the test could
	// have detected with 80% power; nil with too few pairs.
	MDCBytes *float64 `json:"mdc_bytes"`
}

// compareMemory is the memory test over a compared point's blocks at
// alpha; nil when no repeat of either arm has a figure per connection.
func compareMemory(blocks []Block, alpha float64) *MemoryComparison {
	var d, base, head []float64
	measure, seen := "", false
	for _, b := range blocks {
		bm, okB := armMemory(b.Base)
		hm, okH := armMemory(b.Head)
		seen = seen || okB || okH
		if !okB || !okH || b.Base.ServerMemory.Measure != b.Head.ServerMemory.Measure {
			continue
		}
		if measure == "" {
			measure = b.Base.ServerMemory.Measure
		}
		if b.Base.ServerMemory.Measure != measure {
			continue // one measure over the whole test
		}
		d, base, head = append(d, hm-bm), append(base, bm), append(head, hm)
	}
	if !seen {
		return nil
	}
	m := &MemoryComparison{Measure: measure, NPairs: len(d), Verdict: CompareCannotConclude}
	if len(d) == 0 {
		m.Reason = "cannot conclude: no block has the server's memory per connection on both arms"
		return m
	}
	m.BaseMedianBytes, m.HeadMedianBytes = fptr(stats.Summarize(base, 0.5).Median), fptr(stats.Summarize(head, 0.5).Median)
	est, lo, hi, ok := stats.PairedShiftCI(d, 1-alpha)
	m.ChangeBytes = fptr(est)
	if ok {
		m.CILowBytes, m.CIHighBytes = fptr(lo), fptr(hi)
	}
	if b := *m.BaseMedianBytes; b > 0 {
		m.ChangePct = fptr(est / b * 100)
	}
	m.PValue = fptr(stats.SignedRank(d))
	if mdc := stats.PairedMDC(d, alpha, MDCPower); !math.IsInf(mdc, 0) && !math.IsNaN(mdc) {
		m.MDCBytes = fptr(mdc)
	}
	figs := fmt.Sprintf("base %s, head %s per connection, change %s, %s, %d pairs", Bytes(*m.BaseMedianBytes), Bytes(*m.HeadMedianBytes),
		signedBytes(est), FormatP(m.PValue), len(d))
	if minN := stats.MinPairs(alpha); len(d) < minN {
		m.Reason = fmt.Sprintf("cannot conclude: %d blocks have the memory on both arms, and a paired test over %d cannot reach p < %g (%d are needed; %s)",
			len(d), len(d), alpha, minN, figs)
		return m
	}
	p := *m.PValue
	switch {
	case p < alpha && est > 0:
		m.Verdict, m.Reason = MemoryHigher, fmt.Sprintf("higher: p < %g (%s)", alpha, figs)
	case p < alpha:
		m.Verdict, m.Reason = MemoryLower, fmt.Sprintf("lower: p < %g (%s)", alpha, figs)
	case m.MDCBytes == nil:
		m.Reason = fmt.Sprintf("cannot conclude: p ≥ %g and the pairs leave no change the test could detect (%s)", alpha, figs)
	default:
		m.Verdict = CompareWithinNoise
		m.Reason = fmt.Sprintf("within noise: p ≥ %g; the test could have detected a change of ±%s per connection (%s)", alpha, Bytes(*m.MDCBytes), figs)
	}
	return m
}

// armMemory is a repeat's server memory per connection, when it was
// measured and has one.
func armMemory(p *Point) (float64, bool) {
	if p == nil || p.Status != StatusOK {
		return 0, false
	}
	return p.ServerMemory.PerConnection()
}

// signedBytes is a change in bytes with its sign: +4.10 KB, -512 B.
func signedBytes(v float64) string {
	if v >= 0 {
		return "+" + Bytes(v)
	}
	return Bytes(v)
}
