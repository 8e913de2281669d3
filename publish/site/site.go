// Package site renders published sweep results and their history as a
// static web site (`ceiling report --out DIR`): index.html, the trend of
// the headline and of every batch size's ceiling over commits, and one
// page per run with each batch size's curve.
//
// Design:
//
//   - Static and self-contained: every chart is an inline SVG computed in
//     Go (chart.go), the style is inline, there is no script, no font and
//     no request to anywhere else, so a page works from a file, offline,
//     and on GitHub Pages, and looks the same in each.
//   - Everything that came from a result or the history (regime, target
//     names, commands, reasons, warnings, git refs) goes through
//     html/template, which escapes it for the context it lands in (text,
//     attribute, URL). Page names are built from a sanitised slug, never
//     from raw text. The hover text of a point is an SVG <title>, which
//     browsers show as a tooltip without any script.
//   - What the comment says in words, the page shows: lower bounds are
//     hollow, dashed markers (and ≥ in tables), the A-A noise band is a
//     shaded band around the headline, a regime change is a dashed
//     vertical line in the trend, failed points are crosses on the axis,
//     and a change point (publish.Changes) is marked on the trend, on its
//     History row and atop the run pages of the segment it began
//     (changepoints.go).
//   - The DOM carries what tests count: each chart is <svg class="chart"
//     data-kind=...>, each series a <g class="series">, each lower-bound
//     marker has the class lower-bound (site_test.go and the browser test
//     check these against the documents).
package site

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// Run is one sweep document to render, and the name it was read from.
type Run struct {
	Name   string
	Result *result.Result
	// Files is the directory the result was read from, for the files it
	// names (a profile diff's folded stacks); nil: none are read.
	Files fs.FS
}

// Options are what a site is built from besides the runs.
type Options struct {
	// History is the published history, oldest first; each run given is
	// merged into it (publish.MergeHistory: replacing an entry of the same
	// series and commit where it stands, else by its finish time) so that
	// the trend shows it.
	History []publish.HistoryEntry
	// Now stamps the pages ("built at"); zero: time.Now.
	Now time.Time
}

// IndexFile is the site's entry page.
const IndexFile = "index.html"

//go:embed templates/*.tmpl
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"rate": func(v float64) string { return result.FormatRate(v) },
	// A p99 of 0 is one that was not measured (a failed run, a scenario
	// without latency): a dash, never "0".
	"latency": func(ns int64) string {
		if ns <= 0 {
			return "—"
		}
		return latency(float64(ns))
	},
	"f1":    func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"short": shortRef,
	// words and p say a token and a p-value as the terminal and the
	// comment do (result.Phrase, result.FormatP).
	"words": result.Phrase,
	// stopped is why the headline's blocks stopped (result.WhyStopped).
	"stopped": result.WhyStopped,
	"date":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"pct": func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%%", *v)
	},
	"signedPct": func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%+.1f%%", *v)
	},
	"p":     func(v *float64) string { return nbsp(result.FormatP(v)) },
	"pcell": func(v *float64) string { return nbsp(result.PCell(v)) },
	"join":  strings.Join,
	// perConn is a side's memory per connection, "—" without one.
	"perConn": func(m *result.Memory) string {
		if v, ok := m.PerConnection(); ok {
			return result.Bytes(v)
		}
		return "—"
	},
	"bytes":       result.Bytes,
	"connections": result.ConnectionsHeadline,
	// verdictClass is the style of a comparison's verdict: red for
	// slower, yellow for cannot conclude, green for faster.
	"verdictClass": func(v string) string {
		switch v {
		case result.CompareSlower:
			return "alert"
		case result.CompareCannotConclude:
			return "warn"
		case result.CompareFaster:
			return "ok"
		}
		return "note"
	},
	"add":  func(a, b float64) float64 { return a + b },
	"sub":  func(a, b float64) float64 { return a - b },
	"half": func(a float64) float64 { return a / 2 },
	// ns is a cost per message in CPU time.
	"ns": func(v float64) string {
		switch {
		case v >= 1e6 || v <= -1e6:
			return fmt.Sprintf("%.2f ms", v/1e6)
		case v >= 1e3 || v <= -1e3:
			return fmt.Sprintf("%.2f µs", v/1e3)
		}
		return fmt.Sprintf("%.0f ns", v)
	},
}).ParseFS(templateFS, "templates/*.tmpl"))

// nbsp keeps a formatted figure on one line: "p < 0.001" never breaks
// after its "<".
func nbsp(s string) string { return strings.ReplaceAll(s, " ", "\u00a0") }

// Build renders the site in memory: file name to content.
func Build(runs []Run, opts Options) (map[string][]byte, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	out := map[string][]byte{}
	pageOf := map[string]string{} // series + "\x00" + git ref -> page
	var runViews []*runView
	var entries []publish.HistoryEntry
	for _, r := range runs {
		page := uniquePage(out, pageName(r.Result))
		out[page] = nil // reserve
		e := publish.EntryOf(r.Result)
		pageOf[e.Series()+"\x00"+e.GitRef] = page
		entries = append(entries, e)
		runViews = append(runViews, newRunView(r, page, opts.Now))
	}
	// The history's own order, whatever the order of the runs given.
	hist := publish.MergeHistory(opts.History, entries)
	rows := publish.Trend(hist)
	idx := &indexView{Built: opts.Now, Runs: runViews, Batches: publish.TrendBatches(rows)}
	points := publish.Changes(hist)
	var notes map[string]*runChange
	idx.Rows, notes = historyRows(rows, points, pageOf)
	for i, rv := range runViews {
		rv.ChangePoint = notes[entries[i].Series()+"\x00"+entries[i].GitRef]
	}
	for _, series := range publish.TrendSeries(rows) {
		placed := placeChanges(series, points)
		idx.Trends = append(idx.Trends, trendView{Series: series[0].Series(), Chart: trendChart(series, placed), Narrow: narrowTrendChart(series, placed)})
	}
	for i, rv := range runViews {
		var svg []byte
		if rv.Profile, svg = profileOf(runs[i], rv.Page); svg != nil {
			out[rv.Profile.File] = svg
		}
		b, err := render("run.tmpl", rv)
		if err != nil {
			return nil, err
		}
		out[rv.Page] = b
	}
	b, err := render("index.tmpl", idx)
	if err != nil {
		return nil, err
	}
	out[IndexFile] = b
	return out, nil
}

// historyRows are the History table's rows, and the change point line of
// each entry's run page (by series + "\x00" + git ref, as pageOf).
func historyRows(rows []publish.TrendRow, points []publish.Change, pageOf map[string]string) ([]trendRowView, map[string]*runChange) {
	changes := publish.RowChanges(rows)
	ids, marks := rowIDs(rows), rowChanges(rows, points)
	out := make([]trendRowView, len(rows))
	notes := map[string]*runChange{}
	for i, row := range rows {
		key := row.Series() + "\x00" + row.GitRef
		out[i] = trendRowView{TrendRow: row, Change: changes[i], Page: pageOf[key], ID: ids[i]}
		if m := marks[i]; m.Starts != nil {
			out[i].ChangePoint = newChangeCell(*m.Starts)
		}
		if m := marks[i]; m.In != nil {
			notes[key] = newRunChange(*m.In, m.Ago, ids[m.From])
		}
	}
	return out, notes
}

// Write builds the site and writes it into dir (created if missing),
// returning the files written, index first.
func Write(dir string, runs []Run, opts Options) ([]string, error) {
	files, err := Build(runs, opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case a == IndexFile:
			return -1
		case b == IndexFile:
			return 1
		}
		return strings.Compare(a, b)
	})
	var errs []error
	for _, name := range names {
		errs = append(errs, os.WriteFile(filepath.Join(dir, name), files[name], 0o644))
	}
	return names, errors.Join(errs...)
}

func render(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// pageName is a run's page (publish.SitePage, which the comment links).
func pageName(r *result.Result) string { return publish.SitePage(r) }

func uniquePage(taken map[string][]byte, name string) string {
	if _, ok := taken[name]; !ok {
		return name
	}
	base := strings.TrimSuffix(name, ".html")
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s-%d.html", base, i)
		if _, ok := taken[n]; !ok {
			return n
		}
	}
}

func slug(s string) string { return publish.Slug(s) }

type indexView struct {
	Built time.Time
	// Trends holds one chart per series (generator, server, scenario,
	// kind): never two kinds of result on one line.
	Trends  []trendView
	Rows    []trendRowView
	Batches []int
	Runs    []*runView
}

// trendView is one series' trend, drawn twice: Chart for a screen wider
// than a phone's, Narrow for a phone's (the style shows one of the two).
type trendView struct {
	Series string
	Chart  *chart
	Narrow *chart
}

type trendRowView struct {
	publish.TrendRow
	Change publish.RowChange // against its series' row before
	Page   string            // its run page, when the run was given
	ID     string            // its anchor, which run pages link
	// ChangePoint: this entry is the first after a headline change point.
	ChangePoint *changeCell
}

// Cell is the trend table's cell of a batch.
func (r trendRowView) Cell(batch int) string {
	c, ok := r.Ceiling(batch)
	switch {
	case !ok:
		return ""
	case !c.Found:
		return "none"
	}
	s := result.FormatRate(c.ThroughputPerS) + " @" + fmt.Sprint(c.Connections)
	if c.LowerBound {
		s = "≥" + s
	}
	return s
}

// CellLowerBound reports whether the cell of a batch is a lower bound.
func (r trendRowView) CellLowerBound(batch int) bool {
	c, ok := r.Ceiling(batch)
	return ok && c.LowerBound
}

type runView struct {
	Name    string
	Page    string
	Built   time.Time
	R       *result.Result
	Charts  []*chart
	Points  []result.Point
	Ceiling []result.BatchCeiling
	// ChangePoint: the run's entry is in the segment a headline change
	// point began.
	ChangePoint *runChange
	// Profile is a two-arm run's differential CPU profile (nil without).
	Profile *profileView
}

func newRunView(r Run, page string, now time.Time) *runView {
	v := &runView{Name: r.Name, Page: page, Built: now, R: r.Result, Points: r.Result.Curve, Ceiling: r.Result.Ceilings}
	for _, b := range r.Result.Config.BatchLadder {
		v.Charts = append(v.Charts, curveChart(r.Result, b))
	}
	return v
}
