package publish

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/harness"
)

// MaxCommentLen is GitHub's limit on a comment body (characters).
const MaxCommentLen = 65536

// Marker is the hidden line that finds the comment again on the next push:
// one comment per pull request and generator.
func Marker(generator string) string {
	return "ceiling:comment generator=" + generator
}

var markerRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:=._ /-]{0,99}$`)

// CheckMarker refuses a marker that could break out of an HTML comment.
func CheckMarker(m string) error {
	if !markerRE.MatchString(m) || strings.Contains(m, "--") {
		return fmt.Errorf("--marker: %q: use letters, digits and :=._/- (no \"--\"), at most 100", m)
	}
	return nil
}

// HiddenMarker is the marker as the comment's first line.
func HiddenMarker(m string) string { return "<!-- " + m + " -->" }

// RenderOptions shape the Markdown.
type RenderOptions struct {
	Marker string // default Marker(generator)
	// NoPoints leaves out the table of every point (used when the comment
	// would exceed GitHub's limit; the summary and the artifact keep it).
	NoPoints bool
}

// Render writes c as Markdown. Strings from the runs are escaped with text;
// numbers are formatted here and nowhere else.
func Render(c *Comparison, opts RenderOptions) string {
	m := opts.Marker
	if m == "" {
		m = Marker(c.Generator)
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	head, base := c.Head, c.Base

	p("%s\n", HiddenMarker(m))
	if base != nil {
		p("### ceiling · %s: head %s vs base %s\n\n", text(c.Generator), text(shortRef(head.Meta.GitRef)), text(shortRef(base.Meta.GitRef)))
	} else {
		p("### ceiling · %s: head %s\n\n", text(c.Generator), text(shortRef(head.Meta.GitRef)))
	}

	if len(c.Alerts) > 0 {
		p("> [!WARNING]\n")
		for _, a := range c.Alerts {
			p("> %s\n", a) // built from counts and fixed words only
		}
		p("\n")
	}

	renderHeadline(&b, c)
	renderTable(&b, c)
	renderFloor(&b, c)
	renderChart(&b, c)

	if len(c.Warnings) > 0 {
		p("**Warnings**\n\n")
		for _, w := range c.Warnings {
			p("- %s: %s\n", w.Run, text(w.Text))
		}
		p("\n")
	}

	renderRuns(&b, c)
	if !opts.NoPoints {
		renderPoints(&b, c)
	} else {
		p("The table of every point did not fit in a comment; it is in the job summary and the artifact.\n\n")
	}

	if len(c.Footnotes) > 0 {
		for i, f := range c.Footnotes {
			args := make([]any, len(f.Args))
			for j, a := range f.Args {
				args[j] = text(a)
			}
			p("<sub>%d. %s</sub><br>\n", i+1, fmt.Sprintf(f.Format, args...))
		}
	}
	return b.String()
}

// RenderComment is Render within GitHub's comment limit.
func RenderComment(c *Comparison, opts RenderOptions) string {
	md := Render(c, opts)
	if len([]rune(md)) <= MaxCommentLen {
		return md
	}
	opts.NoPoints = true
	return Render(c, opts)
}

func renderHeadline(b *strings.Builder, c *Comparison) {
	h := c.Headline
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("**Headline**, batch %d (%s)", h.Batch, text(c.Head.Regime))
	switch {
	case h.Head == nil || !h.Head.Found:
		p(": the head run has **no clean point** at its headline batch.\n\n")
		return
	case c.Base == nil:
		p(": **%s**.\n\n", side(h.Head))
		return
	case h.Base == nil || !h.Base.Found:
		p(": **%s**; the baseline has no clean headline to compare with.\n\n", side(h.Head))
		return
	}
	p(": **%s** vs base %s, %s: %s.\n\n", side(h.Head), side(h.Base), delta(h.DeltaPct), verdict(h))
}

func renderTable(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	if c.Base != nil {
		p("| batch | base ceiling | head ceiling | delta | verdict | base p99 | head p99 |\n")
		p("|---:|---:|---:|---:|:---|---:|---:|\n")
	} else {
		p("| batch | head ceiling | head p99 |\n|---:|---:|---:|\n")
	}
	for _, r := range c.Rows {
		if c.Base == nil {
			p("| %d | %s | %s |\n", r.Batch, side(r.Head), p99(r.Head))
			continue
		}
		p("| %d | %s | %s | %s | %s | %s | %s |\n", r.Batch, side(r.Base), side(r.Head), delta(r.DeltaPct), verdict(r), p99(r.Base), p99(r.Head))
	}
	p("\n")
	var marks []string
	if anyRow(c.Rows, func(s *Side) bool { return s.LowerBound }) {
		marks = append(marks, "† generator-capped: the generator ran out of CPU first, so the figure is a lower bound on the server's ceiling.")
	}
	if anyRow(c.Rows, func(s *Side) bool { return s.AtLadderTop }) {
		marks = append(marks, "↑ peaked at the top of its connection ladder: the knee may lie beyond it.")
	}
	for _, m := range marks {
		p("%s<br>\n", m)
	}
	if len(marks) > 0 {
		p("\n")
	}
}

func anyRow(rows []Row, f func(*Side) bool) bool {
	for _, r := range rows {
		for _, s := range []*Side{r.Base, r.Head} {
			if s != nil && s.Found && f(s) {
				return true
			}
		}
	}
	return false
}

func renderFloor(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	switch {
	case c.Base == nil:
		p("Noise floor of the head run (A-A repeat of its headline point): %s.\n\n", pct(c.Head.NoiseFloorPct))
	case c.FloorPct == nil:
		p("Noise floor: **not measured** (base %s, head %s), so no difference can be called faster or slower.\n\n",
			pct(c.Base.NoiseFloorPct), pct(c.Head.NoiseFloorPct))
	default:
		p("Noise floor: **%.1f %%**, the larger of the two runs' A-A repeats (base %s, head %s). A change inside it is `~`, never a regression.\n\n",
			*c.FloorPct, pct(c.Base.NoiseFloorPct), pct(c.Head.NoiseFloorPct))
	}
}

func renderRuns(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	runs := []*harness.Result{c.Head}
	names := []string{"head"}
	if c.Base != nil {
		runs, names = []*harness.Result{c.Base, c.Head}, []string{"base", "head"}
	}
	p("<details><summary>Runs: git refs, regime, runners</summary>\n\n")
	p("| |%s\n|---|%s\n", joinCells(names), strings.Repeat("---|", len(names)))
	row := func(label string, f func(r *harness.Result) string) {
		cells := make([]string, len(runs))
		for i, r := range runs {
			cells[i] = f(r)
		}
		p("| %s |%s\n", label, joinCells(cells))
	}
	row("git ref", func(r *harness.Result) string { return text(r.Meta.GitRef) })
	row("regime", func(r *harness.Result) string { return text(r.Regime) })
	row("runner", func(r *harness.Result) string {
		rn := r.Meta.Runner
		if !rn.CI {
			return "local " + text(r.Meta.Hardware.OS+"/"+r.Meta.Hardware.Arch)
		}
		return text(strings.TrimSpace(rn.Name + " " + rn.OS + "/" + rn.Arch))
	})
	row("CPU", func(r *harness.Result) string {
		return text(fmt.Sprintf("%s, %d logical", r.Meta.Hardware.CPUModel, r.Meta.Hardware.LogicalCPUs))
	})
	row("pinning", func(r *harness.Result) string {
		pn := r.Meta.Pinning
		if !pn.Supported {
			return "not supported"
		}
		return text(fmt.Sprintf("server %s, generator %s", cpuList(pn.ServerGranted), cpuList(pn.GeneratorGranted)))
	})
	row("target", func(r *harness.Result) string { return text(r.Meta.Target.Name) })
	row("generator", func(r *harness.Result) string { return text(r.Meta.Generator + " " + r.Meta.Version) })
	row("ladder", func(r *harness.Result) string {
		return text(fmt.Sprintf("batches %v, reps %d, %s per point", r.Config.BatchLadder, r.Config.Reps, formatNs(r.Config.DurationNs)))
	})
	row("finished", func(r *harness.Result) string { return text(r.Meta.FinishedAt.UTC().Format("2006-01-02 15:04 UTC")) })
	p("\n</details>\n\n")
}

func joinCells(cells []string) string {
	var b strings.Builder
	for _, c := range cells {
		b.WriteString(" " + c + " |")
	}
	return b.String()
}

func cpuList(cpus []int) string {
	if len(cpus) == 0 {
		return "none"
	}
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

func renderPoints(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	runs := []*harness.Result{c.Head}
	names := []string{"head"}
	if c.Base != nil {
		runs, names = []*harness.Result{c.Base, c.Head}, []string{"base", "head"}
	}
	p("<details><summary>Every point</summary>\n\n")
	for i, r := range runs {
		p("**%s** (%d points, in the order run)\n\n", names[i], len(r.Curve))
		p("| # | role | batch | conns | rep | status | msg/s | p99 | errors | server CPU | generator CPU | verdict | why |\n")
		p("|---:|:---|---:|---:|---:|:---|---:|---:|---:|---:|---:|:---|:---|\n")
		for _, pt := range r.Curve {
			why := pt.VerdictReason
			if pt.FailReason != "" {
				why = strings.TrimSpace(why + "; " + pt.FailReason)
			}
			// A failed point measured nothing: "0 msg/s" would be a figure.
			tp, lat := "n/a", "n/a"
			if pt.Status == harness.StatusOK {
				tp, lat = harness.FormatRate(pt.ThroughputPerS), formatNs(pt.LatencyNs.P99)
				if pt.LowerBound {
					tp += " †"
				}
			}
			p("| %d | %s | %d | %d | %d | %s | %s | %s | %d | %s | %s | %s | %s |\n",
				pt.Index, text(pt.Role), pt.Batch, pt.Connections, pt.Rep, text(pt.Status), tp,
				lat, pt.Errors, cpuFrac(pt.ServerCPU), cpuFrac(pt.GeneratorCPU),
				text(pt.Verdict), text(why))
		}
		p("\n")
	}
	if slices.ContainsFunc(runs, func(r *harness.Result) bool {
		return slices.ContainsFunc(r.Curve, func(pt harness.Point) bool { return pt.LowerBound })
	}) {
		p("† generator-capped: a lower bound on the server's throughput at that point.\n\n")
	}
	p("</details>\n\n")
}

func cpuFrac(s harness.CPUStats) string {
	if s.Samples == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f of %d", s.MeanCores, s.PinnedCores)
}

// side prints one ceiling: throughput, connections, and its marks.
func side(s *Side) string {
	switch {
	case s == nil:
		return "not run"
	case !s.Found:
		return "no clean point"
	}
	out := fmt.Sprintf("%s msg/s @ %d conns", harness.FormatRate(s.ThroughputPerS), s.Connections)
	if s.LowerBound {
		out += " †"
	}
	if s.AtLadderTop {
		out += " ↑"
	}
	return out
}

func p99(s *Side) string {
	if s == nil || !s.Found {
		return "n/a"
	}
	return formatNs(s.P99Ns)
}

func delta(d *float64) string {
	if d == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f %%", *d)
}

func pct(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("%.1f %%", *v)
}

func verdict(r Row) string {
	switch r.Verdict {
	case Same:
		return "`~` within noise"
	case Faster:
		return "**faster**"
	case Slower:
		return "**slower**"
	case CannotConclude:
		return "cannot conclude: " + text(r.Reason)
	}
	return text(r.Verdict)
}

// shortRef abbreviates a full commit id; anything else is kept.
func shortRef(ref string) string {
	core := strings.TrimSuffix(ref, "-dirty")
	if len(core) == 40 && strings.Trim(core, "0123456789abcdef") == "" {
		return core[:12] + ref[40:]
	}
	return ref
}

// chartSeries is one run's clean throughput by connection count at a batch;
// with several reps the highest, as the ceiling itself is chosen.
func chartSeries(r *harness.Result, batch int) map[int]float64 {
	out := map[int]float64{}
	for _, p := range r.Curve {
		if p.Role != harness.RoleSweep || p.Batch != batch || !p.Clean {
			continue
		}
		if v, ok := out[p.Connections]; !ok || p.ThroughputPerS > v {
			out[p.Connections] = p.ThroughputPerS
		}
	}
	return out
}

// chartLowerBound says whether the point chartSeries drew for conns is a
// lower bound.
func chartLowerBound(r *harness.Result, batch, conns int) bool {
	var best *harness.Point
	for i, p := range r.Curve {
		if p.Role == harness.RoleSweep && p.Batch == batch && p.Clean && p.Connections == conns &&
			(best == nil || p.ThroughputPerS > best.ThroughputPerS) {
			best = &r.Curve[i]
		}
	}
	return best != nil && best.LowerBound
}

func renderChart(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	batch := c.Head.Config.HeadlineBatch
	hs := chartSeries(c.Head, batch)
	var bs map[int]float64
	if c.Base != nil {
		bs = chartSeries(c.Base, batch)
	}
	var xs []int
	var left []int
	for x := range hs {
		if bs == nil {
			xs = append(xs, x)
			continue
		}
		if _, ok := bs[x]; ok {
			xs = append(xs, x)
		} else {
			left = append(left, x)
		}
	}
	for x := range bs {
		if _, ok := hs[x]; !ok {
			left = append(left, x)
		}
	}
	slices.Sort(xs)
	slices.Sort(left)
	if len(xs) == 0 {
		p("No chart: no connection count has a clean point at batch %d in both runs.\n\n", batch)
		return
	}
	labels := make([]string, len(xs))
	line := func(s map[int]float64) string {
		v := make([]string, len(xs))
		for i, x := range xs {
			v[i] = strconv.FormatFloat(s[x], 'f', 0, 64)
		}
		return "[" + strings.Join(v, ", ") + "]"
	}
	for i, x := range xs {
		labels[i] = strconv.Quote(strconv.Itoa(x))
	}
	p("```mermaid\nxychart-beta\n")
	p("    title \"%s\"\n", chartLabel(fmt.Sprintf("Throughput by connections, batch %d (msg/s)", batch)))
	p("    x-axis \"connections\" [%s]\n", strings.Join(labels, ", "))
	p("    y-axis \"msg/s\"\n")
	if bs != nil {
		p("    line %s\n", line(bs))
	}
	p("    line %s\n```\n\n", line(hs))
	if bs != nil {
		p("First line: base; second line: head. Clean sweep points only (highest rep).")
	} else {
		p("Clean sweep points of the head run only (highest rep).")
	}
	if len(left) > 0 {
		p(" Left out, clean in one run only: %s connections.", strings.Trim(fmt.Sprint(left), "[]"))
	}
	// A line cannot carry the † mark: name the lower bounds under it.
	var capped []string
	for i, r := range []*harness.Result{c.Base, c.Head} {
		if r == nil {
			continue
		}
		var at []int
		for _, x := range xs {
			if chartLowerBound(r, batch, x) {
				at = append(at, x)
			}
		}
		if len(at) > 0 {
			capped = append(capped, fmt.Sprintf("%s at %s connections", []string{"base", "head"}[i], strings.Trim(fmt.Sprint(at), "[]")))
		}
	}
	if len(capped) > 0 {
		p(" Generator-capped, so lower bounds: %s.", strings.Join(capped, "; "))
	}
	p("\n\n")
}
