package calibrate

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints d for a reader: one row per (scenario, batch), then
// the scenarios skipped and why.
func WriteTable(w io.Writer, d *Doc) error {
	fmt.Fprintf(w, "generator %s on CPUs %v, null sink on CPUs %v (%s writes), %d-byte messages, %s windows\n",
		d.Generator, d.GeneratorCPUs, d.SinkCPUs, d.SinkWrites, d.RecordSize, fmtNs(d.DurationNs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tbatch\tmsg/s per generator core\tconnections\tgenerator busy\tsink cores\tnote\t")
	for _, c := range d.Caps {
		note := "saturated"
		switch {
		case c.Projected:
			note = fmt.Sprintf("not saturated: projected from %.0f msg/s at %.2f busy", c.MeasuredPerS, c.Busy)
		case !c.Saturated:
			note = "not saturated: a lower bound"
		}
		sink := 0.0
		for _, s := range c.Steps {
			if s.Connections == c.Connections {
				sink = s.SinkCores
			}
		}
		if c.Contended {
			note += "; contended: other work shared the generator's core"
		}
		if c.SinkLimited {
			note += "; the sink was busy: a lower bound"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t%.2f\t%.2f\t%s\t\n", c.Scenario, c.Batch, c.PerCorePerS, c.Connections, c.Busy, sink, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range d.Skipped {
		fmt.Fprintf(w, "%s: not calibrated: %s\n", s.Scenario, s.Reason)
	}
	for _, f := range d.Failed {
		fmt.Fprintf(w, "%s batch %d: failed: %s\n", f.Scenario, f.Batch, f.Reason)
	}
	return nil
}

func fmtNs(ns int64) string {
	return fmt.Sprintf("%gs", float64(ns)/1e9)
}
