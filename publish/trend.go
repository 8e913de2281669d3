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
	// same series, so the two are not comparable: another machine
	// (Machine), other cores or another scenario (Regime).
	RegimeChanged bool
	// PrevRegime is that previous entry's regime when RegimeChanged, and
	// PrevMachine its machine when that was another one.
	PrevRegime  string
	PrevMachine string
}

// MachineOf is the machine a result ran on, as a history entry keeps
// it: "AMD EPYC 7763 64-Core Processor, 4 CPUs"; "" when the document
// does not say.
func MachineOf(r *result.Result) string {
	h := r.Meta.Hardware
	if h.CPUModel == "" && h.LogicalCPUs == 0 {
		return ""
	}
	return fmt.Sprintf("%s, %d CPUs", h.CPUModel, h.LogicalCPUs)
}

// Trend marks regime changes along h (oldest first). A regime is what
// makes two figures comparable: the machine, the cores each side had and
// the scenario (the Regime string, and Machine) — never the target's
// name, a label that ceiling compare sets to each arm's commit
// (HEAD@061cb02), so that two runs of one setup once read as two
// regimes. Each series (HistoryEntry.Series: generator, scenario, kind)
// is its own: an entry is compared with the previous entry of the same
// series only. An entry from before the machine was recorded is taken to
// be on the same one.
func Trend(h []HistoryEntry) []TrendRow {
	last := map[string]HistoryEntry{}
	out := make([]TrendRow, len(h))
	for i, e := range h {
		out[i] = TrendRow{HistoryEntry: e}
		prev, ok := last[e.Series()]
		otherMachine := prev.Machine != "" && e.Machine != "" && prev.Machine != e.Machine
		if ok && (prev.Regime != e.Regime || otherMachine) {
			out[i].RegimeChanged = true
			out[i].PrevRegime = prev.Regime
			if otherMachine {
				out[i].PrevMachine = prev.Machine
			}
		}
		last[e.Series()] = e
	}
	return out
}

// RegimeChange says what changed at a row whose regime changed:
// "was → now", naming the machines when they differ.
func (r TrendRow) RegimeChange(arrow string) string {
	was, now := r.PrevRegime, r.Regime
	if r.PrevMachine != "" {
		was, now = r.PrevMachine+", "+was, r.Machine+", "+now
	}
	return was + " " + arrow + " " + now
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

// RowChange is a trend row's headline against its series' row before it,
// as `ceiling history` and the site show it.
type RowChange struct {
	// Text is the cell: "+3.1%", "+3.1% *" when Moved, "—" when there is
	// nothing to compare with: the first of its series, a regime change,
	// a figure not measured, or a lower bound on either side (its change
	// says nothing about the server).
	Text string
	// Pct is the change in percent (0 with "—").
	Pct float64
	// Moved: beyond both rows' A-A noise floors. Worth a look; one A-A
	// figure per run is no test.
	Moved bool
}

// RowChanges are rows' changes, each against its series' row before it
// (rows oldest first, as Trend gives them).
func RowChanges(rows []TrendRow) []RowChange {
	prev := map[string]TrendRow{}
	out := make([]RowChange, len(rows))
	for i, r := range rows {
		out[i] = historyChange(prev, r)
	}
	return out
}

// historyChange is r's RowChange; it records r as its series' last.
func historyChange(prev map[string]TrendRow, r TrendRow) RowChange {
	key := r.Series()
	p, ok := prev[key]
	prev[key] = r
	if !ok || r.RegimeChanged || p.Regime != r.Regime || p.ThroughputPerS <= 0 || r.ThroughputPerS <= 0 || p.LowerBound || r.LowerBound {
		return RowChange{Text: "—"}
	}
	pct := (r.ThroughputPerS/p.ThroughputPerS - 1) * 100
	c := RowChange{Text: fmt.Sprintf("%+.1f%%", pct), Pct: pct}
	if p.NoiseFloorPct != nil && r.NoiseFloorPct != nil && math.Abs(pct) > math.Max(*p.NoiseFloorPct, *r.NoiseFloorPct) {
		c.Text += " " + markMove
		c.Moved = true
	}
	return c
}

// WriteHistoryTable writes the trend as a table for a terminal, oldest
// first, the last `last` entries (all when last <= 0): commit, date, the
// headline, every batch size's ceiling, the noise floor and the verdict.
// Lower bounds carry ≥ and a regime change ▲; a legend says so. Every
// string from the file is flattened to one line of printable characters,
// so a hostile entry cannot move the cursor or colour the terminal.
//
// The output keeps within result.TableWidth columns: each batch size's
// ceiling is in a second table, and a longer line of the legend is
// wrapped.
func WriteHistoryTable(w io.Writer, h []HistoryEntry, last int) error {
	var b strings.Builder
	if err := writeHistoryTable(&b, h, last); err != nil {
		return err
	}
	_, err := io.WriteString(w, result.Wrap(b.String(), result.TableWidth))
	return err
}

func writeHistoryTable(w io.Writer, h []HistoryEntry, last int) error {
	rows := Trend(h)
	// The change is against each series' entry before, also one that
	// --last leaves out.
	changes := RowChanges(rows)
	if last > 0 && len(rows) > last {
		cut := len(rows) - last
		rows, changes = rows[cut:], changes[cut:]
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no history entries")
		return err
	}
	// Within 100 columns: the headline's table, then each batch size's
	// ceiling in a table of its own; the series only when there are
	// several.
	// Several series: each a letter, named under the table.
	series := map[string]string{}
	var seriesOrder []string
	for _, r := range rows {
		if _, ok := series[r.Series()]; !ok {
			series[r.Series()] = string(rune('A' + len(seriesOrder)%26))
			seriesOrder = append(seriesOrder, r.Series())
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"commit", "date"}
	if len(series) > 1 {
		head = append(head, "s") // the series' letter
	}
	head = append(head, "headline", "change", "conns", "p99", "floor")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t  verdict")
	var anyLB, anyRegime, anyPartial, anyMove bool
	for i, r := range rows {
		mark := ""
		if r.RegimeChanged {
			mark += " " + markRegime
			anyRegime = true
		}
		if r.Partial {
			mark += " " + markPartial
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
		anyMove = anyMove || changes[i].Moved
		anyLB = anyLB || r.LowerBound
		cells := []string{termText(shortRef(r.GitRef)), r.FinishedAt.UTC().Format("2006-01-02")}
		if len(series) > 1 {
			cells = append(cells, series[r.Series()])
		}
		floor := "n/a"
		if r.NoiseFloorPct != nil {
			floor = fmt.Sprintf("%.1f%%", *r.NoiseFloorPct)
		}
		verdict := termText(r.Verdict)
		if r.Comparison != "" {
			// A two-arm run's head (its series says so): its verdict
			// is the comparison's.
			verdict = termText(words(r.Comparison))
		}
		cells = append(cells, headline, changes[i].Text, conns, p99, floor)
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t  "+verdict+mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if batches := TrendBatches(rows); len(batches) > 0 {
		fmt.Fprintln(w, "\nceilings per batch size (msg/s @ connections):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head = []string{"commit"}
		for _, b := range batches {
			head = append(head, fmt.Sprintf("batch %d", b))
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for _, r := range rows {
			cells := []string{termText(shortRef(r.GitRef))}
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
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if err := writeHistoryMemory(w, rows); err != nil {
		return err
	}
	if len(series) > 1 {
		for _, name := range seriesOrder {
			fmt.Fprintf(w, "s %s: %s\n", series[name], termText(name))
		}
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
				fmt.Fprintf(w, "  %s: %s\n", termText(shortRef(r.GitRef)), termText(r.RegimeChange("->")))
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

// writeHistoryMemory is the headline point's memory per connection,
// server and generator, for the entries that measured it: a table of its
// own, only when one did.
func writeHistoryMemory(w io.Writer, rows []TrendRow) error {
	if !slices.ContainsFunc(rows, func(r TrendRow) bool { return r.Memory != nil }) {
		return nil
	}
	fmt.Fprintln(w, "\nmemory per connection at the headline (peak over the window less the baseline before connecting):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "commit\tserver\tgenerator\tmeasure\t")
	cell := func(v *float64) string {
		if v == nil {
			return "—"
		}
		return result.Bytes(*v)
	}
	for _, r := range rows {
		if m := r.Memory; m != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", termText(shortRef(r.GitRef)), cell(m.ServerPerConnBytes), cell(m.GenPerConnBytes), termText(m.Measure))
		}
	}
	return tw.Flush()
}
