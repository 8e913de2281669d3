package result

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// WriteTable prints the sweep for a reader: errors first (a throughput taken
// with errors measures the failure), then every point, the per-batch
// ceilings, the headline with its regime and the A-A noise floor beside it,
// and the warnings. A lower-bound figure is written ">=N" wherever it
// appears.
//
// The output keeps within TableWidth columns: the tables are laid out to
// fit, a point's qualifiers (contended, not clean, near the generator's
// cap, a drop, a missed objective) are numbered notes under its table,
// and a longer line of prose is wrapped.
func WriteTable(w io.Writer, r *Result) error {
	var b strings.Builder
	writeCounts(&b, r)
	if err := writePoints(&b, r.Curve); err != nil {
		return err
	}
	writePointNotes(&b, r)
	if err := writeCeilings(&b, r); err != nil {
		return err
	}
	writeHeadline(&b, r)
	if err := WriteResilience(&b, r); err != nil {
		return err
	}
	if err := WriteComparison(&b, r.Comparison); err != nil {
		return err
	}
	writeBudget(&b, r)
	if c := r.Comparison; c != nil {
		// Where the CPU went, when both arms were profiled.
		if err := WriteProfileDiff(&b, c.Headline.ProfileDiff, 5, ""); err != nil {
			return err
		}
	}
	for _, w := range r.Warnings {
		if r.Partial && w == r.PartialReason {
			continue // PARTIAL RESULT said it, first
		}
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	_, err := io.WriteString(w, Wrap(b.String(), TableWidth))
	return err
}

// TableWidth is the width a terminal needs for WriteTable's output.
const TableWidth = 100

// Wrap breaks every line of s longer than width (in runes) at its last
// space within width that is not part of a relation ("p = 0.008" stays
// whole), keeping the line's own spacing (a table row's
// columns stay where they were); a continuation line is indented two
// more than its line. A word longer than width stands alone. Lines that
// fit are kept as they are.
func Wrap(s string, width int) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		body, nl := strings.CutSuffix(line, "\n")
		indent := body[:len(body)-len(strings.TrimLeft(body, " "))]
		cont := indent + "  "
		for utf8.RuneCountInString(body) > width {
			r := []rune(body)
			cut := -1
			for k := width; k > len(indent); k-- {
				if r[k] == ' ' && !glued(r, k) {
					cut = k
					break
				}
			}
			if cut < 0 { // one long word: up to the next space
				for k := width + 1; k < len(r); k++ {
					if r[k] == ' ' && !glued(r, k) {
						cut = k
						break
					}
				}
				if cut < 0 {
					break
				}
			}
			head := strings.TrimRight(string(r[:cut]), " ")
			rest := strings.TrimLeft(string(r[cut:]), " ")
			out.WriteString(head + "\n")
			body, indent = cont+rest, cont
		}
		out.WriteString(body)
		if nl {
			out.WriteString("\n")
		}
	}
	return out.String()
}

// glued reports whether the space at r[k] holds a relation together
// ("p = 0.008", "p < 0.001", "p ≥ 0.05"), which a wrap must not split.
func glued(r []rune, k int) bool {
	rel := func(c rune) bool { return strings.ContainsRune("=<>≥≤", c) }
	return k > 0 && rel(r[k-1]) || k+1 < len(r) && rel(r[k+1])
}

// writeCounts leads with what went wrong: failed points and errors, then
// contended and unclean ones, then the regime and the objective.
func writeCounts(b *strings.Builder, r *Result) {
	if r.Partial {
		fmt.Fprintf(b, "PARTIAL RESULT: %s\n", r.PartialReason)
	}
	var failed, withErrors, contended, unclean int
	for _, p := range r.Curve {
		switch {
		case p.Role == RoleResilience:
			// Its errors are the fault's: its own section judges it.
		case p.Status != StatusOK:
			failed++
		case p.Errors > 0:
			withErrors++
		case p.Contended:
			contended++
		case !p.Clean:
			unclean++
		}
	}
	switch {
	case failed+withErrors == 0:
		fmt.Fprintf(b, "errors: none in %d points%s\n", len(r.Curve)-resilient(r), resilienceAside(r))
	default:
		fmt.Fprintf(b, "ERRORS: %d of %d points failed, %d more had errors (not clean, not ceilings)\n", failed, len(r.Curve), withErrors)
	}
	if contended > 0 {
		who := Contenders(r.Curve)
		if who != "" {
			who = ": " + who
		}
		fmt.Fprintf(b, "CONTENDED: %d of %d points ran on pinned CPUs shared with other work or stolen by the hypervisor (not clean, not ceilings)%s\n", contended, len(r.Curve), who)
	}
	if unclean > 0 {
		// No errors, yet not a ceiling: say so, or the row reads as one.
		fmt.Fprintf(b, "NOT CLEAN: %d points without errors were saturated, short of connections, lost some or measured nothing (marked, not ceilings)\n", unclean)
	}
	fmt.Fprintf(b, "regime: %s\n", r.Regime)
	if r.Config.Objective != "" {
		fmt.Fprintf(b, "objective: %s (a ceiling is the clean point with the most connections that meets it)\n", r.Config.Objective)
	}
	b.WriteString("\n")
}

// writePoints is the table of every point, in the order run, with each
// point's qualifiers as numbered notes under it.
func writePoints(b *strings.Builder, curve []Point) error {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "#\tbatch\tconns\trep\tmsg/s\tp99\terr\tsrv%\tgen%\t  verdict")
	var notes []string
	lowerBound, objective := false, false
	for _, p := range curve {
		objective = objective || p.Objective != nil
		// A failed point's errors were not read (the reason says what
		// the generator saw): "-", never a 0 it did not count.
		thr, p99, errs, srv, gen := "-", "-", "-", "-", "-"
		if p.Status == StatusOK || p.Errors > 0 {
			errs = fmt.Sprint(p.Errors)
		}
		if p.Status == StatusOK {
			thr = Rate(p.ThroughputPerS, p.LowerBound)
			p99 = FormatLatency(p.LatencyNs.P99)
			srv, gen = cpuPct(p.ServerCPU), cpuPct(p.GeneratorCPU)
			lowerBound = lowerBound || p.LowerBound
		}
		verdict := pointVerdict(p)
		for _, n := range pointNotes(p) {
			notes = append(notes, fmt.Sprintf("[%d] point %s: %s", len(notes)+1, pointLabel(p), n))
			verdict += fmt.Sprintf(" [%d]", len(notes))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t  %s\n",
			pointLabel(p), p.Batch, p.Connections, p.Rep, thr, p99, errs, srv, gen, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	legend := "err: errors; srv%, gen%: each side's mean CPU, as a share of its pinned cores"
	if lowerBound {
		legend += "; >=: a lower bound (the generator was a limit, the server may do more)"
	}
	if objective {
		legend += "; met: the point meets the objective"
	}
	fmt.Fprintf(b, "%s\n", legend)
	for _, n := range notes {
		fmt.Fprintf(b, "%s\n", n)
	}
	return nil
}

// cpuPct is a side's mean CPU as a share of its pinned cores.
func cpuPct(c CPUStats) string {
	if c.Samples == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", c.FractionMean*100)
}

// pointLabel is a point's index with its role, arm and duet half.
func pointLabel(p Point) string {
	idx := fmt.Sprint(p.Index)
	switch p.Role {
	case RoleAARepeat:
		idx += " A-A"
	case RoleHeadroom:
		idx += " probe"
	case RoleCompare:
		idx += " cmp"
	case RoleProfile:
		idx += " prof"
	case RoleResilience:
		idx += " fault"
	}
	if p.Arm != "" {
		idx += " " + p.Arm
	}
	if p.Half != "" {
		idx += "/" + p.Half // the duet half it ran on
	}
	return idx
}

// pointVerdict is a point's verdict cell: the verdict alone (a lower
// bound is the throughput's >=), or its resilience outcome.
func pointVerdict(p Point) string {
	if f := p.Fault; f != nil {
		return "resilience " + Phrase(f.Verdict) // its section says why
	}
	if o := p.Objective; o != nil && o.Met {
		return p.Verdict + ", met" // the objective (the legend says so)
	}
	return p.Verdict
}

// pointNotes are what qualifies a point's verdict, each a note under
// the table: contention (and who), not clean, near the generator's cap,
// a drop's outcome, the objective.
func pointNotes(p Point) []string {
	var notes []string
	if p.Fault != nil {
		return nil
	}
	switch {
	case p.Status == StatusOK && p.Contended:
		why := Contention(p.ServerCPU, p.GeneratorCPU)
		if why == "" {
			why = "pinned CPUs shared with other work"
		}
		notes = append(notes, "contended: "+why+" (not clean, not a ceiling)")
	case p.Status == StatusOK && !p.Clean && p.Saturated:
		notes = append(notes, "not clean: the generator fell behind its schedule")
	case p.Status == StatusOK && !p.Clean && p.Errors == 0:
		notes = append(notes, "not clean: short of connections, lost some, or measured nothing")
	}
	if c := p.NearCap; c != nil {
		notes = append(notes, fmt.Sprintf("%.0f%% of the generator's cap", c.PctOfCap))
	}
	if d := p.Drop; d != nil {
		notes = append(notes, strings.TrimPrefix(dropText(d), "; "))
	}
	if o := p.Objective; o != nil && !o.Met {
		notes = append(notes, "objective missed: "+o.Reasons())
	}
	return notes
}

// writePointNotes are the lines under the points' table: each server's
// share where there are several, why a point failed, the search paths.
func writePointNotes(b *strings.Builder, r *Result) {
	for _, p := range r.Curve {
		if p.Status == StatusOK && len(p.Servers) > 0 {
			// Several servers: the column is their sum; each one's share.
			var parts []string
			for _, s := range p.Servers {
				parts = append(parts, fmt.Sprintf("%s %.2f", s.Name, s.MeanCores))
			}
			fmt.Fprintf(b, "point %d server cpu by server (cores): %s\n", p.Index, strings.Join(parts, ", "))
		}
		if p.Status == StatusOK && p.Fault == nil {
			if shares := wire.SharesOf(p.Scenario); len(shares) > 1 {
				fmt.Fprintf(b, "point %d clients by server: %s\n", p.Index, sharesText(shares, p.Servers))
			}
		}
	}
	for _, p := range r.Curve {
		switch {
		case p.Status == StatusOK:
		case r.Partial && p.FailReason != "" && strings.Contains(r.PartialReason, p.FailReason):
			// The point that stopped the run: PARTIAL RESULT, the table's
			// first line, says why in full; once is enough.
			fmt.Fprintf(b, "point %d failed: why is on the PARTIAL RESULT line above\n", p.Index)
		default:
			fmt.Fprintf(b, "point %d failed: %s\n", p.Index, p.FailReason)
		}
	}
	writeSearchPaths(b, r)
}

// writeCeilings is the table of each batch's ceiling.
func writeCeilings(b *strings.Builder, r *Result) error {
	if r.Config.Objective != "" {
		fmt.Fprintf(b, "\nceilings (per batch, the clean point with the most connections that meets the objective):\n")
	} else {
		fmt.Fprintf(b, "\nceilings (highest clean point per batch):\n")
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "batch\tconns\tthroughput/s\tp99\tverdict\t")
	for _, c := range r.Ceilings {
		if !c.Found {
			fmt.Fprintf(tw, "%d\t-\tno clean point\t-\t-\t\n", c.Batch)
			continue
		}
		top := ""
		if c.AtLadderTop {
			top = " (ladder top)"
		}
		fmt.Fprintf(tw, "%d\t%d%s\t%s\t%s\t%s\t\n", c.Batch, c.Connections, top,
			Rate(c.ThroughputPerS, c.LowerBound), FormatLatency(c.LatencyNs.P99), verdictText(c.Verdict, c.LowerBound))
	}
	return tw.Flush()
}

// writeHeadline is the headline with the A-A noise floor beside it, and
// the headroom probe's conclusion.
func writeHeadline(b *strings.Builder, r *Result) {
	b.WriteString("\n")
	h := r.Headline
	label := "headline"
	if r.Comparison != nil {
		label = "head's headline" // the base arm's is not a headline
	}
	switch {
	case h.Clean && r.Config.Objective != "":
		fmt.Fprintf(b, label+": %d connections meet the objective, at %s msg/s, p99 %s (%s), batch %d",
			h.Connections, Rate(h.ThroughputPerS, h.LowerBound),
			FormatLatency(h.LatencyNs.P99), verdictText(h.Verdict, h.LowerBound), h.Batch)
	case h.Clean:
		fmt.Fprintf(b, label+": %s msg/s at batch %d, %d connections, p99 %s (%s)",
			Rate(h.ThroughputPerS, h.LowerBound), h.Batch, h.Connections,
			FormatLatency(h.LatencyNs.P99), verdictText(h.Verdict, h.LowerBound))
	default:
		fmt.Fprintf(b, label+": none: batch %d has no clean point (not publishable)", h.Batch)
	}
	switch {
	case r.NoiseFloorPct != nil:
		fmt.Fprintf(b, ", noise floor (A-A) %.1f%%\n", *r.NoiseFloorPct)
	case r.Comparison != nil && h.Repeats > 0:
		fmt.Fprintf(b, ", the median of the head's %d clean repeats at the compared rung (the comparison's repeats measure the noise)\n", h.Repeats)
	case r.Comparison != nil:
		b.WriteString(", no A-A repeat in a two-arm sweep: the comparison's repeats measure the noise\n")
	default:
		b.WriteString(", noise floor (A-A) unknown: no repeat\n")
	}
	if r.Meta.ClientIO != "" {
		fmt.Fprintf(b, "client pattern: %s (a ceiling holds for the client's I/O too)\n", r.Meta.ClientIO)
	}
	if p := r.HeadroomProbe; p != nil {
		fmt.Fprintf(b, "headroom probe (point %d): %s\n", p.Index, p.Conclusion)
	}
}

func verdictText(v string, lowerBound bool) string {
	if lowerBound {
		return v + " (lower bound)"
	}
	return v
}

// dropText is a point's DROP outcome for the table.
func dropText(d *wire.DropResult) string {
	s := fmt.Sprintf("; drop %d:", d.Dropped)
	if d.ServerUp && d.ReadyAfterNs != nil {
		s += " ready after " + FormatLatency(*d.ReadyAfterNs)
	} else {
		s += " SERVER DID NOT ANSWER"
	}
	if d.NewClientOK {
		s += ", new client served"
	} else {
		s += ", NEW CLIENT NOT SERVED"
	}
	return s
}

// writeSearchPaths adds to the table, for a SEARCH=bisect sweep, each
// batch's search path (per rep): the connections in the order run, a
// failed point marked "!", and how the search ended (from the notes).
func writeSearchPaths(b *strings.Builder, r *Result) {
	if r.Config.Search != SearchBisect {
		return
	}
	type br struct{ batch, rep int }
	var keys []br
	paths := map[br][]string{}
	for _, p := range r.Curve {
		if p.Role != RoleSweep || p.SearchStep == 0 {
			continue
		}
		k := br{p.Batch, p.Rep}
		if _, ok := paths[k]; !ok {
			keys = append(keys, k)
		}
		c := strconv.Itoa(p.Connections)
		if p.Status != StatusOK {
			c += "!"
		}
		paths[k] = append(paths[k], c)
	}
	if len(keys) == 0 {
		return
	}
	b.WriteString("\nsearch paths (SEARCH=bisect; connections in the order run, ! failed):\n")
	for _, k := range keys {
		fmt.Fprintf(b, "  batch %d rep %d: %s (%d points)\n", k.batch, k.rep, strings.Join(paths[k], " > "), len(paths[k]))
	}
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "SEARCH=bisect: ") {
			fmt.Fprintf(b, "  %s\n", strings.TrimPrefix(n, "SEARCH=bisect: "))
		}
	}
}

// OutcomeLine is a two-arm run's verdict in one line, the last the sweep
// prints: ✓ when the headline's compared point is faster or within noise,
// ✗ when it is slower or could not be concluded (the action's default
// gate, fail-on slower,inconclusive), then the verdict in the words the
// comparison above used (Phrase) and the figures it rests on. Why a point
// could not conclude is said once, under the comparison: the line points
// there. "" without a comparison.
func OutcomeLine(c *Comparison) string {
	if c == nil {
		return ""
	}
	h := c.Headline
	at := "at " + rungWords(h.Batch, h.Connections, ",")
	mark := "✓"
	if h.Verdict == CompareSlower || h.Verdict == CompareCannotConclude {
		mark = "✗"
	}
	if h.ChangePct == nil {
		return fmt.Sprintf("%s %s %s (%s; why: under the comparison above)", mark, VerdictPhrase(h), at, plural(h.NPairs, "pair"))
	}
	figs := "change " + pctOr(h.ChangePct)
	if h.CILowPct != nil && h.CIHighPct != nil {
		figs += fmt.Sprintf(", %.0f%% CI %s", c.Confidence*100, ciText(h.CILowPct, h.CIHighPct))
	}
	figs += fmt.Sprintf(", %s, %s", FormatP(h.PValue), plural(h.NPairs, "pair"))
	switch h.Verdict {
	case CompareWithinNoise:
		figs += "; " + DetectWords(h.MDCPct)
	case CompareCannotConclude:
		figs += "; why: under the comparison above"
	}
	return fmt.Sprintf("%s %s %s (%s)", mark, VerdictPhrase(h), at, figs)
}

// resilient counts the resilience points.
func resilient(r *Result) int {
	n := 0
	for _, p := range r.Curve {
		if p.Role == RoleResilience {
			n++
		}
	}
	return n
}

// resilienceAside says the resilience points are counted apart.
func resilienceAside(r *Result) string {
	if resilient(r) == 0 {
		return ""
	}
	return " (and a resilience point, whose errors are its fault's: see its section)"
}

// sharesText is each server's clients' share of a point: connections,
// drops, and deliveries against what was owed.
func sharesText(shares []wire.ServerShare, named []NamedCPU) string {
	var parts []string
	for _, sh := range shares {
		name := sh.URL
		for _, n := range named {
			if n.URL != "" && n.URL == sh.URL {
				name = n.Name
			}
		}
		t := fmt.Sprintf("%s %d conns", name, sh.Connections)
		if sh.Dropped > 0 {
			t += fmt.Sprintf(" (%d dropped)", sh.Dropped)
		}
		if sh.Expected > 0 || sh.Delivered > 0 {
			t += fmt.Sprintf(" %s of %s delivered (%s)", FormatRate(float64(sh.Delivered)), FormatRate(float64(sh.Expected)), sh.PctText())
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, ", ")
}

// writeBudget says why the headline's blocks stopped (WhyStopped).
func writeBudget(b *strings.Builder, r *Result) {
	if line := WhyStopped(r); line != "" {
		fmt.Fprintf(b, "  stopped: %s\n", line)
	}
}

// WhyStopped is why a two-arm run's headline blocks stopped, with what
// they could detect and what the run took: the one sentence the
// terminal, the PR comment and the site all show (comparison.headline
// .ended, with config's budget); "" without a comparison. A document
// from before ended says what its budget bought, as it did.
func WhyStopped(r *Result) string {
	c := r.Comparison
	if c == nil {
		return ""
	}
	h := c.Headline
	var s string
	switch {
	case h.Ended != nil:
		s = h.Ended.Text
	case r.Config.CompareBudgetNs > 0:
		s = fmt.Sprintf("COMPARE_BUDGET %s bought %d of %d blocks planned at the headline's rung", time.Duration(r.Config.CompareBudgetNs), h.Blocks, c.Reps)
	default:
		return ""
	}
	if h.Ended == nil || h.Ended.Kind != EndNoTime {
		if h.MDCPct != nil {
			s += fmt.Sprintf("; they could detect ±%.1f%%", *h.MDCPct)
		} else {
			s += "; too few to detect any change"
		}
	}
	if d, ok := r.Took(); ok {
		s += fmt.Sprintf("; the run took %s", d)
		if r.Config.CompareBudgetNs > 0 {
			s += fmt.Sprintf(" of its COMPARE_BUDGET %s", time.Duration(r.Config.CompareBudgetNs))
		}
	}
	return s
}

// Took is how long the run took, from meta's start to its finish, to
// the second; false when either is missing or they are out of order.
func (r *Result) Took() (time.Duration, bool) {
	if r.Meta.StartedAt.IsZero() || r.Meta.FinishedAt.Before(r.Meta.StartedAt) {
		return 0, false
	}
	return r.Meta.FinishedAt.Sub(r.Meta.StartedAt).Round(time.Second), true
}
