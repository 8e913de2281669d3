package publish

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ceiling-bench/ceiling/result"
)

// TrendRow is one history entry as a trend shows it.
type TrendRow struct {
	HistoryEntry
	// RegimeChanged: the regime differs from the previous entry of the
	// same generator, so the two are not comparable (another machine
	// class, other cores, another scenario).
	RegimeChanged bool
	// PrevRegime is that previous entry's regime when RegimeChanged, and
	// PrevTarget its server when that was another one.
	PrevRegime string
	PrevTarget string
}

// Trend marks regime changes along h (oldest first): another regime, or
// another server (Target). Each series (HistoryEntry.Series: generator,
// scenario, kind) is its own: an entry is compared with the previous
// entry of the same series only.
func Trend(h []HistoryEntry) []TrendRow {
	last := map[string]HistoryEntry{}
	out := make([]TrendRow, len(h))
	for i, e := range h {
		out[i] = TrendRow{HistoryEntry: e}
		prev, ok := last[e.Series()]
		// Another server is another regime; an entry from before the
		// server was recorded is taken to be the same one.
		otherServer := prev.Target != "" && e.Target != "" && prev.Target != e.Target
		if ok && (prev.Regime != e.Regime || otherServer) {
			out[i].RegimeChanged = true
			out[i].PrevRegime = prev.Regime
			if otherServer {
				out[i].PrevTarget = prev.Target
			}
		}
		last[e.Series()] = e
	}
	return out
}

// TrendSeries splits rows by series, each oldest first, in the order
// each series first appears.
func TrendSeries(rows []TrendRow) [][]TrendRow {
	var names []string
	by := map[string][]TrendRow{}
	for _, r := range rows {
		k := r.Series()
		if _, ok := by[k]; !ok {
			names = append(names, k)
		}
		by[k] = append(by[k], r)
	}
	out := make([][]TrendRow, len(names))
	for i, n := range names {
		out[i] = by[n]
	}
	return out
}

// TrendBatches is every batch size with a ceiling in rows, ascending.
func TrendBatches(rows []TrendRow) []int {
	var bs []int
	for _, r := range rows {
		for _, c := range r.CeilingsOf() {
			if !slices.Contains(bs, c.Batch) {
				bs = append(bs, c.Batch)
			}
		}
	}
	slices.Sort(bs)
	return bs
}

// Ceiling is row's ceiling at batch, and whether the row has that batch.
func (r TrendRow) Ceiling(batch int) (HistoryCeiling, bool) {
	for _, c := range r.CeilingsOf() {
		if c.Batch == batch {
			return c, true
		}
	}
	return HistoryCeiling{}, false
}

// Marks in the terminal table (the legend under it says what they mean).
const (
	markLowerBound = "≥"
	markRegime     = "▲"
	markPartial    = "~"
	markMove       = "*"
)

// historyChange is an entry's headline against its series' entry before
// it, and whether the move is beyond both entries' A-A noise floors; "—"
// when there is nothing to compare with: the first of its series, a regime
// change, a figure not measured, or a lower bound on either side (its
// change says nothing about the server). It records r as its series' last.
func historyChange(prev map[string]TrendRow, r TrendRow) (string, bool) {
	key := r.Series()
	p, ok := prev[key]
	prev[key] = r
	if !ok || r.RegimeChanged || p.Regime != r.Regime || p.ThroughputPerS <= 0 || r.ThroughputPerS <= 0 || p.LowerBound || r.LowerBound {
		return "—", false
	}
	pct := (r.ThroughputPerS/p.ThroughputPerS - 1) * 100
	cell := fmt.Sprintf("%+.1f%%", pct)
	if p.NoiseFloorPct != nil && r.NoiseFloorPct != nil && math.Abs(pct) > math.Max(*p.NoiseFloorPct, *r.NoiseFloorPct) {
		return cell + " " + markMove, true
	}
	return cell, false
}

// WriteHistoryTable writes the trend as a table for a terminal, oldest
// first, the last `last` entries (all when last <= 0): commit, date, the
// headline, every batch size's ceiling, the noise floor and the verdict.
// Lower bounds carry ≥ and a regime change ▲; a legend says so. Every
// string from the file is flattened to one line of printable characters,
// so a hostile entry cannot move the cursor or colour the terminal.
func WriteHistoryTable(w io.Writer, h []HistoryEntry, last int) error {
	rows := Trend(h)
	// The change is against each series' entry before, also one that
	// --last leaves out.
	changes, moved := make([]string, len(rows)), make([]bool, len(rows))
	prev := map[string]TrendRow{}
	for i, r := range rows {
		changes[i], moved[i] = historyChange(prev, r)
	}
	if last > 0 && len(rows) > last {
		cut := len(rows) - last
		rows, changes, moved = rows[cut:], changes[cut:], moved[cut:]
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no history entries")
		return err
	}
	batches := TrendBatches(rows)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"commit", "date", "series", "headline msg/s", "change", "conns", "p99"}
	for _, b := range batches {
		head = append(head, fmt.Sprintf("batch %d", b))
	}
	head = append(head, "floor", "verdict", "")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	var anyLB, anyRegime, anyPartial, anyMove bool
	for i, r := range rows {
		mark := ""
		if r.RegimeChanged {
			mark += markRegime + " "
			anyRegime = true
		}
		if r.Partial {
			mark += markPartial
			anyPartial = true
		}
		// A figure that was not measured (no clean headline, a scenario
		// without latency) is a dash, not 0.
		headline, conns, p99 := boundRate(r.ThroughputPerS, r.LowerBound), fmt.Sprint(r.Connections), result.FormatLatency(r.P99Ns)
		if r.ThroughputPerS == 0 {
			headline, conns = "—", "—"
		}
		if r.P99Ns <= 0 {
			p99 = "—"
		}
		change := changes[i]
		anyMove = anyMove || moved[i]
		cells := []string{
			termText(shortRef(r.GitRef)),
			r.FinishedAt.UTC().Format("2006-01-02 15:04"),
			termText(r.Series()),
			headline, change, conns, p99,
		}
		anyLB = anyLB || r.LowerBound
		for _, b := range batches {
			c, ok := r.Ceiling(b)
			switch {
			case !ok:
				cells = append(cells, "")
			case !c.Found:
				cells = append(cells, "none")
			default:
				cells = append(cells, fmt.Sprintf("%s @%d", boundRate(c.ThroughputPerS, c.LowerBound), c.Connections))
				anyLB = anyLB || c.LowerBound
			}
		}
		floor := "n/a"
		if r.NoiseFloorPct != nil {
			floor = fmt.Sprintf("%.1f%%", *r.NoiseFloorPct)
		}
		verdict := termText(r.Verdict)
		if r.Comparison != "" {
			verdict += ", " + termText(words(r.Comparison))
		}
		cells = append(cells, floor, verdict, mark)
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	regime := termText(rows[len(rows)-1].Regime)
	fmt.Fprintf(w, "\nregime (newest): %s\n", regime)
	if obj := rows[len(rows)-1].Objective; obj != "" {
		fmt.Fprintf(w, "objective (newest): %s; a ceiling is the most connections meeting it\n", termText(obj))
	}
	if anyLB {
		fmt.Fprintln(w, markLowerBound+" lower bound: the generator was capped, the server may do more")
	}
	if anyRegime {
		fmt.Fprintln(w, markRegime+" regime changed from the entry before (not comparable):")
		for _, r := range rows {
			if r.RegimeChanged {
				was, now := r.PrevRegime, r.Regime
				if r.PrevTarget != "" {
					was, now = r.PrevTarget+", "+was, r.Target+", "+now
				}
				fmt.Fprintf(w, "  %s: %s -> %s\n", termText(shortRef(r.GitRef)), termText(was), termText(now))
			}
		}
	}
	if anyPartial {
		fmt.Fprintln(w, markPartial+" partial: the sweep was interrupted")
	}
	if anyMove {
		fmt.Fprintln(w, markMove+" a move beyond both runs' A-A noise floors: worth a look, though one A-A figure per run is no test (a pull request's two-arm comparison is)")
	}
	return nil
}

func boundRate(v float64, lowerBound bool) string {
	if lowerBound {
		return markLowerBound + result.FormatRate(v)
	}
	return result.FormatRate(v)
}

// termText is a string from a file made safe for a terminal: one line,
// no control characters (no escape sequences), bounded.
func termText(s string) string {
	s = benchLine(s)
	if r := []rune(s); len(r) > maxText {
		s = string(r[:maxText]) + "…"
	}
	return s
}
