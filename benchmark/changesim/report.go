package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/changepoint"
)

// writeReport prints the Markdown report: the design, the recordings and
// the least change the detector asked on each, and one row per recording
// and scenario with every rule's recall, precision, false alarms and
// position error.
func writeReport(w io.Writer, o options, recs []recording, sim *simResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# changesim: change rules on histories resampled from A/A runs\n\n")
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = r.name
	}
	fmt.Fprintf(&b, "Input: %s.\n", strings.Join(names, ", "))
	fmt.Fprintf(&b, "Design: %d histories of %d entries per recording and scenario (seeds 0 to %d). %s. %s. A change is planted at an entry drawn uniformly from [%d, %d], the same for every scenario of a seed; a detection finds it within ±%d entries.\n\n",
		o.seeds, entries, o.seeds-1, headlineDesign(o), floorDesign(o), firstAt, lastAt, slack)

	writeRecordings(&b, recs, sim)
	writeRules(&b, recs, sim)
	writeLegend(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func headlineDesign(o options) string {
	what := "the highest"
	if o.stat == statMean {
		what = "the mean"
	}
	return fmt.Sprintf("Each entry's headline is %s of %s drawn with replacement from the recording's clean runs, both arms pooled (-k %d -stat %s)",
		what, plural(o.k, "run"), o.k, o.stat)
}

func floorDesign(o options) string {
	if o.floor == floorSpread {
		return "Its A-A floor is the recording's spread, MAD/median, the same for every entry (-floor spread)"
	}
	return "Its A-A floor is |repeat − headline| / headline, the repeat one more drawn run, as the harness measures it (-floor aa)"
}

func writeRecordings(b *strings.Builder, recs []recording, sim *simResult) {
	fmt.Fprintf(b, "## Recordings\n\n")
	fmt.Fprintf(b, "| recording | compared point | clean runs | spread of the runs | least change asked |\n")
	fmt.Fprintf(b, "| --- | --- | ---: | ---: | ---: |\n")
	for i, r := range recs {
		fmt.Fprintf(b, "| %s | batch %d, %d conns | %d | %.1f%% | %.1f%% |\n",
			r.name, r.batch, r.conns, len(r.runs), r.spreadPct, sim.minChange[i])
	}
	fmt.Fprintf(b, "\nSpread is MAD/median. The least change asked is what publish.Changes requires of every change point: the median A-A floor of a history's entries (here the median over the A/A histories); a change point also asks the median floor of the entries on each side of it.\n\n")
}

func writeRules(b *strings.Builder, recs []recording, sim *simResult) {
	fmt.Fprintf(b, "## Rules\n\n")
	fmt.Fprintf(b, "| recording | scenario |")
	for _, r := range rules {
		fmt.Fprintf(b, " %s: recall | precision | false/history | error |", escape(r.name))
	}
	fmt.Fprintf(b, "\n| --- | --- |%s\n", strings.Repeat(" ---: |", 4*len(rules)))
	for i, rec := range recs {
		for si, sc := range scenarios {
			fmt.Fprintf(b, "| %s | %s |", rec.name, sc.name)
			for ri := range rules {
				fmt.Fprintf(b, " %s |", cells(sim.tally[i][si][ri], sc.change == 0))
			}
			fmt.Fprintf(b, "\n")
		}
	}
	fmt.Fprintf(b, "\n")
}

// cells are one rule's four cells of a row; on A/A only the false alarms
// mean anything (every detection is false).
func cells(t tally, aa bool) string {
	fa := fmt.Sprintf("%.2f", t.falsePerHistory())
	if aa {
		return "— | — | " + fa + " | —"
	}
	return fmt.Sprintf("%.0f%% | %s | %s | %s", 100*t.recall(), orDash(100*t.precision(), "%.0f%%"), fa, orDash(t.medianErr(), "%g"))
}

func writeLegend(b *strings.Builder) {
	fmt.Fprintf(b, "- changes: `ceiling history --changes` (publish.Changes: E-divisive means, Welch's t-test p < %g, at least %d entries a side, a change of at least the median A-A floor of the history and of each side's entries). floor \\*: the history table's mark, a change against the previous entry beyond both entries' floors (publish.RowChanges). %g%% ratio: a change against the previous entry beyond %g%% either way, whatever the floors (github-action-benchmark's kind of rule).\n",
		changepoint.Defaults.MaxP, changepoint.Defaults.MinSegment, ratioPct, ratioPct)
	fmt.Fprintf(b, "- Recall: the share of histories whose change a detection found (within ±%d entries of a step, or of a slope's entries). Precision: the detections that found a change over all detections; a second detection of the same change counts as a false one; — where there was none. False/history: detections that found no change, per history (on A/A, every detection). Error: the median number of entries between the detection that found a change and it (0 anywhere inside a slope).\n", slack)
	fmt.Fprintf(b, "- Entries are independent draws: a recording's drift within its run is spread between entries, and no trend across entries but the planted one is modelled.\n")
}

func orDash(v float64, format string) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

// escape keeps a rule's name from reading as Markdown emphasis.
func escape(s string) string { return strings.ReplaceAll(s, "*", "\\*") }

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
