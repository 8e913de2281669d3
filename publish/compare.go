package publish

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/result"
)

// Row verdicts of a comparison: the harness's words (result.Compare*), so
// the comment, the document and --fail-on say the same thing.
const (
	Faster         = result.CompareFaster         // significantly faster (two-arm only)
	Slower         = result.CompareSlower         // significantly slower (two-arm only)
	WithinNoise    = result.CompareWithinNoise    // no change the data can tell from noise
	CannotConclude = result.CompareCannotConclude // see Row.Reason
	HeadOnly       = "head_only"                  // no baseline to compare with
)

// Modes of a comparison: where its verdicts come from.
const (
	// ModeTwoArm: both arms were measured in one job, interleaved and
	// repeated (the head document's own comparison, re-derived from its
	// samples). The only mode that calls faster or slower.
	ModeTwoArm = "two-arm"
	// ModeCrossRun: the fallback. The head run against a baseline
	// published earlier by another run, on another runner. Runner variance
	// is not in its estimate, so it never calls faster or slower.
	ModeCrossRun = "cross-run"
	// ModeHeadOnly: no baseline; nothing is compared.
	ModeHeadOnly = "head-only"
)

// Side is one run's (or one arm's) figure at one batch size: a cross-run
// ceiling, or a two-arm median over the compared repeats.
type Side struct {
	Found          bool // a clean point (cross-run) or clean repeat (two-arm) exists
	ThroughputPerS float64
	P99Ns          int64
	Connections    int
	LowerBound     bool // generator-capped: the server's figure is at least this
	Verdict        string
	AtLadderTop    bool

	Arm *result.ArmStats // two-arm: every sample, the median's CI, n
}

// Row compares one batch size (or the headline).
type Row struct {
	Batch       int
	Connections int      // two-arm: the compared rung; cross-run: 0 (each side has its own)
	Base, Head  *Side    // nil: the run has no such batch
	DeltaPct    *float64 // head against base, %
	CILowPct    *float64 // two-arm: confidence interval of the change
	CIHighPct   *float64 //
	PValue      *float64 // two-arm: the paired test's (Wilcoxon signed-rank), two-sided
	NPairs      int      // two-arm: blocks with both arms clean
	MDCPct      *float64 // two-arm: the change the test could have detected; nil: none
	Sensitivity string   // two-arm: what the left-out repeats would have said
	NBase       int      // two-arm: clean repeats per arm
	NHead       int      //
	SpreadPct   *float64 // two-arm: the arms' MAD/median; cross-run: the A-A floor used
	AtLeast     bool     // the verdict rests on a lower bound
	Verdict     string   // Faster | Slower | WithinNoise | CannotConclude | HeadOnly
	Reason      string   // why it cannot conclude, or what the verdict rests on
	P99Verdict  string   // two-arm: better | worse | within_noise | cannot_conclude; cross-run: ""
	P99DeltaPct *float64 //
	P99PValue   *float64 //
	// Memory is the server's memory per connection, head against base
	// (two-arm only; nil where no repeat measured one).
	Memory *result.MemoryComparison
}

// CompareOptions say where the baseline came from.
type CompareOptions struct {
	// MergeBase is the pull request's merge-base commit, when known. A
	// cross-run baseline measured elsewhere is reported as a fallback.
	MergeBase string
	// BaseMissing explains a missing baseline (base == nil).
	BaseMissing string
	// Alone: one run shown by itself (a job summary on a push), not a
	// pull request's head: with no baseline it is called the run, not
	// the head.
	Alone bool
	// BaseSource describes where the baseline was read from, e.g.
	// "benchmark/published/ceiling-load.json on main".
	BaseSource string
	// HeadName labels the head document in a ComparisonError (default
	// "head").
	HeadName string
	// BaseGiven says a baseline was named even if base is nil: a two-arm
	// head does not use one, and a note says so.
	BaseGiven bool
}

// Comparison is everything the comment shows, decided; Render only formats.
type Comparison struct {
	Mode      string // ModeTwoArm | ModeCrossRun | ModeHeadOnly
	Generator string
	// Base is the cross-run baseline; nil in the other modes (a two-arm
	// document holds both arms itself).
	Base *result.Result
	Head *result.Result
	// Alone: a single-arm run shown by itself (CompareOptions.Alone).
	Alone bool
	// Stats is the head document's two-arm comparison (ModeTwoArm), after
	// it was re-derived from the curve and found equal.
	Stats *result.Comparison

	// FloorPct is the cross-run noise floor: the larger of the two runs'
	// A-A floors. Nil when either run has none, and in the other modes.
	FloorPct *float64

	Headline Row
	Rows     []Row // by batch size, ascending (two-arm: by compared point)

	// Alerts weaken the comparison; Render puts them at the top, as GitHub
	// alert blocks, right under the verdict line.
	Alerts    []Alert
	Warnings  []Warning
	Footnotes []Note
}

// Alert levels, in the order Render shows them.
const (
	AlertCaution = "CAUTION" // the comparison's method cannot carry a verdict
	AlertWarning = "WARNING" // something specific weakens it
	AlertNote    = "NOTE"    // worth knowing, does not weaken it
)

// Alert is one line of an alert block.
type Alert struct {
	Level string
	Note
}

// Note is a sentence of ours with untrusted values in it: Render escapes
// Args (and only Args) into the %s verbs of Format.
type Note struct {
	Format string
	Args   []string
}

func note(format string, args ...string) Note { return Note{Format: format, Args: args} }

// Warning is one warning from one run.
type Warning struct {
	Run  string // "base" | "head" | "comparison"
	Text string
}

// ComparisonError refuses a head document whose comparison does not follow
// from its own samples (or that has two arms and no comparison, or the
// reverse). The command line maps it to exit status 2 with errors.As.
type ComparisonError struct{ ValidationError }

func (e *ComparisonError) Unwrap() error { return &e.ValidationError }

// Compare decides the comparison of head against base. A head document
// that carries a two-arm comparison is compared with itself: the
// comparison is re-derived from its curve (result.DecideComparison) and
// must equal the one it carries; base is then not used (a note says so).
// Otherwise base (nil: none) is the cross-run fallback.
func Compare(base, head *result.Result, opts CompareOptions) (*Comparison, error) {
	if ps := checkComparison(head); len(ps) > 0 {
		name := opts.HeadName
		if name == "" {
			name = "head"
		}
		return nil, &ComparisonError{ValidationError{Name: name, Problems: ps}}
	}
	c := &Comparison{Generator: head.Meta.Generator, Head: head}
	switch {
	case head.Comparison != nil:
		c.Mode, c.Stats = ModeTwoArm, head.Comparison
		c.twoArm(base != nil || opts.BaseGiven)
	case base != nil:
		c.Mode, c.Base = ModeCrossRun, base
		c.crossRun(opts)
	default:
		c.Mode, c.Alone = ModeHeadOnly, opts.Alone
		c.headOnly()
	}
	c.runAlerts()
	c.Footnotes = append(c.Footnotes, footnotes(c, opts)...)
	return c, nil
}

// ---- two-arm

func (c *Comparison) twoArm(baseGiven bool) {
	s := c.Stats
	c.Headline = comparedRow(&s.Headline)
	for i := range s.Points {
		c.Rows = append(c.Rows, comparedRow(&s.Points[i]))
	}
	if baseGiven {
		c.Alerts = append(c.Alerts, Alert{AlertNote, note("The head document measured both arms in one job; the --base document (a result published by another run) is not used.")})
	}
	if c.Head.Config.Quick {
		c.Alerts = append(c.Alerts, Alert{AlertWarning, note("Quick comparison (QUICK=1): few batch sizes and short points, a smoke test rather than a measurement.")})
	}
	// Each distinct compared point once: the headline is also in Points.
	distinct := []*result.ComparedPoint{&s.Headline}
	for i := range s.Points {
		if !sameCompared(&s.Points[i], &s.Headline) {
			distinct = append(distinct, &s.Points[i])
		}
	}
	for _, cp := range distinct {
		at := fmt.Sprintf("batch %d, %d connections", cp.Batch, cp.Connections)
		if cp.Connections == 0 {
			c.Alerts = append(c.Alerts, Alert{AlertWarning, note("No compared point at the headline batch: %s.", cp.Reason)})
			continue
		}
		if e := cp.Ended; e != nil && e.Kind != result.EndDecided && e.Kind != result.EndPlanned {
			c.Alerts = append(c.Alerts, Alert{AlertWarning, note(fmt.Sprintf("Blocks cut short at %s: %s.", at, e.Text))})
		} else if e == nil && (cp.NBase < s.Reps || cp.NHead < s.Reps) {
			lost := ""
			if f := cp.Base.Failed + cp.Head.Failed; f > 0 {
				lost = fmt.Sprintf(" (%d repeats failed or were not clean)", f)
			}
			c.Alerts = append(c.Alerts, Alert{AlertWarning, note(fmt.Sprintf("Too few samples at %s: n = %d + %d of the %d per arm asked for%s.",
				at, cp.NBase, cp.NHead, s.Reps, lost))})
		}
		if cp.Base.LowerBound || cp.Head.LowerBound {
			what := "its verdict cannot conclude"
			if cp.AtLeast {
				what = "its verdict rests on a lower bound: the change is at least the figure shown"
			}
			c.Alerts = append(c.Alerts, Alert{AlertWarning, note(fmt.Sprintf("Lower bound at %s: %s generator-capped (the generator ran out of CPU first), so %s.",
				at, which(cp.Base.LowerBound, cp.Head.LowerBound), what))})
		}
	}
}

// sameCompared says whether a is the same compared point as b (the
// headline is also one of Points; its alerts are given once).
func sameCompared(a, b *result.ComparedPoint) bool {
	return a.Batch == b.Batch && a.Connections == b.Connections
}

func comparedRow(cp *result.ComparedPoint) Row {
	arm := func(a *result.ArmStats) *Side {
		s := &Side{Found: a.N > 0, ThroughputPerS: a.MedianPerS, Connections: cp.Connections, LowerBound: a.LowerBound, Arm: a}
		if a.N > 0 {
			ps := make([]float64, len(a.P99SamplesNs))
			for i, v := range a.P99SamplesNs {
				ps[i] = float64(v)
			}
			// The median of the repeats' p99s: the figure the p99 test compares.
			s.P99Ns = int64(stats.Summarize(ps, 0.5).Median)
		}
		return s
	}
	spread := cp.SpreadPct
	return Row{
		Batch: cp.Batch, Connections: cp.Connections,
		Base: arm(&cp.Base), Head: arm(&cp.Head),
		DeltaPct: cp.ChangePct, CILowPct: cp.CILowPct, CIHighPct: cp.CIHighPct, PValue: cp.PValue,
		NPairs: cp.NPairs, MDCPct: cp.MDCPct, Sensitivity: cp.Sensitivity,
		NBase: cp.NBase, NHead: cp.NHead, SpreadPct: &spread, AtLeast: cp.AtLeast,
		Verdict: cp.Verdict, Reason: cp.Reason,
		P99Verdict: cp.P99Verdict, P99DeltaPct: cp.P99ChangePct, P99PValue: cp.P99PValue,
		Memory: cp.Memory,
	}
}

// ---- cross-run (the fallback)

func (c *Comparison) crossRun(opts CompareOptions) {
	base, head := c.Base, c.Head
	if base.NoiseFloorPct != nil && head.NoiseFloorPct != nil {
		f := math.Max(*base.NoiseFloorPct, *head.NoiseFloorPct)
		c.FloorPct = &f
	}
	c.Headline = c.crossRow(headlineSide(base), headlineSide(head))
	c.Headline.Batch = head.Headline.Batch
	if base.Headline.Clean && head.Headline.Clean && base.Headline.Batch != head.Headline.Batch {
		c.Headline.DeltaPct = nil
		c.Headline.Verdict, c.Headline.Reason = CannotConclude,
			fmt.Sprintf("the headline batch changed (base %d, head %d)", base.Headline.Batch, head.Headline.Batch)
	}
	batches := slices.Concat(base.Config.BatchLadder, head.Config.BatchLadder)
	slices.Sort(batches)
	for _, b := range slices.Compact(batches) {
		row := c.crossRow(ceilingSide(base, b), ceilingSide(head, b))
		row.Batch = b
		c.Rows = append(c.Rows, row)
	}

	c.Alerts = append(c.Alerts, Alert{AlertCaution, note("Different machines / runs: runner variance not in the estimate. " +
		"The head run is compared with a result published earlier by another run, so no change is called faster or slower; " +
		"a change beyond the A-A noise floor is reported as cannot conclude. Measure both arms in one job (ceiling sweep --base-target) for a verdict.")})
	if bh, hh := base.Meta.Hardware, head.Meta.Hardware; bh.CPUModel != hh.CPUModel || bh.LogicalCPUs != hh.LogicalCPUs {
		c.Alerts = append(c.Alerts, Alert{AlertWarning, note("The runs ran on different machines (base: %s; head: %s).",
			fmt.Sprintf("%s, %d CPUs", bh.CPUModel, bh.LogicalCPUs), fmt.Sprintf("%s, %d CPUs", hh.CPUModel, hh.LogicalCPUs))})
	}
	if base.Regime != head.Regime {
		c.Alerts = append(c.Alerts, Alert{AlertWarning, note("The two runs' regimes differ (base: %s; head: %s): the figures are not like for like.", base.Regime, head.Regime)})
	}
	if mb := opts.MergeBase; mb != "" && !sameCommit(base.Meta.GitRef, mb) {
		c.Alerts = append(c.Alerts, Alert{AlertWarning, note("The baseline fell back: it was measured at %s, not at the merge-base %s (no result for it), so changes between the two are part of the difference.", shortRef(base.Meta.GitRef), shortRef(mb))})
	}
	if c.FloorPct == nil {
		c.Alerts = append(c.Alerts, Alert{AlertWarning, note("No A-A noise floor in " + which(base.NoiseFloorPct == nil, head.NoiseFloorPct == nil) + ": nothing can be called within noise either.")})
	}
	if anyRow(append([]Row{c.Headline}, c.Rows...), func(s *Side) bool { return s.LowerBound }) {
		c.Alerts = append(c.Alerts, Alert{AlertWarning, note("Lower bounds: some figures are generator-capped (†), so those rows cannot conclude.")})
	}
	for _, r := range []struct {
		name string
		res  *result.Result
	}{{"baseline", base}, {"head", head}} {
		if r.res.Config.Quick {
			c.Alerts = append(c.Alerts, Alert{AlertWarning, note("The " + r.name + " run used the quick ladder (QUICK=1).")})
		}
	}
}

func (c *Comparison) crossRow(base, head *Side) Row {
	row := Row{Base: base, Head: head}
	switch {
	case base == nil || head == nil:
		row.Verdict, row.Reason = CannotConclude, "batch size measured in one run only"
		return row
	case !base.Found || !head.Found:
		row.Verdict, row.Reason = CannotConclude, "no clean point in "+which(!base.Found, !head.Found)
		return row
	}
	d := (head.ThroughputPerS - base.ThroughputPerS) / base.ThroughputPerS * 100
	row.DeltaPct = &d
	row.SpreadPct = c.FloorPct
	switch {
	case base.LowerBound || head.LowerBound:
		row.Verdict, row.Reason = CannotConclude, which(base.LowerBound, head.LowerBound)+" generator-capped (a lower bound)"
	case c.FloorPct == nil:
		row.Verdict, row.Reason = CannotConclude, "no A-A noise floor in "+which(c.Base.NoiseFloorPct == nil, c.Head.NoiseFloorPct == nil)
	case math.Abs(d) <= *c.FloorPct:
		row.Verdict, row.Reason = WithinNoise, fmt.Sprintf("inside the larger A-A noise floor (%s)", pctAbs(*c.FloorPct))
	default:
		row.Verdict, row.Reason = CannotConclude,
			fmt.Sprintf("beyond the A-A noise floor (%s), but one A-A repeat per run cannot tell a change from runner variance", pctAbs(*c.FloorPct))
	}
	return row
}

func which(base, head bool) string {
	switch {
	case base && head:
		return "base and head"
	case base:
		return "base"
	}
	return "head"
}

func headlineSide(r *result.Result) *Side {
	h := r.Headline
	return &Side{Found: h.Clean, ThroughputPerS: h.ThroughputPerS, P99Ns: h.LatencyNs.P99,
		Connections: h.Connections, LowerBound: h.LowerBound, Verdict: h.Verdict}
}

func ceilingSide(r *result.Result, batch int) *Side {
	if r == nil || !slices.Contains(r.Config.BatchLadder, batch) {
		return nil
	}
	for _, c := range r.Ceilings {
		if c.Batch == batch {
			return &Side{Found: c.Found, ThroughputPerS: c.ThroughputPerS, P99Ns: c.LatencyNs.P99,
				Connections: c.Connections, LowerBound: c.LowerBound, Verdict: c.Verdict, AtLadderTop: c.AtLadderTop}
		}
	}
	return &Side{} // in the ladder, no ceiling reported: nothing clean
}

// headName is what the comment calls the head run: "run" when it is shown
// alone, outside a pull request, where there is no head.
func (c *Comparison) headName() string {
	if c.Alone {
		return "run"
	}
	return "head"
}

// ---- head only

func (c *Comparison) headOnly() {
	h := c.Head
	c.Headline = Row{Batch: h.Headline.Batch, Head: headlineSide(h), Verdict: HeadOnly, Reason: "no baseline"}
	for _, b := range h.Config.BatchLadder {
		c.Rows = append(c.Rows, Row{Batch: b, Head: ceilingSide(h, b), Verdict: HeadOnly, Reason: "no baseline"})
	}
}

// ---- what every mode reports

// runAlerts reports what weakens any comparison: an interrupted run,
// points with errors, points that were not clean.
func (c *Comparison) runAlerts() {
	head := "head"
	if c.Mode == ModeTwoArm {
		head = "two-arm" // one document, both arms
	}
	for _, run := range []struct {
		name string
		r    *result.Result
	}{{"base", c.Base}, {head, c.Head}} {
		if run.r == nil {
			continue
		}
		if run.r.Partial {
			c.Alerts = append(c.Alerts, Alert{AlertWarning, note(fmt.Sprintf("%s run: the sweep was interrupted; only the %d points that finished are here.", run.name, len(run.r.Curve)))})
		}
		bad, contended, unclean, n, first := troubled(run.r)
		if bad > 0 {
			c.Alerts = append(c.Alerts, Alert{AlertWarning, note(fmt.Sprintf("%s run: %d of %d points had errors or failed; a figure taken with errors measures the failure, not the server.", run.name, bad, n))})
		}
		if contended > 0 {
			// The example names the processes that took the CPUs: the
			// machine's, so escaped as an argument.
			c.Alerts = append(c.Alerts, Alert{AlertWarning, note(fmt.Sprintf("%s run: %d of %d points were contended: their pinned CPUs were shared with other work (the first: %%s). A contended point is never clean, so it is neither a ceiling nor a compared repeat.", run.name, contended, n), first)})
		}
		for _, p := range run.r.Curve {
			if f := p.Fault; f != nil && f.Verdict != result.ResilienceHeld {
				c.Alerts = append(c.Alerts, Alert{AlertWarning, note(fmt.Sprintf("%s run: the resilience point (FAULT %%s %%s) is %s: %%s", run.name, words(f.Verdict)), f.Kind, f.Server, f.Reason)})
			}
		}
		if unclean > 0 {
			c.Alerts = append(c.Alerts, Alert{AlertWarning, note(fmt.Sprintf("%s run: %d more points had no errors but were not clean (saturated, short of connections, lost some or measured nothing); they are not ceilings.", run.name, unclean))})
		}
		for _, w := range run.r.Warnings {
			c.Warnings = append(c.Warnings, Warning{Run: run.name, Text: w})
		}
	}
}

// troubled counts points with errors or a failed status, and the others
// that are not clean.
// troubled counts a run's points that had errors or failed, that were
// contended (and the first one's contention in words), and that were not
// clean for another reason.
func troubled(r *result.Result) (bad, contended, unclean, total int, first string) {
	for _, p := range r.Curve {
		if p.Role == result.RoleResilience {
			continue // its errors are its fault's: its own section and alert
		}
		total++
		switch {
		case p.Errors > 0 || p.Status != result.StatusOK:
			bad++
		case p.Contended:
			if contended == 0 {
				first = result.Contention(p.ServerCPU, p.GeneratorCPU)
				if first == "" {
					first = p.VerdictReason
				}
			}
			contended++
		case !p.Clean:
			unclean++
		}
	}
	return bad, contended, unclean, total, first
}

func footnotes(c *Comparison, opts CompareOptions) []Note {
	var out []Note
	if c.Mode == ModeHeadOnly && c.Alone {
		return out // one run by itself: there is no baseline to miss
	}
	if c.Mode == ModeHeadOnly {
		why := opts.BaseMissing
		if why == "" {
			why = "no baseline result was given"
		}
		return append(out, note("No baseline: %s. The head run is shown alone; nothing is compared.", why))
	}
	if c.Mode == ModeCrossRun && opts.BaseSource != "" {
		out = append(out, note("Baseline read from %s.", opts.BaseSource))
	}
	for _, r := range []struct {
		name string
		res  *result.Result
	}{{"baseline", c.Base}, {"head", c.Head}} {
		if r.res != nil && strings.HasSuffix(r.res.Meta.GitRef, "-dirty") {
			out = append(out, note("The "+r.name+" was measured from a tree with uncommitted changes (%s).", r.res.Meta.GitRef))
		}
	}
	return out
}

// sameCommit compares a recorded git ref with a commit id, either possibly
// abbreviated.
func sameCommit(ref, commit string) bool {
	ref = strings.TrimSuffix(ref, "-dirty")
	if len(ref) < 7 || len(commit) < 7 {
		return ref == commit
	}
	return strings.HasPrefix(ref, commit) || strings.HasPrefix(commit, ref)
}

// ---- --fail-on

// Fail-on policies of `ceiling publish comment --fail-on`; slower,
// inconclusive and memory combine comma-separated
// ("slower,inconclusive").
const (
	FailOnNever        = result.FailOnNever        // the comment informs; the step never fails on a verdict
	FailOnSlower       = result.FailOnSlower       // a significant headline regression fails the step
	FailOnInconclusive = result.FailOnInconclusive // a headline that could not be concluded fails the step
	FailOnMemory       = result.FailOnMemory       // the headline's server memory per connection significantly higher fails the step
)

// RegressionError is a significant headline regression under
// FailOnSlower: the command line maps it to exit status 1 with errors.As.
type RegressionError struct {
	Generator string
	Headline  Row
}

func (e *RegressionError) Error() string {
	h := e.Headline
	return fmt.Sprintf("%s: the headline (batch %d, %d connections) is significantly slower: %s, %s, %d pairs (--fail-on slower)",
		e.Generator, h.Batch, h.Connections, plainPct(h.DeltaPct), result.FormatP(h.PValue), h.NPairs)
}

// InconclusiveError is a headline that could not be concluded under
// FailOnInconclusive (exit status 1): the gate lost its evidence, or had
// none, and a gate must not pass on that.
type InconclusiveError struct {
	Generator string
	Headline  Row
	Mode      string
}

func (e *InconclusiveError) Error() string {
	h := e.Headline
	why := h.Reason
	if e.Mode != ModeTwoArm {
		why = fmt.Sprintf("a %s comment decides nothing: only a two-arm sweep (BASE_TARGET) can conclude", e.Mode)
	}
	return fmt.Sprintf("%s: the headline (batch %d) could not be concluded: %s (--fail-on inconclusive)", e.Generator, h.Batch, why)
}

// MemoryError is a headline whose server memory per connection is
// significantly higher, under --fail-on memory (exit status 1).
type MemoryError struct {
	Generator string
	Headline  Row
}

func (e *MemoryError) Error() string {
	h := e.Headline
	return fmt.Sprintf("%s: the headline's (batch %d, %d connections) server memory per connection is %s (--fail-on memory)",
		e.Generator, h.Batch, h.Connections, h.Memory.Reason)
}

// ErrFailOn is a --fail-on value that is not a policy.
var ErrFailOn = result.ErrFailOn

// ParseFailOn checks a --fail-on value: never, or slower and/or
// inconclusive, comma separated.
func ParseFailOn(policy string) (slower, inconclusive bool, err error) {
	slower, inconclusive, err = result.ParseFailOn(policy)
	if err != nil {
		return false, false, &OptionError{fmt.Errorf("--fail-on: %w", err)}
	}
	return slower, inconclusive, nil
}

// FailOn applies a --fail-on policy: a *RegressionError when it holds
// FailOnSlower and the two-arm headline is significantly slower; an
// *InconclusiveError when it holds FailOnInconclusive and the headline
// is not a two-arm verdict of faster, slower or within noise; a
// *MemoryError when it holds the memory clause and the headline's server
// memory per connection is significantly higher.
func FailOn(c *Comparison, policy string) error {
	slower, inconclusive, err := ParseFailOn(policy)
	if err != nil {
		return err
	}
	twoArm := c.Mode == ModeTwoArm
	switch {
	case slower && twoArm && c.Headline.Verdict == Slower:
		return &RegressionError{Generator: c.Generator, Headline: c.Headline}
	case inconclusive && (!twoArm || c.Headline.Verdict == CannotConclude):
		return &InconclusiveError{Generator: c.Generator, Headline: c.Headline, Mode: c.Mode}
	case twoArm && result.FailsOnMemory(policy) && c.Headline.Memory != nil && c.Headline.Memory.Verdict == result.MemoryHigher:
		return &MemoryError{Generator: c.Generator, Headline: c.Headline}
	}
	return nil
}

func plainPct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}
