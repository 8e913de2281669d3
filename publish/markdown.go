package publish

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/result"
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
	// SiteURL is the results site's base URL, checked by CheckSiteURL
	// (ends in '/'); when set, a line links the baseline run's page (a
	// cross-run comparison) and the trend.
	SiteURL string
	// MaxWarnings, when above 0, lists that many warnings and counts the
	// rest (used when the comment would exceed GitHub's limit).
	MaxWarnings int
}

// Render writes c as Markdown: the verdict in words on the first line
// (after the hidden marker), then everything that weakens it as GitHub
// alert blocks, then the table, the chart, and the details folded away.
// Strings from the runs are escaped with text; numbers are formatted here
// and in chart.go, nowhere else. Render decides nothing: every verdict and
// alert comes from c.
func Render(c *Comparison, opts RenderOptions) string {
	m := opts.Marker
	if m == "" {
		m = Marker(c.Generator)
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("%s\n", HiddenMarker(m))
	p("%s\n\n", outcomeTitle(c))
	p("%s\n\n", verdictLine(c))
	renderAlerts(&b, c.Alerts)
	p("%s\n\n", subtitle(c))

	switch c.Mode {
	case ModeTwoArm:
		renderTwoArmTable(&b, c)
	case ModeCrossRun:
		renderCrossRunTable(&b, c)
	default:
		renderHeadOnlyTable(&b, c)
	}
	renderChart(&b, c)
	renderResilience(&b, c)
	if c.Mode == ModeTwoArm {
		renderWhy(&b, c)
		renderProfile(&b, c)
	}

	if len(c.Warnings) > 0 {
		p("**Warnings**\n\n")
		shown := c.Warnings
		if opts.MaxWarnings > 0 && len(shown) > opts.MaxWarnings {
			shown = shown[:opts.MaxWarnings]
		}
		for _, w := range shown {
			p("- %s: %s\n", w.Run, text(w.Text))
		}
		if n := len(c.Warnings) - len(shown); n > 0 {
			p("- and %d more warnings: the job summary and the artifact list them all\n", n)
		}
		p("\n")
	}

	renderSiteLinks(&b, c, opts.SiteURL)
	renderRuns(&b, c)
	if !opts.NoPoints {
		renderPoints(&b, c)
	} else {
		p("The table of every point did not fit in a comment; it is in the job summary and the artifact.\n\n")
	}

	for i, f := range c.Footnotes {
		p("<sub>%d. %s</sub><br>\n", i+1, f.render())
	}
	return b.String()
}

// render escapes the Args (and only them) into Format; a Note without
// Args is its Format as written.
func (n Note) render() string {
	if len(n.Args) == 0 {
		return n.Format
	}
	args := make([]any, len(n.Args))
	for j, a := range n.Args {
		args[j] = text(a)
	}
	return fmt.Sprintf(n.Format, args...)
}

// commentWarnings is how many warnings a comment that would exceed
// GitHub's limit still lists.
const commentWarnings = 20

// RenderComment is Render within GitHub's comment limit (MaxCommentLen
// characters, past which the API answers 422): without the table of
// every point, then with the first commentWarnings warnings and a count
// of the rest, and as a last resort cut at a line break with a line that
// says so. The verdict leads in every case.
func RenderComment(c *Comparison, opts RenderOptions) string {
	md := Render(c, opts)
	if runeLen(md) <= MaxCommentLen {
		return md
	}
	opts.NoPoints = true
	if md = Render(c, opts); runeLen(md) <= MaxCommentLen {
		return md
	}
	opts.MaxWarnings = commentWarnings
	if md = Render(c, opts); runeLen(md) <= MaxCommentLen {
		return md
	}
	const cut = "\n\n*(The rest did not fit in a comment; the job summary and the artifact hold all of it.)*\n"
	return keepLines(md, MaxCommentLen-runeLen(cut)) + cut
}

// keepLines is the longest prefix of s, within budget characters, that
// ends at a line break ("" when even the first line is too long).
func keepLines(s string, budget int) string {
	r := []rune(s)
	if budget < 0 {
		budget = 0
	}
	kept := string(r[:min(budget, len(r))])
	if len(kept) == len(s) {
		return kept
	}
	if i := strings.LastIndexByte(kept, '\n'); i >= 0 {
		return kept[:i]
	}
	return ""
}

// outcomeTitle is the comment's first visible line, the outcome in a few
// words, named after the server measured: a significant regression as a
// CAUTION block with ❌, a significant gain as a TIP with ✅, a headline
// that cannot be concluded as a WARNING with ⚠️, and within noise as a
// ➖ line that says what the test could have detected; each verdict in
// the words of result.Phrase, as the terminal says it. Caveats come below
// it (renderAlerts), never above.
func outcomeTitle(c *Comparison) string {
	h := c.Headline
	name := c.Generator
	if c.Head != nil && c.Head.Meta.Target.Name != "" {
		name = c.Head.Meta.Target.Name
	}
	name = text(name)
	at := fmt.Sprintf("at batch %d", h.Batch)
	if c.Mode == ModeHeadOnly && c.Alone {
		return fmt.Sprintf("**%s: %s**", name, sideText(h.Head))
	}
	if c.Mode == ModeHeadOnly {
		return fmt.Sprintf("**%s %s: nothing compared** (no baseline)", iconHeadOnly, name)
	}
	change := "n/a"
	if h.DeltaPct != nil {
		change = pctAbs(math.Abs(*h.DeltaPct))
		if h.AtLeast {
			change = "at least " + change
		}
	}
	p := ""
	if h.PValue != nil {
		p = " (" + pvalue(h.PValue) + ")"
	}
	switch h.Verdict {
	case Slower:
		return fmt.Sprintf("> [!CAUTION]\n> **%s %s: %s %s %s**%s", iconSlower, name, change, result.Phrase(Slower), at, p)
	case Faster:
		return fmt.Sprintf("> [!TIP]\n> **%s %s: %s %s %s**%s", iconFaster, name, change, result.Phrase(Faster), at, p)
	case WithinNoise:
		detect := "too few clean pairs to detect any change"
		switch {
		case h.MDCPct != nil:
			detect = "could have detected ±" + pctAbs(*h.MDCPct)
		case c.Mode == ModeCrossRun && c.FloorPct != nil:
			detect = "inside the A-A noise floor of ±" + pctAbs(*c.FloorPct) + "; two runs, no test"
		}
		return fmt.Sprintf("**%s %s: %s %s** (%s)", iconWithinNoise, name, result.Phrase(WithinNoise), at, detect)
	}
	return fmt.Sprintf("> [!WARNING]\n> **%s %s: %s %s**", iconCannotConclude, name, result.Phrase(CannotConclude), at)
}

// The outcome's icons, in the title and on each row of the table.
const (
	iconSlower         = "❌"
	iconFaster         = "✅"
	iconWithinNoise    = "➖"
	iconCannotConclude = "⚠️"
	iconHeadOnly       = "➖"
)

// rowIcon is a row's outcome as an icon.
func rowIcon(r Row) string {
	switch r.Verdict {
	case Slower:
		return iconSlower
	case Faster:
		return iconFaster
	case WithinNoise:
		return iconWithinNoise
	case HeadOnly:
		return iconHeadOnly
	}
	return iconCannotConclude
}

// verdictLine is the line under the title: the headline verdict with its
// figures, then how the other points came out.
func verdictLine(c *Comparison) string {
	h := c.Headline
	gen := "**" + text(c.Generator) + "**"
	switch c.Mode {
	case ModeHeadOnly:
		if c.Alone {
			return fmt.Sprintf("%s: one run, nothing compared; headline %s.", gen, sideText(h.Head))
		}
		return fmt.Sprintf("%s: head only, nothing compared (no baseline); headline %s.", gen, sideText(h.Head))
	case ModeCrossRun:
		return fmt.Sprintf("%s (cross-run fallback): headline %s against a result published by another run: %s; %s.",
			gen, signedPct(h.DeltaPct), verdictWord(h), tally(c.Rows, "batch sizes"))
	}
	var figs []string
	if h.CILowPct != nil && h.CIHighPct != nil {
		figs = append(figs, fmt.Sprintf("%s CI %s", confidence(c.Stats.Confidence), ciPct(*h.CILowPct, *h.CIHighPct)))
	}
	if h.PValue != nil {
		figs = append(figs, pvalue(h.PValue))
	}
	figs = append(figs, fmt.Sprintf("%d"+nbsp+"pairs", h.NPairs))
	change := signedPct(h.DeltaPct)
	if h.AtLeast {
		change = "at least " + change
	}
	unit := "batch sizes"
	if len(c.Rows) != len(distinctBatches(c.Rows)) {
		unit = "compared points"
	}
	detect := "too few clean pairs to detect any change"
	if h.MDCPct != nil {
		detect = "could have detected ±" + pctAbs(*h.MDCPct)
	}
	line := fmt.Sprintf("%s: headline %s, %s (%s); %s; %s", gen, verdictWord(h), change, strings.Join(figs, ", "), detect, tally(c.Rows, unit))
	if h.P99Verdict == result.P99Worse || h.P99Verdict == result.P99Better {
		// Information, never an alarm: p99 is tested at every point
		// beside throughput, uncorrected, and does not gate.
		line += fmt.Sprintf("; p99 %s %s", result.Phrase(h.P99Verdict), signedPct(h.P99DeltaPct))
		if h.P99PValue != nil {
			line += " (" + pvalue(h.P99PValue) + ", information: does not gate)"
		}
	}
	line += "."
	if h.Verdict == CannotConclude && h.Reason != "" {
		line += "\n\n**Cannot conclude:** " + text(h.Reason)
	}
	if h.Sensitivity != "" {
		line += "\n\n**Sensitivity:** " + text(h.Sensitivity)
	}
	return line
}

func distinctBatches(rows []Row) []int {
	var bs []int
	for _, r := range rows {
		if !slices.Contains(bs, r.Batch) {
			bs = append(bs, r.Batch)
		}
	}
	return bs
}

// tally counts the rows by verdict: "1 of 5 batch sizes slower, 4 within
// noise".
func tally(rows []Row, unit string) string {
	n := map[string]int{}
	for _, r := range rows {
		n[r.Verdict]++
	}
	var parts []string
	for _, v := range []string{Slower, Faster, WithinNoise, CannotConclude} {
		if n[v] == 0 {
			continue
		}
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("%d of %d %s %s", n[v], len(rows), unit, words(v)))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], words(v)))
		}
	}
	if len(parts) == 0 {
		return "no " + unit + " compared"
	}
	return strings.Join(parts, ", ")
}

// words is a token in a person's words (result.Phrase), for a sentence
// or a cell.
func words(token string) string { return result.Phrase(token) }

// verdictWord is a row's verdict for a sentence or a cell.
func verdictWord(r Row) string {
	switch r.Verdict {
	case Faster, Slower:
		if r.AtLeast {
			return "**" + words(r.Verdict) + "** (lower bound)"
		}
		return "**" + words(r.Verdict) + "**"
	case WithinNoise, HeadOnly:
		return words(r.Verdict)
	case CannotConclude:
		return "*" + words(r.Verdict) + "*"
	}
	return text(words(r.Verdict))
}

func renderAlerts(b *strings.Builder, alerts []Alert) {
	for _, level := range []string{AlertCaution, AlertWarning, AlertNote} {
		var lines []string
		for _, a := range alerts {
			if a.Level == level {
				lines = append(lines, a.render())
			}
		}
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(b, "> [!%s]\n", level)
		for _, l := range lines {
			if len(lines) > 1 {
				l = "- " + l
			}
			fmt.Fprintf(b, "> %s\n", l)
		}
		b.WriteString("\n")
	}
}

// subtitle names what was compared: refs, regime, targets.
func subtitle(c *Comparison) string {
	h := c.Head
	switch c.Mode {
	case ModeTwoArm:
		base := "base"
		if h.Meta.BaseTarget != nil {
			base = text(h.Meta.BaseTarget.Name)
		}
		design := fmt.Sprintf("%d repeats per arm per compared point", c.Stats.Reps)
		if why := result.WhyStopped(h); why != "" {
			design = fmt.Sprintf("blocks at the headline's rung with %s: %s", stopWords(c.Stats.Stop), why)
		}
		return fmt.Sprintf("Two arms in one job at %s: base %s vs head %s, %s, %s, interleaved. Regime: %s.",
			text(shortRef(h.Meta.GitRef)), base, text(h.Meta.Target.Name), alphaWords(c.Stats), design, text(h.Regime))
	case ModeCrossRun:
		return fmt.Sprintf("Head %s vs base %s, two separate runs. Regime: %s.",
			text(shortRef(h.Meta.GitRef)), text(shortRef(c.Base.Meta.GitRef)), text(h.Regime))
	}
	if c.Alone {
		return fmt.Sprintf("Run at %s. Regime: %s.", text(shortRef(h.Meta.GitRef)), text(h.Regime))
	}
	return fmt.Sprintf("Head %s. Regime: %s.", text(shortRef(h.Meta.GitRef)), text(h.Regime))
}

// stopWords names a stopping rule (COMPARE_STOP).
func stopWords(stop string) string {
	switch stop {
	case result.StopOBF:
		return "O'Brien-Fleming looks"
	case result.StopPocock:
		return "Pocock looks"
	}
	return "one look at the end"
}

func alphaWords(s *result.Comparison) string {
	return fmt.Sprintf("α"+nbsp+"="+nbsp+"%s", strconv.FormatFloat(s.Alpha, 'g', -1, 64))
}

func renderTwoArmTable(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	conf := confidence(c.Stats.Confidence)
	// Ten columns once needed 771 px of GitHub's 748 px comment column
	// (issue 22): batch and connections share a column, the pairs are in
	// p's cell, the interval is under the change, and each cell's widest
	// unbreakable part is kept short
	// (TestCommentTablesFitGitHubColumn lays them out in Chromium).
	p("| batch × conns | base msg/s | head msg/s | change (%s CI) | p (pairs) | could detect | verdict | p99 |\n", conf)
	p("|---:|---:|---:|:---|---:|:---|:---|:---|\n")
	for _, r := range c.Rows {
		batch := strconv.Itoa(r.Batch)
		if r.Batch == c.Headline.Batch && r.Connections == c.Headline.Connections {
			batch = "**" + batch + "**"
		}
		change := signedPct(r.DeltaPct)
		if r.CILowPct != nil && r.CIHighPct != nil {
			change += "<br>(" + ciRange(*r.CILowPct, *r.CIHighPct) + ")"
		}
		detect := "none"
		if r.MDCPct != nil {
			detect = "±" + pctAbs(*r.MDCPct)
		}
		p("| %s × %d | %s | %s | %s | %s (%d) | %s | %s %s | %s |\n", batch, r.Connections,
			medianCell(r.Base), medianCell(r.Head), change, pvalOrNA(r.PValue), r.NPairs, detect, rowIcon(r), verdictWord(r), p99Cell(r))
	}
	p("\n")
	marks := []string{fmt.Sprintf("**Bold** batch: the headline, the only point that gates (`--fail-on slower`); the others are reported, uncorrected for multiple comparisons. "+
		"Medians of each arm's clean repeats. The verdict is paired: each block is a base and a head repeat run back to back, change = the Hodges-Lehmann estimate of head/base over the blocks with both arms clean (pairs), with its %s confidence interval; p: two-sided Wilcoxon signed-rank test. "+
		"A point is faster or slower when p"+nbsp+"<"+nbsp+"%s; within noise otherwise, and then *could detect* is the change the test would have seen with 80%% power; p99: the same test on each block's p99, shown as information: it is not corrected for testing 2 metrics at every batch size, and it never gates.",
		conf, strconv.FormatFloat(c.Stats.Alpha, 'g', -1, 64))}
	if c.Stats.Stop == result.StopOBF || c.Stats.Stop == result.StopPocock {
		marks = append(marks, fmt.Sprintf("Under %s (COMPARE_STOP) the blocks were tested as they came, each look at a level below α"+nbsp+"="+nbsp+"%s so that all the looks together keep α; each point's reason, in the details, gives its level.",
			stopWords(c.Stats.Stop), result.FormatLevel(c.Stats.Alpha)))
	}
	if anyRow(c.Rows, func(s *Side) bool { return s.LowerBound }) {
		marks = append(marks, "† generator-capped in at least one repeat: that arm's median is a lower bound on the server's throughput.")
	}
	for _, m := range marks {
		p("<sub>%s</sub><br>\n", m)
	}
	p("\n")
}

func medianCell(s *Side) string {
	if s == nil || !s.Found {
		return "none"
	}
	out := rate(s.ThroughputPerS)
	if s.LowerBound {
		out += nbsp + "†"
	}
	return out
}

func p99Cell(r Row) string {
	switch r.P99Verdict {
	case "":
		return "n/a"
	case result.P99Worse, result.P99Better, WithinNoise:
		return words(r.P99Verdict) + " " + signedPct(r.P99DeltaPct)
	case CannotConclude:
		return "*" + words(r.P99Verdict) + "*"
	}
	return text(words(r.P99Verdict))
}

func renderCrossRunTable(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("| batch | base ceiling | head ceiling | change | verdict | base p99 | head p99 |\n")
	p("|---:|---:|---:|---:|:---|---:|---:|\n")
	for _, r := range c.Rows {
		p("| %d | %s | %s | %s | %s %s | %s | %s |\n", r.Batch, sideText(r.Base), sideText(r.Head), signedPct(r.DeltaPct), rowIcon(r), verdictWord(r), p99(r.Base), p99(r.Head))
	}
	p("\n")
	switch {
	case c.FloorPct == nil:
		p("<sub>Noise floor: not measured (base %s, head %s), so no difference can be called within noise either.</sub><br>\n",
			pctOrNone(c.Base.NoiseFloorPct), pctOrNone(c.Head.NoiseFloorPct))
	default:
		p("<sub>Noise floor %s: the larger of the two runs' A-A repeats (base %s, head %s). A change inside it is within noise; beyond it the rows cannot conclude, since one A-A figure per run is not a test and runner variance is not in it.</sub><br>\n",
			pctAbs(*c.FloorPct), pctOrNone(c.Base.NoiseFloorPct), pctOrNone(c.Head.NoiseFloorPct))
	}
	ceilingMarks(b, c.Rows)
}

func renderHeadOnlyTable(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	if c.Alone {
		p("| batch | ceiling | p99 |\n|---:|---:|---:|\n")
	} else {
		p("| batch | head ceiling | head p99 |\n|---:|---:|---:|\n")
	}
	for _, r := range c.Rows {
		p("| %d | %s | %s |\n", r.Batch, sideText(r.Head), p99(r.Head))
	}
	p("\n<sub>Noise floor of the %s (A-A repeat of its headline point): %s.</sub><br>\n", map[bool]string{true: "run", false: "head run"}[c.Alone], pctOrNone(c.Head.NoiseFloorPct))
	ceilingMarks(b, c.Rows)
}

func ceilingMarks(b *strings.Builder, rows []Row) {
	if anyRow(rows, func(s *Side) bool { return s.LowerBound }) {
		b.WriteString("<sub>† generator-capped: the generator ran out of CPU first, so the figure is a lower bound on the server's ceiling.</sub><br>\n")
	}
	if anyRow(rows, func(s *Side) bool { return s.AtLadderTop }) {
		b.WriteString("<sub>↑ peaked at the top of its connection ladder: the knee may lie beyond it.</sub><br>\n")
	}
	b.WriteString("\n")
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

// renderSiteLinks links the results site (docs/report.md): the baseline
// run's page in a cross-run comparison, and the trend. The base URL was
// checked (CheckSiteURL) and a page name is a slug, so neither can end the
// link; the URL is still shown as link text only, never raw.
func renderSiteLinks(b *strings.Builder, c *Comparison, site string) {
	if site == "" {
		return
	}
	links := []string{}
	if c.Base != nil {
		links = append(links, fmt.Sprintf("[baseline run %s](%s%s)", text(shortRef(c.Base.Meta.GitRef)), site, SitePage(c.Base)))
	}
	links = append(links, fmt.Sprintf("[trend over commits](%s)", site))
	fmt.Fprintf(b, "Results site: %s.\n\n", strings.Join(links, " · "))
}
