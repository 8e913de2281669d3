package publish

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/result"
)

// The chart is a mermaid xychart built from numbers only. Its colours are
// set in the diagram's init directive (themeVariables.xyChart.
// plotColorPalette) rather than left to the theme: the default palette
// draws the first line near-white, invisible on GitHub's light theme. Each
// colour has a contrast ratio of at least 4:1 against both GitHub's light
// (#ffffff) and dark (#0d1117) backgrounds (chart_test.go checks it), and
// the theme itself is not set, so the axes and text follow the reader's.
//
// Every series is named, so mermaid draws a legend; the sentence under
// the chart names the lines too, for a renderer without legends. The
// y-axis starts at zero. A line cannot carry a mark, so the lower-bound
// (generator-capped) points are drawn as bars of their own series, in
// their own colour at 40 % opacity (barAlpha), under the lines: mermaid
// draws the bars of two series at one x over each other, and opaque bars
// hid both the shorter bar and the lines.
const (
	ColorBase           = "#1f6feb" // blue
	ColorHead           = "#d9480f" // orange
	ColorBaseLowerBound = "#8957e5" // purple bars
	ColorHeadLowerBound = "#a37000" // amber bars
)

// barAlpha is the lower-bound bars' opacity, as the #RRGGBBAA suffix.
const barAlpha = "66"

// ChartColors is every colour a chart may use (the bars' before their
// opacity), for tests and docs.
var ChartColors = []string{ColorBase, ColorHead, ColorBaseLowerBound, ColorHeadLowerBound}

// chartArm is one line of the chart.
type chartArm struct {
	name, color, lbName, lbColor string
	r                            *result.Result
	arm                          string // Point.Arm to select; "" for a single-arm run
}

// chartSeries is one arm's clean sweep throughput by connection count at
// a batch; with several reps the highest, as the ceiling itself is chosen.
// lb says whether the point drawn for a connection count is a lower bound.
func chartSeries(a chartArm, batch int) (tp map[int]float64, lb map[int]bool) {
	tp, lb = map[int]float64{}, map[int]bool{}
	for _, p := range a.r.Curve {
		if p.Role != result.RoleSweep || p.Arm != a.arm || p.Batch != batch || !p.Clean {
			continue
		}
		if v, ok := tp[p.Connections]; !ok || p.ThroughputPerS > v {
			tp[p.Connections], lb[p.Connections] = p.ThroughputPerS, p.LowerBound
		}
	}
	return tp, lb
}

func chartArms(c *Comparison) []chartArm {
	base := chartArm{name: "base", color: ColorBase, lbName: "base lower bound", lbColor: ColorBaseLowerBound}
	head := chartArm{name: c.headName(), color: ColorHead, lbName: c.headName() + " lower bound", lbColor: ColorHeadLowerBound, r: c.Head}
	switch c.Mode {
	case ModeTwoArm:
		base.r, base.arm, head.arm = c.Head, result.ArmBase, result.ArmHead
		return []chartArm{base, head}
	case ModeCrossRun:
		base.r = c.Base
		return []chartArm{base, head}
	}
	return []chartArm{head}
}

// renderChart draws the arms' throughput by connections at the headline
// batch as a mermaid chart, with its legend.
func renderChart(b *strings.Builder, c *Comparison) {
	batch := c.Head.Config.HeadlineBatch
	arms := chartArms(c)
	tps := make([]map[int]float64, len(arms))
	lbs := make([]map[int]bool, len(arms))
	for i, a := range arms {
		tps[i], lbs[i] = chartSeries(a, batch)
	}
	xs, left := chartXs(tps)
	if len(xs) == 0 {
		fmt.Fprintf(b, "No chart: no connection count has a clean sweep point at batch %d in every arm.\n\n", batch)
		return
	}
	top := chartTop(tps, xs)
	// Mermaid writes its ticks without thousands separators
	// ("150000"): from 10,000 the axis is in thousands.
	unit, scale := "msg/s", 1.0
	if top >= 10000 {
		unit, scale = "thousand msg/s", 1000
	}
	bars, lines, capped := chartPlots(arms, tps, lbs, xs, scale)
	// Folded: open, it was the comment's largest element (about 500 of
	// 1,430 px), for a line the table's figures already give.
	fmt.Fprintf(b, "<details><summary>Chart: throughput by connections, batch %d</summary>\n\n", batch)
	writeMermaidChart(b, batch, xs, unit, AxisTop(top)/scale, bars, lines)
	writeChartNote(b, c, lines, left, capped)
	b.WriteString("</details>\n\n")
}

// chartXs returns the connection counts clean in every arm, which are
// drawn, and the others, listed as left out; both ascending.
func chartXs(tps []map[int]float64) (xs, left []int) {
	for x := range tps[len(tps)-1] {
		xs = append(xs, x)
	}
	for _, tp := range tps {
		for x := range tp {
			if !slices.Contains(xs, x) && !slices.Contains(left, x) {
				left = append(left, x)
			}
		}
	}
	xs = slices.DeleteFunc(xs, func(x int) bool {
		for _, tp := range tps {
			if _, ok := tp[x]; !ok {
				left = append(left, x)
				return true
			}
		}
		return false
	})
	slices.Sort(xs)
	slices.Sort(left)
	left = slices.Compact(left)
	return xs, left
}

// chartTop is the highest throughput drawn.
func chartTop(tps []map[int]float64, xs []int) float64 {
	top := 0.0
	for _, tp := range tps {
		for _, x := range xs {
			top = math.Max(top, tp[x])
		}
	}
	return top
}

// plotSeries is one bar or line of the chart, its data in mermaid's
// list syntax.
type plotSeries struct{ kind, name, color, data string }

// chartPlots returns each arm's line, a shaded bar for each arm with
// generator-capped points (lower bounds), and those points in words.
func chartPlots(arms []chartArm, tps []map[int]float64, lbs []map[int]bool, xs []int, scale float64) (bars, lines []plotSeries, capped []string) {
	prec := 0
	if scale > 1 {
		prec = 1 // thousands to one decimal: 154.5 for 154,500
	}
	values := func(f func(x int) float64) string {
		v := make([]string, len(xs))
		for i, x := range xs {
			v[i] = strconv.FormatFloat(f(x)/scale, 'f', prec, 64)
		}
		return "[" + strings.Join(v, ", ") + "]"
	}
	for i, a := range arms {
		lines = append(lines, plotSeries{"line", a.name, a.color, values(func(x int) float64 { return tps[i][x] })})
		var at []string
		for _, x := range xs {
			if lbs[i][x] {
				at = append(at, strconv.Itoa(x))
			}
		}
		if len(at) > 0 {
			bars = append(bars, plotSeries{"bar", a.lbName, a.lbColor + barAlpha, values(func(x int) float64 {
				if lbs[i][x] {
					return tps[i][x]
				}
				return 0
			})})
			capped = append(capped, fmt.Sprintf("%s at %s connections", a.name, strings.Join(at, ", ")))
		}
	}
	return bars, lines, capped
}

// writeMermaidChart draws the bars, then the lines over them, on an axis
// of unit from zero to top.
func writeMermaidChart(b *strings.Builder, batch int, xs []int, unit string, top float64, bars, lines []plotSeries) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	all := append(bars, lines...) // bars first: the lines are drawn over them
	colors := make([]string, len(all))
	for i, s := range all {
		colors[i] = s.color
	}
	labels := make([]string, len(xs))
	for i, x := range xs {
		labels[i] = strconv.Quote(strconv.Itoa(x))
	}

	p("```mermaid\n")
	p("%%%%{init: {\"themeVariables\": {\"xyChart\": {\"plotColorPalette\": \"%s\"}}}}%%%%\n", strings.Join(colors, ", "))
	p("xychart-beta\n")
	p("    title \"%s\"\n", chartLabel(fmt.Sprintf("Throughput by connections, batch %d", batch)))
	p("    x-axis \"connections\" [%s]\n", strings.Join(labels, ", "))
	p("    y-axis \"%s\" 0 --> %s\n", unit, strconv.FormatFloat(top, 'f', 0, 64))
	for _, s := range all {
		p("    %s \"%s\" %s\n", s.kind, chartLabel(s.name), s.data)
	}
	p("```\n\n")
}

// writeChartNote is the legend under the chart: what the lines are,
// and the points left out or capped.
func writeChartNote(b *strings.Builder, c *Comparison, lines []plotSeries, left []int, capped []string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	var legend []string
	for _, s := range lines {
		legend = append(legend, fmt.Sprintf("%s (%s)", s.name, colorName(s.color)))
	}
	p("<sub>Lines: %s. Clean sweep points of the first pass only (highest rep), y-axis from zero.", strings.Join(legend, ", "))
	if c.Mode == ModeTwoArm {
		p(" The verdicts come from the compared repeats in the table, not from this line.")
	}
	if len(left) > 0 {
		p(" Left out, clean in one arm only: %s connections.", strings.Trim(fmt.Sprint(left), "[]"))
	}
	if len(capped) > 0 {
		p(" Generator-capped, so lower bounds (the shaded bars): %s.", strings.Join(capped, "; "))
	}
	p("</sub>\n\n")
}

// AxisTop is a chart's y-axis maximum: the highest value plus 10 %,
// rounded up to 1, 2, 2.5 or 5 times a power of ten, so the lines never
// touch the top edge and the ticks are round (the comment's mermaid chart
// and the results site's SVG charts).
func AxisTop(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	v *= 1.1
	mag := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= v {
			return m * mag
		}
	}
	return 10 * mag
}

func colorName(c string) string {
	switch c {
	case ColorBase:
		return "blue"
	case ColorHead:
		return "orange"
	case ColorBaseLowerBound:
		return "purple"
	case ColorHeadLowerBound:
		return "amber"
	}
	return c
}
