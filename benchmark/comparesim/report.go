package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/result"
)

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// rollingWindow is the width, in blocks, of the rolling median that
// measures a sequence's drift.
const rollingWindow = 5

// writeReport prints the Markdown report: the inputs, the sequences and
// their drift, one row per rule, and the common-mode model if asked.
func writeReport(w io.Writer, o options, seqs, ignored []sequence, sim *simResult, cm *commonMode) error {
	var b strings.Builder
	blocks, nonOverlap := 0, 0
	for _, s := range seqs {
		blocks += len(s.base)
		nonOverlap += len(s.base) / o.n
	}
	fmt.Fprintf(&b, "# comparesim: decision rules on resampled A/A comparisons\n\n")
	fmt.Fprintf(&b, "Input: %s: %s, %s used", strings.Join(o.files, ", "), plural(len(seqs), "sequence"), plural(blocks, "block"))
	if len(ignored) > 0 {
		fmt.Fprintf(&b, " (%s ignored: fewer than -min-blocks %d)", plural(len(ignored), "sequence"), o.minBlocks)
	}
	fmt.Fprintf(&b, ".\n")
	fmt.Fprintf(&b, "Design: %d trials per shift, each n = %d consecutive blocks (the sequential rules: looks at %d, %d, ..., %d) from a random block of the recording, circular, arms swapped in half the trials; head × (1 − shift); alpha %g, MDC at %g power; seed %d.\n\n",
		o.trials, o.n, firstLook, firstLook+1, o.max, o.alpha, result.MDCPower, o.seed)

	fmt.Fprintf(&b, "## Sequences\n\n")
	fmt.Fprintf(&b, "| sequence | blocks | drift (base, %d-block rolling median, max/min) | spread, pooled arms | spread, pair ratios | median pair ratio | paired p, all blocks |\n", rollingWindow)
	fmt.Fprintf(&b, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var notAA []string
	for _, s := range seqs {
		ratios := make([]float64, len(s.base))
		for i := range ratios {
			ratios[i] = s.head[i] / s.base[i]
		}
		p := stats.SignedRank(stats.LogRatios(s.base, s.head))
		mark := ""
		if p < o.alpha {
			mark = " !"
			notAA = append(notAA, s.name)
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.1f%% | %.1f%% | %.3f | %.2g%s |\n", s.name, len(s.base), drift(s.base),
			stats.RelSpreadPct(append(append([]float64{}, s.base...), s.head...)), stats.RelSpreadPct(ratios), medianOf(ratios), p, mark)
	}
	fmt.Fprintf(&b, "\nSpread is MAD/median. The pooled arms carry the drift; the pair ratios (head/base of a block) cancel what is slower than a block.")
	if len(notAA) > 0 {
		fmt.Fprintf(&b, " ! the arms of %s differ (paired p < %g over all blocks): if base and head were not the same server, this is not an A/A recording and every figure below is off.", strings.Join(notAA, ", "), o.alpha)
	}
	fmt.Fprintf(&b, "\n\n")

	fmt.Fprintf(&b, "## Rules\n\n")
	fmt.Fprintf(&b, "| rule | false alarms (95%% CI) |")
	for _, s := range shifts[1:] {
		fmt.Fprintf(&b, " power, head %s |", pct(-s))
	}
	fmt.Fprintf(&b, " median MDC | blocks used, 0%% / %s | wall time vs n = %d, 0%% / %s |\n", pct(-shifts[3]), o.n, pct(-shifts[3]))
	fmt.Fprintf(&b, "| --- | --- |%s ---: | ---: | ---: |\n", strings.Repeat(" ---: |", nShifts-1))
	trials := len(sim.windows)
	exceeds, wrong := false, map[int]int{}
	for r := range nRules {
		t := sim.tally[r]
		k := t[0].calls
		lo, hi := wilson(k, trials)
		mark := ""
		if lo > o.alpha {
			mark, exceeds = " !", true
		}
		fmt.Fprintf(&b, "| %s | %.1f%% (%.1f–%.1f%%)%s |", ruleNames[r], 100*float64(k)/float64(trials), 100*lo, 100*hi, mark)
		for si := 1; si < nShifts; si++ {
			fmt.Fprintf(&b, " %.1f%% |", 100*float64(t[si].slower)/float64(trials))
			wrong[r] += t[si].faster
		}
		b0, b10 := float64(t[0].blocks)/float64(trials), float64(t[3].blocks)/float64(trials)
		fmt.Fprintf(&b, " %s | %.1f / %.1f | %.2f / %.2f |\n", mdcPct(medianOf(sim.mdc[r])),
			b0, b10, b0/float64(o.n), b10/float64(o.n))
	}
	fmt.Fprintf(&b, "\n")
	fmt.Fprintf(&b, "- mw+spread is the old rule: Mann-Whitney U on the pooled arms, p < %g, and |median(head)/median(base) − 1| beyond the larger arm's MAD/median. mw is the U test alone. paired is the harness's rule: Wilcoxon signed-rank of ln(head/base) over the blocks. paired+seq and paired+seq-pocock look at %d, %d, ..., %d blocks with the levels of O'Brien-Fleming and Pocock alpha spending and stop at the first p below its look's level.\n",
		o.alpha, firstLook, firstLook+1, o.max)
	fmt.Fprintf(&b, "- False alarms: calls either way at shift 0, with Wilson's 95%% interval over the %d trials; ! marks a rule whose interval lies above alpha %g%s. Power: calls that the head is slower, at each planted shift.",
		trials, o.alpha, map[bool]string{true: " (it exceeds alpha)", false: " (none does)"}[exceeds])
	var ww []string
	for r := range nRules {
		if wrong[r] > 0 {
			ww = append(ww, fmt.Sprintf("%s %d", ruleNames[r], wrong[r]))
		}
	}
	if len(ww) > 0 {
		fmt.Fprintf(&b, " Calls the wrong way (faster) at a planted slowdown, over all shifts: %s.\n", strings.Join(ww, ", "))
	} else {
		fmt.Fprintf(&b, " No rule called a planted slowdown faster.\n")
	}
	fmt.Fprintf(&b, "- Median MDC: the minimum detectable change each rule reports at %g power (PairedMDC of the log ratios it used, UnpairedMDC of the log values for the U rules; the spread condition of mw+spread is not in it), median over the shift-0 trials; ∞: too few blocks for any p < alpha.\n", result.MDCPower)
	fmt.Fprintf(&b, "- Wall time: blocks used / n, the per-block cost being the same for every rule; the fixed rules always use n = %d.\n", o.n)
	sLo, sHi := wilson(int(math.Round(o.alpha*float64(nonOverlap))), nonOverlap)
	fmt.Fprintf(&b, "- The intervals count the trials as independent: they are the resampling's error. The trials come from at most %d distinct windows (%s × 2 arm orders), which overlap: the recording holds %s of %d, so its own uncertainty is wider (a rate of %g read from %d independent comparisons: %.1f–%.1f%%). Record more blocks to narrow it.\n",
		2*blocks, plural(blocks, "start"), plural(nonOverlap, "non-overlapping window"), o.n, o.alpha, nonOverlap, 100*sLo, 100*sHi)

	if cm != nil {
		writeCommonMode(&b, o, cm)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCommonMode(b *strings.Builder, o options, cm *commonMode) {
	fmt.Fprintf(b, "\n## Common-mode model: duet against interleaved pairs (a model, not a measurement)\n\n")
	fmt.Fprintf(b, "| sequence | one run, all variation | one run, fast part | pair ratio | rho1, a block's two runs |\n")
	fmt.Fprintf(b, "| --- | ---: | ---: | ---: | ---: |\n")
	for _, s := range cm.seqs {
		fmt.Fprintf(b, "| %s | %.1f%% | %.1f%% | %.1f%% | %.2f |\n", s.name, s.total, s.fast, s.pair, s.rho1)
	}
	fmt.Fprintf(b, "\n| arrangement | spread, pair ratios | median MDC |")
	for _, s := range shifts[1:4] {
		fmt.Fprintf(b, " paired power, head %s |", pct(-s))
	}
	fmt.Fprintf(b, "\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range cm.rows {
		fmt.Fprintf(b, "| %s | %.1f%% | %s |", r.label, r.spread, mdcPct(r.mdc))
		for si := 1; si < 4; si++ {
			fmt.Fprintf(b, " %.1f%% |", 100*r.power[si])
		}
		fmt.Fprintf(b, "\n")
	}
	fmt.Fprintf(b, "\n")
	fmt.Fprintf(b, "- Spreads are MADs of log throughput (about MAD/median). A run is slow + fast: slow is what neighbouring blocks share, which any pair cancels; fast is the rest, a disturbance and the run's own noise. rho1 is the correlation of a block's two fast parts, the share back-to-back runs already cancel. Both come from two contrasts, the pair ratio and the block's level against its neighbours', assuming the fast parts of different blocks independent; a curved or stepped drift leaks in as fast and shared.\n")
	fmt.Fprintf(b, "- Model: a run is slow + fast + its own noise. An interleaved pair's log ratio has variance 2σ²(1 − rho1); a duet pair's 2σ²(1 − c), c being the part of the fast variation two simultaneous runs would see alike. The duet rows scale each sequence's recorded log ratios by √((1 − c)/(1 − rho1)), c raised to the sequence's rho1 (if a disturbance's correlation does not grow with the time gap, c ≥ rho1: duet is never worse). The paired rule with n = %d is applied to the same windows as above; scaling does not change its false alarms.\n", o.n)
	fmt.Fprintf(b, "- What it cannot show: c itself. Sequential runs cannot tell a disturbance shorter than one run from a run's own noise, so c is assumed, not measured; c → 1 (every fast fluctuation common, as if head_i = base_i × the smoothed ratio) would make a duet ratio noiseless, which no recording supports. Nor does it show what running both arms at once costs: they share cores, caches, memory bandwidth and interrupts, and interfere; each gets half the machine, so a duet measures another operating point; and a disturbance need not hit both arms equally. A duet block takes one run's time instead of two. This machine has 2 cores, too few for two servers and two generators at once, so no duet was run.\n")
}

// drift is the ratio of the largest to the smallest rolling median of xs
// over rollingWindow consecutive values (all of them when fewer).
func drift(xs []float64) float64 {
	w := min(rollingWindow, len(xs))
	hi, lo := math.Inf(-1), math.Inf(1)
	for i := 0; i+w <= len(xs); i++ {
		m := medianOf(xs[i : i+w])
		hi, lo = max(hi, m), min(lo, m)
	}
	return hi / lo
}

// wilson is Wilson's score interval for k successes in n trials, at 95%.
func wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p, nf, z2 := float64(k)/float64(n), float64(n), z95*z95
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return max(0, center-half), min(1, center+half)
}

// mdcPct is a log-ratio MDC as a percentage change.
func mdcPct(m float64) string {
	switch {
	case math.IsInf(m, 1):
		return "∞"
	case math.IsNaN(m):
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", (math.Exp(m)-1)*100)
}

// pct formats a fraction as a signed whole percentage ("−3%").
func pct(f float64) string {
	s := fmt.Sprintf("%+g%%", math.Round(f*1000)/10)
	return strings.Replace(s, "-", "−", 1)
}

func fmtFrac(c float64) string { return strconv.FormatFloat(c, 'f', -1, 64) }

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
