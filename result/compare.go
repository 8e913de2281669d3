package result

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/stats"
)

// The comparison of a two-arm sweep (docs/compare.md).
//
// The harness measures both arms at each compared (batch, connections) in
// blocks: one base and one head repeat back to back, in ABBA order from
// block to block (twoarm.go). DecideComparison turns those repeats — the
// curve's points with role "compare" — into verdicts. It is pure and reads
// nothing but the curve, so the publisher re-derives a document's
// comparison with the same function and refuses one that was edited.
//
// The rule, per compared point. The primary test is fixed, not chosen
// per run: the paired one (ComparePrimary).
//
//   - A block counts when both its repeats are clean. Each block gives
//     d = ln(head/base): the two ran seconds apart, so a drift of the
//     machine over the run moves both and cancels in d, where an unpaired
//     test reads it as noise.
//   - Fewer blocks than a two-sided signed-rank test needs to reach alpha
//     (stats.MinPairs: 6 at 0.05): cannot_conclude, naming what was lost
//     and why. Never within_noise: that needs a test that could have
//     seen a change.
//   - The change is the Hodges-Lehmann estimate of d (exp - 1), with
//     Tukey's interval; the test is the exact Wilcoxon signed-rank test.
//     p < alpha: faster or slower. Otherwise within_noise, with the
//     minimum detectable change (MDCPct) at alpha and 80% power saying
//     what the test could have seen; without one, cannot_conclude.
//   - A generator-capped sample makes its arm a lower bound. A capped head
//     significantly above the base is still provably faster, a capped base
//     with a significantly slower head is still provably slower: both with
//     AtLeast. Every other case with a capped arm is cannot_conclude, since
//     the capped arm's true figure may lie anywhere above its own.
//   - p99 gets the same paired test on the blocks' p99 ("worse" when
//     higher). A capped arm's p99 includes the generator's own queueing,
//     so with one it is cannot_conclude.
//   - Beside it, the benchstat figure: the Mann-Whitney U test on each
//     arm's clean repeats pooled (Unpaired), which decides nothing.
//   - Sensitivity: when the repeats left out as not clean (contended,
//     say) would give another verdict had they counted, the point says
//     so. A gate that lost its evidence must not look like a pass.
//
// Only the headline gates; the other points are reported without a
// multiple-comparison correction (Comparison.Gate says so).

// Gate and Method are the Comparison's fixed descriptions.
const (
	CompareGate    = "headline: only the headline batch's compared point gates; the other points are reported, uncorrected for multiple comparisons"
	ComparePrimary = "paired"
	CompareMethod  = "paired: exact two-sided Wilcoxon signed-rank test of ln(head/base) over ABBA blocks (adjacent base and head repeats), Hodges-Lehmann estimate with Tukey's interval, minimum detectable change at 80% power; beside it the unpaired Mann-Whitney U test (as benchstat), which decides nothing"
)

// The stopping rules (COMPARE_STOP): sequential looks after every clean
// block from stats.MinPairs on, with alpha spent over them as Pocock's or
// O'Brien-Fleming's boundaries spend it (Lan-DeMets), or one test at the
// end.
const (
	StopPocock         = "pocock"
	StopOBF            = "obf"
	StopFixed          = "fixed"
	DefaultCompareStop = StopOBF
)

// The comparison's scopes (COMPARE_SCOPE, docs/compare.md): blocks at the
// headline batch's rung only, or at every batch size's rung.
const (
	ScopeHeadline       = "headline"
	ScopeCurve          = "curve"
	DefaultCompareScope = ScopeHeadline
)

// SequentialLevel is the nominal level a paired test over n clean blocks
// is held to under the stopping rule stop, when at most reps are run:
// alpha for a fixed design (or an empty rule: a document from before
// sequential stopping), else the level of look n among the looks
// stats.MinPairs(alpha)..reps (stats.SequentialLevels), so that looking
// after every block keeps the chance of any false call at alpha. 0 means
// look n cannot stop.
func SequentialLevel(stop string, n, reps int, alpha float64) float64 {
	first := stats.MinPairs(alpha)
	if stop == StopFixed || stop == "" || reps <= first {
		return alpha
	}
	levels := stats.SequentialLevels(looksTo(first, reps), alpha, spending(stop))
	switch {
	case levels == nil:
		return alpha
	case n < first:
		return 0
	case n > reps:
		n = reps
	}
	return levels[n-first]
}

// spending is a sequential rule's alpha-spending function.
func spending(stop string) func(t, alpha float64) float64 {
	if stop == StopOBF {
		return stats.SpendOBF
	}
	return stats.SpendPocock
}

// looksTo are the looks first, first+1, ..., last.
func looksTo(first, last int) []int {
	var looks []int
	for k := first; k <= last; k++ {
		looks = append(looks, k)
	}
	return looks
}

// FinalLevel is the level a comparison's test over n clean blocks is
// held to once the run is over, when at most reps were planned under the
// stopping rule stop: SequentialLevel's when n reached reps (or for a
// fixed design); when the run ended short of reps, with no look left to
// take (blocks lost, the budget spent), its last look spends the alpha
// its earlier looks left (stats.FinalLevels), instead of being held to
// an interim look's level. A look that stopped the run early had p below
// its interim level, which is never above this one: the verdict is the
// same. 0: n is too few to stop.
func FinalLevel(stop string, n, reps int, alpha float64) float64 {
	first := stats.MinPairs(alpha)
	if stop == StopFixed || stop == "" || reps <= first || n >= reps || n < first {
		return SequentialLevel(stop, n, reps, alpha)
	}
	levels := stats.FinalLevels(looksTo(first, n), reps, alpha, spending(stop))
	if levels == nil {
		return alpha
	}
	return levels[len(levels)-1]
}

// DefaultAlpha and DefaultCompareReps are the two-arm sweep's defaults:
// 8 blocks, the fewest with which a paired test can say something at
// 0.05 despite one lost block (6 is the least that can reach it at all).
const (
	DefaultAlpha       = 0.05
	DefaultCompareReps = 8
	// MDCPower is the power the minimum detectable change is planned at.
	MDCPower = 0.8
)

// DecideComparison builds the comparison from a two-arm sweep's curve: one
// ComparedPoint per (batch, connections) that has points with role
// "compare", in ascending batch, and the headline batch's as Headline.
// cfg gives the design: the headline batch, the clean blocks asked
// (COMPARE_REPS), the test's level (ALPHA; the intervals are at 1 -
// ALPHA) and the stopping rule (COMPARE_STOP). It returns nil when the
// curve has no point with an arm (a single-arm sweep).
func DecideComparison(curve []Point, cfg Config) *Comparison {
	if !slices.ContainsFunc(curve, func(p Point) bool { return p.Arm != "" }) {
		return nil
	}
	headlineBatch, reps, alpha := cfg.HeadlineBatch, cfg.CompareReps, cfg.Alpha
	stop := cfg.CompareStop
	if stop == "" {
		stop = StopFixed
	}
	c := &Comparison{
		Alpha: alpha, Confidence: 1 - alpha, Reps: reps, Stop: stop,
		Gate: CompareGate, Method: CompareMethod,
		Points: []ComparedPoint{},
	}
	type key struct{ batch, conns int }
	var keys []key
	for _, p := range curve {
		k := key{p.Batch, p.Connections}
		if p.Role == RoleCompare && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.batch, b.batch), cmp.Compare(a.conns, b.conns))
	})
	found := false
	for _, k := range keys {
		var ps []Point
		for _, p := range curve {
			if p.Role == RoleCompare && p.Batch == k.batch && p.Connections == k.conns {
				ps = append(ps, p)
			}
		}
		cp := ComparePoint(k.batch, k.conns, ps, alpha, stop, reps)
		c.Points = append(c.Points, cp)
		if k.batch == headlineBatch && !found {
			c.Headline, found = cp, true
		}
	}
	if !found {
		c.Headline = ComparePoint(headlineBatch, 0, nil, alpha, stop, reps)
		c.Headline.Reason = fmt.Sprintf("no compared point at the headline batch %d: the first pass found no rung to compare there", headlineBatch)
	}
	return c
}

// Block is one base and one head repeat of a compared point, run back to
// back (the same Rep); either may be missing.
type Block struct {
	Rep        int
	Base, Head *Point
}

// Blocks pairs a compared point's repeats (both arms' points with role
// "compare", in run order) by Rep, in the order the blocks ran.
func Blocks(ps []Point) []Block {
	var out []Block
	at := map[int]int{}
	for i := range ps {
		p := &ps[i]
		j, ok := at[p.Rep]
		if !ok {
			j = len(out)
			at[p.Rep] = j
			out = append(out, Block{Rep: p.Rep})
		}
		switch p.Arm {
		case ArmBase:
			out[j].Base = p
		case ArmHead:
			out[j].Head = p
		}
	}
	return out
}

// counted is whether a repeat counts as a sample: clean, or (for the
// sensitivity check) any repeat that measured a throughput.
type counted func(p *Point) bool

func CleanRepeat(p *Point) bool { return p != nil && p.Status == StatusOK && p.Clean }

func measuredRepeat(p *Point) bool {
	return p != nil && p.Status == StatusOK && p.ThroughputPerS > 0
}

// ComparePoint applies the rule to one compared point's repeats (both
// arms' points with role "compare", in run order), under the stopping
// rule stop with at most reps clean blocks.
func ComparePoint(batch, conns int, ps []Point, alpha float64, stop string, reps int) ComparedPoint {
	cp := decidePoint(batch, conns, ps, alpha, stop, reps, CleanRepeat)
	if cp.Base.Failed+cp.Head.Failed == 0 {
		return cp
	}
	all := decidePoint(batch, conns, ps, alpha, StopFixed, reps, measuredRepeat)
	if all.Verdict != cp.Verdict && all.NPairs > cp.NPairs {
		cp.Sensitivity = fmt.Sprintf("counting the %s left out, the verdict would be %s: %s",
			plural(cp.Base.Failed+cp.Head.Failed, "repeat"), Phrase(all.Verdict), testFigures(all))
	}
	return cp
}

func decidePoint(batch, conns int, ps []Point, alpha float64, stop string, reps int, use counted) ComparedPoint {
	conf := 1 - alpha
	blocks := Blocks(ps)
	var base, head []Point
	var d, dp99 []float64
	for _, b := range blocks {
		if b.Base != nil {
			base = append(base, *b.Base)
		}
		if b.Head != nil {
			head = append(head, *b.Head)
		}
		if use(b.Base) && use(b.Head) {
			d = append(d, math.Log(b.Head.ThroughputPerS/b.Base.ThroughputPerS))
			if b.Base.LatencyNs.P99 > 0 && b.Head.LatencyNs.P99 > 0 {
				dp99 = append(dp99, math.Log(float64(b.Head.LatencyNs.P99)/float64(b.Base.LatencyNs.P99)))
			}
		}
	}
	cp := ComparedPoint{
		Batch: batch, Connections: conns, Test: ComparePrimary,
		Base: armStats(base, conf, use), Head: armStats(head, conf, use),
		NPairs: len(d), Blocks: len(blocks), Reruns: reruns(blocks),
	}
	cp.Memory = compareMemory(blocks, alpha)
	b, h := cp.Base, cp.Head
	cp.NBase, cp.NHead = b.N, h.N
	cp.SpreadPct = max(stats.RelSpreadPct(b.SamplesPerS), stats.RelSpreadPct(h.SamplesPerS))
	cp.Unpaired = unpaired(b, h, alpha)
	cp.P99Verdict = CompareCannotConclude
	if len(d) > 0 {
		est, lo, hi, ok := stats.PairedShiftCI(d, conf)
		cp.ChangePct = fptr((math.Exp(est) - 1) * 100)
		if ok {
			cp.CILowPct, cp.CIHighPct = fptr((math.Exp(lo)-1)*100), fptr((math.Exp(hi)-1)*100)
		}
		cp.PValue = fptr(stats.SignedRank(d))
		cp.Level = FinalLevel(stop, len(d), reps, alpha)
		cp.MDCPct = mdcPct(stats.PairedMDC(d, cp.Level, MDCPower))
	}
	if minN := stats.MinPairs(alpha); len(d) < minN {
		cp.Verdict = CompareCannotConclude
		cp.Reason = fmt.Sprintf("cannot conclude: %d of %d blocks have both arms clean, and a paired test over %d cannot reach p < %s (the smallest p it can give is %s; %d are needed)%s",
			len(d), len(blocks), len(d), FormatLevel(alpha), FormatLevel(stats.MinSignedRankP(len(d))), minN, lostWhy(blocks, use))
		return cp
	}
	p, change := *cp.PValue, *cp.ChangePct
	level := cp.Level
	sig := p < level
	figs := testFigures(cp)
	// The level, and why it is not alpha when a stopping rule lowered it.
	below, above := "p < "+FormatLevel(level), "p ≥ "+FormatLevel(level)
	if why := LevelWhy(stop, len(d), reps, alpha, level); why != "" {
		below += ", the level of " + why
		above += ", the level of " + why
	}
	switch {
	case !b.LowerBound && !h.LowerBound:
		switch {
		case sig && change > 0:
			cp.Verdict, cp.Reason = CompareFaster, fmt.Sprintf("faster: %s (%s)", below, figs)
		case sig:
			cp.Verdict, cp.Reason = CompareSlower, fmt.Sprintf("slower: %s (%s)", below, figs)
		case cp.MDCPct == nil:
			cp.Verdict, cp.Reason = CompareCannotConclude, fmt.Sprintf("cannot conclude: %s and the pairs' spread leaves no change the test could detect (%s)", above, figs)
		default:
			cp.Verdict, cp.Reason = CompareWithinNoise, fmt.Sprintf("within noise: %s; the test could have detected a change of ±%.1f%% (%s)", above, *cp.MDCPct, figs)
		}
	case h.LowerBound && !b.LowerBound && sig && change > 0:
		cp.Verdict, cp.AtLeast = CompareFaster, true
		cp.Reason = fmt.Sprintf("faster, at least %+.1f%%: the head is generator-capped (a lower bound) and still significantly above the base (%s)", change, figs)
	case b.LowerBound && !h.LowerBound && sig && change < 0:
		cp.Verdict, cp.AtLeast = CompareSlower, true
		cp.Reason = fmt.Sprintf("slower, at least %.1f%%: the base is generator-capped (a lower bound) and the head is still significantly below it (%s)", change, figs)
	default:
		cp.Verdict = CompareCannotConclude
		cp.Reason = fmt.Sprintf("cannot conclude: %s generator-capped (a lower bound), and the figures do not prove a change in the direction the bound allows (%s)", cappedArms(b, h), figs)
	}
	if lost := lostWhy(blocks, use); lost != "" {
		cp.Reason += lost
	}

	switch {
	case b.LowerBound || h.LowerBound || len(dp99) < stats.MinPairs(alpha):
	default:
		est, _, _, _ := stats.PairedShiftCI(dp99, conf)
		cp.P99ChangePct = fptr((math.Exp(est) - 1) * 100)
		cp.P99PValue = fptr(stats.SignedRank(dp99))
		cp.P99Verdict = CompareWithinNoise
		if *cp.P99PValue < alpha {
			cp.P99Verdict = P99Better
			if *cp.P99ChangePct > 0 {
				cp.P99Verdict = P99Worse
			}
		}
	}
	return cp
}

// testFigures is the primary test's figures in words.
func testFigures(cp ComparedPoint) string {
	s := fmt.Sprintf("change %s, %s, %d pairs", pctOr(cp.ChangePct), FormatP(cp.PValue), cp.NPairs)
	if cp.MDCPct != nil {
		s += fmt.Sprintf(", detectable ±%.1f%%", *cp.MDCPct)
	}
	return s + "; unpaired " + unpairedFigures(cp.Unpaired, cp.NBase, cp.NHead)
}

func unpairedFigures(u UnpairedTest, nb, nh int) string {
	return fmt.Sprintf("%s, %s, n = %d + %d", pctOr(u.ChangePct), FormatP(u.PValue), nb, nh)
}

// unpaired is the Mann-Whitney figure on the arms' pooled clean repeats.
func unpaired(b, h ArmStats, alpha float64) UnpairedTest {
	var u UnpairedTest
	if b.N == 0 || h.N == 0 || b.MedianPerS <= 0 {
		return u
	}
	u.ChangePct = fptr((h.MedianPerS/b.MedianPerS - 1) * 100)
	u.PValue = fptr(stats.MannWhitneyU(b.SamplesPerS, h.SamplesPerS))
	if _, lo, hi, ok := stats.ShiftCI(b.SamplesPerS, h.SamplesPerS, 1-alpha); ok {
		u.CILowPct, u.CIHighPct = fptr((lo-1)*100), fptr((hi-1)*100)
	}
	u.MDCPct = mdcPct(stats.UnpairedMDC(logs(b.SamplesPerS), logs(h.SamplesPerS), alpha, MDCPower))
	return u
}

// mdcPct is a minimum detectable change in log units as a percentage, or
// nil when there is none (too few samples: +Inf; bad input: NaN).
func mdcPct(m float64) *float64 {
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return nil
	}
	return fptr((math.Exp(m) - 1) * 100)
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// reruns counts the blocks that lost a repeat (failed, contended, not
// clean): for each the compare phase ran another block, within its
// budget (MaxBlocks).
func reruns(blocks []Block) int {
	n := 0
	for _, b := range blocks {
		if !CleanRepeat(b.Base) || !CleanRepeat(b.Head) {
			n++
		}
	}
	return n
}

// lostWhy says which blocks did not count and why, or "".
func lostWhy(blocks []Block, use counted) string {
	var why []string
	for _, b := range blocks {
		for _, p := range []*Point{b.Base, b.Head} {
			if p == nil || use(p) {
				continue
			}
			why = append(why, fmt.Sprintf("point %d (%s): %s", p.Index, p.Arm, notCleanWhy(p)))
		}
	}
	if len(why) == 0 {
		return ""
	}
	const most = 4
	more := ""
	if len(why) > most {
		more = fmt.Sprintf("; and %d more", len(why)-most)
		why = why[:most]
	}
	return "; left out: " + strings.Join(why, "; ") + more
}

// notCleanWhy is why a repeat did not count, in a few words.
func notCleanWhy(p *Point) string {
	switch {
	case p.Status != StatusOK:
		return "failed: " + p.FailReason
	case p.Contended:
		return "contended: " + Contention(p.ServerCPU, p.GeneratorCPU)
	case p.Errors > 0:
		return fmt.Sprintf("%d errors", p.Errors)
	}
	return "not clean"
}

// armStats summarizes one arm's repeats: those use accepts are samples,
// the others are counted as failed.
func armStats(ps []Point, confidence float64, use counted) ArmStats {
	a := ArmStats{SamplesPerS: []float64{}, P99SamplesNs: []int64{}, Points: []int{}}
	for i := range ps {
		p := &ps[i]
		if !use(p) {
			a.Failed++
			continue
		}
		a.SamplesPerS = append(a.SamplesPerS, p.ThroughputPerS)
		a.P99SamplesNs = append(a.P99SamplesNs, p.LatencyNs.P99)
		a.Points = append(a.Points, p.Index)
		a.LowerBound = a.LowerBound || p.LowerBound
	}
	a.N = len(a.SamplesPerS)
	if a.N == 0 {
		return a
	}
	s := stats.Summarize(a.SamplesPerS, confidence)
	a.MedianPerS = s.Median
	if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) && !math.IsNaN(s.Lo) && !math.IsNaN(s.Hi) {
		a.CILowPerS, a.CIHighPerS = fptr(s.Lo), fptr(s.Hi)
	}
	return a
}

func cappedArms(b, h ArmStats) string {
	switch {
	case b.LowerBound && h.LowerBound:
		return "both arms are"
	case b.LowerBound:
		return "the base is"
	}
	return "the head is"
}

func fptr[T any](v T) *T { return &v }

// The gate's policies (FAIL_ON, ceiling publish comment --fail-on): the
// headline verdicts that fail a check.
const (
	FailOnNever        = "never"        // the verdict informs; nothing fails on it
	FailOnSlower       = "slower"       // a significant headline regression fails
	FailOnInconclusive = "inconclusive" // a headline that could not be concluded fails
	// FailOnMemory: the headline's server memory per connection
	// significantly higher fails (ComparedPoint.Memory, MemoryHigher).
	FailOnMemory = "memory"
)

// ErrFailOn is a policy that is none of them.
var ErrFailOn = errors.New("want never, or slower, inconclusive and memory, alone or comma-separated (slower,inconclusive)")

// ParseFailOn reads a policy: slower, inconclusive, memory, any of them
// comma-separated, or never (or empty). The memory clause is
// FailsOnMemory's.
func ParseFailOn(policy string) (slower, inconclusive bool, err error) {
	if policy == "" || policy == FailOnNever {
		return false, false, nil
	}
	for _, part := range strings.Split(policy, ",") {
		switch strings.TrimSpace(part) {
		case FailOnSlower:
			slower = true
		case FailOnInconclusive:
			inconclusive = true
		case FailOnMemory:
		default:
			return false, false, fmt.Errorf("%q, %w", policy, ErrFailOn)
		}
	}
	return slower, inconclusive, nil
}

// FailsOnMemory reports whether a policy (checked by ParseFailOn) holds
// the memory clause.
func FailsOnMemory(policy string) bool {
	for _, part := range strings.Split(policy, ",") {
		if strings.TrimSpace(part) == FailOnMemory {
			return true
		}
	}
	return false
}

// MemoryFails is the headline's memory verdict when the policy gates on
// it and it is higher: the reason, or "".
func (c *Comparison) MemoryFails(policy string) string {
	if c == nil || !FailsOnMemory(policy) {
		return ""
	}
	if m := c.Headline.Memory; m != nil && m.Verdict == MemoryHigher {
		return m.Reason
	}
	return ""
}
