package site

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// chart is one inline SVG: one or two panels side by side and a legend.
// Everything in it is numbers and fixed words, except the titles (hover
// text) and legend names, which html/template escapes.
type chart struct {
	Kind   string // "curve" (a batch size of a run) or "trend"
	Batch  int    // curve only
	Narrow bool   // trend only: the phone's layout (narrowTrendChart)
	W, H   float64
	Label  string // the SVG's <title> and aria-label
	Panels []*panel
	Legend []legendItem
}

type legendItem struct {
	X, Y       float64 // its place (layoutLegend)
	Name       string
	Color      string
	Dash       bool
	LowerBound bool // a hollow marker, not a line
	Band       bool // the noise band's swatch
	Regime     bool // the regime-change line
	Move       bool // a moved entry's ring
	// ChangePoint is the change point marker's swatch, Down its colour.
	ChangePoint, Down bool
}

type panel struct {
	X, Y, W, H     float64 // the plot area
	Title          string
	XLabel, YLabel string
	XTicks, YTicks []tick
	Band           *band
	VLines         []vline
	Series         []*series
	Rings          []mark // the ceilings, a ring around their point
	// Moves mark the trend's entries whose headline moved beyond both
	// runs' A-A floors (publish.RowChange.Moved), as the History table's
	// change column does.
	Moves []move
	// ChangePoints mark the trend's change points (changepoints.go).
	ChangePoints []changeMark
}

// move is a marked change on the trend: a ring around the headline's
// point and its change as a label.
type move struct {
	X, Y   float64
	Label  string // "-83.0%"
	Title  string
	Down   bool
	LabelY float64
}

type tick struct {
	Pos   float64
	Label string
	// Anchor is the x label's text-anchor: "" (middle), or start or end
	// for one that would run past the chart's edge.
	Anchor string
}

type band struct {
	Y, H  float64
	Title string
}

type vline struct {
	X     float64
	Title string
}

type series struct {
	Name   string
	Color  string
	Dash   bool
	Wide   bool   // drawn wide and translucent, under the others
	Points string // the polyline, "x,y x,y"
	// Breaks are more polylines after Points: the trend's line starts
	// afresh after each regime change, since values across it are not
	// comparable.
	Breaks []string
	Marks  []mark
}

type mark struct {
	X, Y       float64
	LowerBound bool // hollow, dashed: the generator was capped
	NotClean   bool // measured, but with errors, saturated or contended
	Failed     bool // no number: a cross on the axis
	Title      string
}

// Geometry of every chart, in SVG user units.
const (
	panelW  = 420.0
	panelH  = 240.0
	marginL = 70.0
	marginR = 20.0
	marginT = 30.0
	marginB = 50.0
	legendH = 26.0
)

// yScale maps [0, top] onto the panel, top up.
func (p *panel) y(v, top float64) float64 { return p.Y + p.H - v/top*p.H }

func (p *panel) yTicks(top float64, format func(float64) string) {
	for i := range 5 {
		v := top * float64(i) / 4
		p.YTicks = append(p.YTicks, tick{Pos: p.y(v, top), Label: format(v)})
	}
}

// xScale places connection counts: on a log scale when the ladder spans
// more than a factor of 2 (ladders are geometric), linear otherwise, and
// in the middle when there is one.
type xScale struct {
	lo, hi float64
	log    bool
}

func newXScale(vals []int) xScale {
	if len(vals) == 0 {
		return xScale{lo: 0, hi: 1}
	}
	lo, hi := float64(slices.Min(vals)), float64(slices.Max(vals))
	return xScale{lo: lo, hi: hi, log: lo > 0 && hi/lo > 2}
}

func (s xScale) at(p *panel, v float64) float64 {
	inset := p.W * 0.06
	if s.hi == s.lo {
		return p.X + p.W/2
	}
	var f float64
	if s.log {
		f = (math.Log(v) - math.Log(s.lo)) / (math.Log(s.hi) - math.Log(s.lo))
	} else {
		f = (v - s.lo) / (s.hi - s.lo)
	}
	return p.X + inset + f*(p.W-2*inset)
}

func newPanel(i int, title, xl, yl string) *panel {
	return &panel{
		X: marginL + float64(i)*(panelW+marginL+marginR), Y: marginT,
		W: panelW, H: panelH, Title: title, XLabel: xl, YLabel: yl,
	}
}

func chartSize(c *chart) {
	c.W = float64(len(c.Panels)) * (marginL + panelW + marginR)
	layoutLegend(c)
}

// legendW is the room of one legend entry; entries wrap onto rows.
const legendW = 190.0

// layoutLegend places the legend entries in rows under the plots and sets
// the chart's height to hold them.
func layoutLegend(c *chart) {
	left := c.Panels[0].X
	perRow := max(1, int((c.W-left)/legendW))
	top := marginT + panelH + marginB
	for i := range c.Legend {
		c.Legend[i].X = left + float64(i%perRow)*legendW
		c.Legend[i].Y = top + float64(i/perRow)*legendH
	}
	rows := (len(c.Legend) + perRow - 1) / perRow
	c.H = top + float64(max(rows, 1))*legendH
}

func polyline(marks []mark) string {
	var b strings.Builder
	for i, m := range marks {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", m.X, m.Y)
	}
	return b.String()
}

func rate(v float64) string { return result.FormatRate(v) }

func shortRate(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func latency(ns float64) string {
	if ns <= 0 {
		return "0"
	}
	return result.FormatLatency(int64(ns))
}

// arm is one measured server of a run: the only one, or base and head.
type arm struct {
	key   string // Point.Arm
	name  string
	color string
}

func armsOf(r *result.Result) []arm {
	if r.Comparison != nil || r.Meta.BaseTarget != nil {
		return []arm{{result.ArmBase, "base", publish.ColorBase}, {result.ArmHead, "head", publish.ColorHead}}
	}
	return []arm{{"", "throughput", publish.ColorBase}}
}

// sample reports whether a point is a sample of its (batch, connections):
// a sweep point, the A-A repeat or a compare repeat; the headroom probe
// (generator held to a quota) is not.
func sample(p result.Point) bool {
	return p.Role == result.RoleSweep || p.Role == result.RoleAARepeat || p.Role == result.RoleCompare
}

// pointTitle is a point's hover text: what it measured, its verdict and
// the reason.
func pointTitle(p result.Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "point %d, %s", p.Index, strings.ReplaceAll(p.Role, "_", " "))
	if p.Arm != "" {
		fmt.Fprintf(&b, " (%s)", p.Arm)
	}
	fmt.Fprintf(&b, ", batch %d, %d connections, rep %d\n", p.Batch, p.Connections, p.Rep)
	if p.Status != "ok" {
		fmt.Fprintf(&b, "failed: %s", p.FailReason)
		return b.String()
	}
	fmt.Fprintf(&b, "%s msg/s, p99 %s\n", rate(p.ThroughputPerS), latency(float64(p.LatencyNs.P99)))
	fmt.Fprintf(&b, "verdict: %s", p.Verdict)
	if p.LowerBound {
		b.WriteString(" (a lower bound: the server may do more)")
	}
	if p.VerdictReason != "" {
		fmt.Fprintf(&b, "\nwhy: %s", p.VerdictReason)
	}
	if !p.Clean {
		b.WriteString("\nnot clean: ")
		var why []string
		if p.Errors > 0 {
			why = append(why, fmt.Sprintf("%d errors", p.Errors))
		}
		if p.Saturated {
			why = append(why, "saturated")
		}
		if p.Contended {
			why = append(why, "contended")
		}
		if len(why) == 0 {
			why = append(why, "see the point's table row")
		}
		b.WriteString(strings.Join(why, ", "))
	}
	if p.Objective != nil {
		if p.Objective.Met {
			b.WriteString("\nobjective: met")
		} else {
			b.WriteString("\nobjective: missed")
			for _, cond := range p.Objective.Conditions {
				if !cond.Met && cond.Why != "" {
					b.WriteString("; " + cond.Why)
				}
			}
		}
	}
	return b.String()
}

// curveChart is one batch size of a run: throughput against connections
// on the left, p99 on the right, one line per arm through its highest
// clean sweep point at each connection count, and a marker for every
// measured sample (repeats stack). Lower bounds are hollow and dashed,
// failed points a cross on the axis, the ceiling ringed, and at the
// headline batch the A-A noise band around the headline.
func curveChart(r *result.Result, batch int) *chart {
	c := &chart{Kind: "curve", Batch: batch, Label: fmt.Sprintf("batch %d: throughput and p99 against connections", batch)}
	tp := newPanel(0, fmt.Sprintf("batch %d: throughput", batch), "connections", "msg/s")
	lat := newPanel(1, fmt.Sprintf("batch %d: p99 latency", batch), "connections", "p99")
	c.Panels = []*panel{tp, lat}

	pts, conns, maxTP, maxLat := curvePoints(r, batch)
	var floorPct float64
	withBand := r.NoiseFloorPct != nil && batch == r.Headline.Batch && r.Headline.ThroughputPerS > 0
	if withBand {
		floorPct = *r.NoiseFloorPct
		maxTP = max(maxTP, r.Headline.ThroughputPerS*(1+floorPct/100))
	}
	ax := newCurveAxes(tp, lat, conns, maxTP, maxLat)
	if withBand {
		tp.Band = noiseBand(ax, r, floorPct)
		c.Legend = append(c.Legend, legendItem{Name: fmt.Sprintf("A-A noise ±%.1f%%", floorPct), Band: true})
	}
	for _, a := range armsOf(r) {
		ts, ls := curveSeries(ax, a, pts)
		tp.Series = append(tp.Series, ts)
		lat.Series = append(lat.Series, ls)
		c.Legend = append(c.Legend, legendItem{Name: ts.Name, Color: a.color}, legendItem{Name: ls.Name, Color: a.color, Dash: true})
	}
	tp.Rings = append(tp.Rings, ceilingRings(ax, r, batch)...)
	if anyMark(tp.Series, func(m mark) bool { return m.LowerBound }) {
		c.Legend = append(c.Legend, legendItem{Name: "lower bound", LowerBound: true})
	}
	chartSize(c)
	return c
}

// curvePoints returns the samples of batch, the connection counts they
// cover (ascending), and the highest throughput and p99 of those ok.
func curvePoints(r *result.Result, batch int) (pts []result.Point, conns []int, maxTP, maxLat float64) {
	for _, p := range r.Curve {
		if p.Batch != batch || !sample(p) {
			continue
		}
		pts = append(pts, p)
		if !slices.Contains(conns, p.Connections) {
			conns = append(conns, p.Connections)
		}
		if p.Status == "ok" {
			maxTP = max(maxTP, p.ThroughputPerS)
			maxLat = max(maxLat, float64(p.LatencyNs.P99))
		}
	}
	slices.Sort(conns)
	return pts, conns, maxTP, maxLat
}

// curveAxes are a curve chart's two panels with their shared x scale
// and each panel's y-axis top.
type curveAxes struct {
	tp, lat       *panel
	xs            xScale
	conns         []int
	topTP, topLat float64
}

// newCurveAxes ticks both panels: one x tick per connection count, and
// y ticks up to the axis tops above maxTP and maxLat.
func newCurveAxes(tp, lat *panel, conns []int, maxTP, maxLat float64) curveAxes {
	topTP, topLat := publish.AxisTop(maxTP), publish.AxisTop(maxLat)
	xs := newXScale(conns)
	for _, p := range []*panel{tp, lat} {
		for _, n := range conns {
			p.XTicks = append(p.XTicks, tick{Pos: xs.at(p, float64(n)), Label: strconv.Itoa(n)})
		}
	}
	tp.yTicks(topTP, shortRate)
	lat.yTicks(topLat, latency)
	return curveAxes{tp: tp, lat: lat, xs: xs, conns: conns, topTP: topTP, topLat: topLat}
}

// noiseBand is the A-A noise floor of floorPct around the headline,
// clipped to the throughput panel.
func noiseBand(ax curveAxes, r *result.Result, floorPct float64) *band {
	hi := min(r.Headline.ThroughputPerS*(1+floorPct/100), ax.topTP)
	lo := max(r.Headline.ThroughputPerS*(1-floorPct/100), 0)
	return &band{
		Y: ax.tp.y(hi, ax.topTP), H: ax.tp.y(lo, ax.topTP) - ax.tp.y(hi, ax.topTP),
		Title: fmt.Sprintf("A-A noise floor ±%.1f%% around the headline (%s msg/s at %d connections): the headline point run again at the end differed by this much",
			floorPct, rate(r.Headline.ThroughputPerS), r.Headline.Connections),
	}
}

// curveSeries is arm a's throughput and p99 series: a mark per sample
// and a line through its highest clean sweep point at each count.
func curveSeries(ax curveAxes, a arm, pts []result.Point) (ts, ls *series) {
	ts = &series{Name: a.name, Color: a.color}
	ls = &series{Name: "p99 " + a.name, Color: a.color, Dash: true}
	if a.name == "throughput" {
		ls.Name = "p99"
	}
	best := map[int]result.Point{}
	for _, p := range pts {
		if p.Arm != a.key {
			continue
		}
		title := pointTitle(p)
		x0, x1 := ax.xs.at(ax.tp, float64(p.Connections)), ax.xs.at(ax.lat, float64(p.Connections))
		if p.Status != "ok" {
			ts.Marks = append(ts.Marks, mark{X: x0, Y: ax.tp.Y + ax.tp.H, Failed: true, Title: title})
			ls.Marks = append(ls.Marks, mark{X: x1, Y: ax.lat.Y + ax.lat.H, Failed: true, Title: title})
			continue
		}
		ts.Marks = append(ts.Marks, mark{X: x0, Y: ax.tp.y(p.ThroughputPerS, ax.topTP), LowerBound: p.LowerBound, NotClean: !p.Clean, Title: title})
		ls.Marks = append(ls.Marks, mark{X: x1, Y: ax.lat.y(float64(p.LatencyNs.P99), ax.topLat), NotClean: !p.Clean, Title: title})
		if p.Role == result.RoleSweep && p.Clean {
			if b, ok := best[p.Connections]; !ok || p.ThroughputPerS > b.ThroughputPerS {
				best[p.Connections] = p
			}
		}
	}
	var line, lline []mark
	for _, n := range ax.conns {
		if p, ok := best[n]; ok {
			line = append(line, mark{X: ax.xs.at(ax.tp, float64(n)), Y: ax.tp.y(p.ThroughputPerS, ax.topTP)})
			lline = append(lline, mark{X: ax.xs.at(ax.lat, float64(n)), Y: ax.lat.y(float64(p.LatencyNs.P99), ax.topLat)})
		}
	}
	ts.Points, ls.Points = polyline(line), polyline(lline)
	return ts, ls
}

// ceilingRings rings the ceiling of batch (the head's, in a two-arm
// run: Ceilings describe it) on the throughput panel.
func ceilingRings(ax curveAxes, r *result.Result, batch int) []mark {
	var rings []mark
	for _, bc := range r.Ceilings {
		if bc.Batch != batch || !bc.Found {
			continue
		}
		t := fmt.Sprintf("ceiling of batch %d: %s msg/s at %d connections (%s)", batch, rate(bc.ThroughputPerS), bc.Connections, bc.Verdict)
		if bc.LowerBound {
			t += ", a lower bound"
		}
		if bc.AtLadderTop {
			t += ", at the top of the ladder: widen it"
		}
		rings = append(rings, mark{X: ax.xs.at(ax.tp, float64(bc.Connections)), Y: ax.tp.y(bc.ThroughputPerS, ax.topTP), LowerBound: bc.LowerBound, Title: t})
	}
	return rings
}

func anyMark(ss []*series, f func(mark) bool) bool {
	for _, s := range ss {
		if slices.ContainsFunc(s.Marks, f) {
			return true
		}
	}
	return false
}

// trendPalette colours the trend's batch series; the headline is drawn
// wide and grey under them.
var trendPalette = []string{publish.ColorBase, publish.ColorHead, publish.ColorBaseLowerBound, publish.ColorHeadLowerBound, "#1a7f37", "#bf3989"}

// trendChart is the headline and every batch size's ceiling over the
// history, oldest left; a dashed vertical line before each regime change,
// lower bounds hollow, and a marker at each change point of cs (placed
// on rows). Its panel widens with the history, up to 1100 units.
func trendChart(rows []publish.TrendRow, cs []placed) *chart {
	p := newPanel(0, "ceilings over commits", "commit (oldest left)", "msg/s")
	p.W = max(panelW, min(float64(len(rows))*70, 1100))
	return trendIn(p, rows, cs)
}

// Geometry of the narrow trend: the whole chart in phoneW units, drawn
// at its own size on a 390-pixel screen (the page's 1 rem margins
// leave 358 pixels), so the text keeps 11 px and every entry, the
// latest change point too, is on the screen without a swipe.
const (
	phoneW       = 356.0
	phoneMarginL = 44.0
)

// narrowTrendChart is trendChart laid out for a phone: the same entries
// and marks in a panel of phoneW units, with fewer commit labels.
func narrowTrendChart(rows []publish.TrendRow, cs []placed) *chart {
	p := newPanel(0, "ceilings over commits", "commit (oldest left)", "msg/s")
	p.X, p.W = phoneMarginL, phoneW-phoneMarginL-marginR
	c := trendIn(p, rows, cs)
	c.Narrow = true
	return c
}

// commitLabels are the rows whose commit the x axis names: as many as
// fit without touching, every step-th counted back from the newest, which
// is always named (a long history's labels once ran together into one
// string). at is a row's x; a label is about 6.6 units a character at
// 11 px, with room between.
func commitLabels(rows []publish.TrendRow, at func(int) float64) []int {
	if len(rows) == 0 {
		return nil
	}
	widest := 0.0
	for _, r := range rows {
		widest = max(widest, labelW(shortRef(r.GitRef)))
	}
	step := 1
	if len(rows) > 1 {
		step = max(1, int(math.Ceil((widest+14)/(at(1)-at(0)))))
	}
	var out []int
	for i := len(rows) - 1; i >= 0; i -= step {
		out = append([]int{i}, out...)
	}
	return out
}

// apart drops, from the newest back, a label that would touch the one
// after it (a label turned to fit the chart's edge takes its
// neighbour's room).
func apart(ts []tick) []tick {
	span := func(t tick) (lo, hi float64) {
		w := labelW(t.Label)
		switch t.Anchor {
		case "end":
			return t.Pos - w, t.Pos
		case "start":
			return t.Pos, t.Pos + w
		}
		return t.Pos - w/2, t.Pos + w/2
	}
	var kept []tick
	for i := len(ts) - 1; i >= 0; i-- {
		if len(kept) > 0 {
			_, hi := span(ts[i])
			if lo, _ := span(kept[0]); hi+8 > lo {
				continue
			}
		}
		kept = append([]tick{ts[i]}, kept...)
	}
	return kept
}

// labelW is the width of an axis label at 11 px, about 6.6 units a
// character.
func labelW(s string) float64 { return 6.6 * float64(len([]rune(s))) }

// trendIn draws the trend in panel p.
func trendIn(p *panel, rows []publish.TrendRow, cs []placed) *chart {
	c := &chart{Kind: "trend", Label: "the headline and each batch size's ceiling over commits"}
	c.Panels = []*panel{p}
	top := 0.0
	for _, r := range rows {
		top = max(top, r.ThroughputPerS)
		for _, bc := range r.CeilingsOf() {
			top = max(top, bc.ThroughputPerS)
		}
	}
	top = publish.AxisTop(top)
	p.yTicks(top, shortRate)
	xs := xScale{lo: 0, hi: float64(max(len(rows)-1, 0))}
	for _, i := range commitLabels(rows, func(i int) float64 { return xs.at(p, float64(i)) }) {
		t := tick{Pos: xs.at(p, float64(i)), Label: shortRef(rows[i].GitRef)}
		half := labelW(t.Label) / 2
		switch {
		case t.Pos+half > p.X+p.W+marginR:
			t.Anchor = "end"
		case t.Pos-half < p.X-marginL/2:
			t.Anchor = "start"
		}
		p.XTicks = append(p.XTicks, t)
	}
	p.XTicks = apart(p.XTicks)
	for i, r := range rows {
		x := xs.at(p, float64(i))
		if r.RegimeChanged {
			prev := xs.at(p, float64(i-1))
			p.VLines = append(p.VLines, vline{X: (x + prev) / 2, Title: fmt.Sprintf("regime changed at %s: %s (not comparable across this line)", shortRef(r.GitRef), r.RegimeChange("→"))})
		}
	}
	head := &series{Name: "headline", Color: "#6e7781", Wide: true}
	var line []mark
	changes := publish.RowChanges(rows)
	for i, r := range rows {
		if ch := changes[i]; ch.Moved {
			x, y := xs.at(p, float64(i)), p.y(r.ThroughputPerS, top)
			ly := y - 14
			if ly < p.Y+10 {
				ly = y + 22 // no room above: below the point
			}
			// "vs prev": this entry against the one before, which a change
			// point's label at the same x (the level's move) is not.
			p.Moves = append(p.Moves, move{X: x, Y: y, LabelY: ly, Label: signedPct(ch.Pct) + " vs prev", Down: ch.Pct < 0,
				Title: fmt.Sprintf("%s: the headline moved %+.1f%% from the entry before, beyond both runs' A-A noise floors", shortRef(r.GitRef), ch.Pct)})
		}
	}
	for i, r := range rows {
		if r.RegimeChanged && len(line) > 0 {
			head.addSegment(line)
			line = nil
		}
		m := mark{X: xs.at(p, float64(i)), Y: p.y(r.ThroughputPerS, top), LowerBound: r.LowerBound,
			Title: fmt.Sprintf("%s, %s: headline %s msg/s, batch %d at %d connections (%s)%s", shortRef(r.GitRef), r.FinishedAt.UTC().Format("2006-01-02 15:04"), rate(r.ThroughputPerS), r.Batch, r.Connections, r.Verdict, lbWords(r.LowerBound))}
		head.Marks = append(head.Marks, m)
		line = append(line, m)
	}
	head.addSegment(line)
	p.Series = append(p.Series, head)
	c.Legend = append(c.Legend, legendItem{Name: "headline", Color: head.Color})
	for bi, b := range publish.TrendBatches(rows) {
		s := &series{Name: fmt.Sprintf("batch %d", b), Color: trendPalette[bi%len(trendPalette)]}
		var line []mark
		for i, r := range rows {
			if r.RegimeChanged && len(line) > 0 {
				s.addSegment(line)
				line = nil
			}
			bc, ok := r.Ceiling(b)
			if !ok || !bc.Found {
				continue
			}
			m := mark{X: xs.at(p, float64(i)), Y: p.y(bc.ThroughputPerS, top), LowerBound: bc.LowerBound,
				Title: fmt.Sprintf("%s: batch %d ceiling %s msg/s at %d connections (%s)%s", shortRef(r.GitRef), b, rate(bc.ThroughputPerS), bc.Connections, bc.Verdict, lbWords(bc.LowerBound))}
			s.Marks = append(s.Marks, m)
			line = append(line, m)
		}
		s.addSegment(line)
		p.Series = append(p.Series, s)
		c.Legend = append(c.Legend, legendItem{Name: s.Name, Color: s.Color})
	}
	if len(p.VLines) > 0 {
		c.Legend = append(c.Legend, legendItem{Name: "regime change", Regime: true})
	}
	if len(p.Moves) > 0 {
		c.Legend = append(c.Legend, legendItem{Name: "vs prev: beyond the A-A floors", Move: true})
	}
	p.ChangePoints = changeMarks(p, func(i int) float64 { return xs.at(p, float64(i)) }, cs)
	c.Legend = append(c.Legend, changeLegend(p.ChangePoints)...)
	if anyMark(p.Series, func(m mark) bool { return m.LowerBound }) {
		c.Legend = append(c.Legend, legendItem{Name: "lower bound", LowerBound: true})
	}
	c.W = p.X + p.W + marginR
	layoutLegend(c)
	return c
}

func lbWords(lb bool) string {
	if lb {
		return ", a lower bound: the server may do more"
	}
	return ""
}

// shortRef abbreviates a full commit id; anything else is kept.
func shortRef(ref string) string {
	core := strings.TrimSuffix(ref, "-dirty")
	if len(core) == 40 && strings.Trim(core, "0123456789abcdef") == "" {
		return core[:12] + ref[40:]
	}
	return ref
}

// addSegment adds a run of marks as the series' line (Points) or, after
// the first, as a break (Breaks).
func (s *series) addSegment(marks []mark) {
	if len(marks) == 0 {
		return
	}
	if s.Points == "" {
		s.Points = polyline(marks)
		return
	}
	s.Breaks = append(s.Breaks, polyline(marks))
}
