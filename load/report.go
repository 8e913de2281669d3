package load

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ceiling-bench/ceiling/internal/atomicfile"
)

// WriteReport writes the human report. Errors come first: a throughput
// taken with errors is a measurement of the failure, so the report says so
// before it gives any figure.
func WriteReport(w io.Writer, r *Result) error {
	var b strings.Builder
	s := &r.Summary
	c := &r.Config
	if s.Failure != "" {
		fmt.Fprintf(&b, "FAILED: %s\n", s.Failure)
	}
	if s.Errors > 0 {
		fmt.Fprintf(&b, "ERRORS: %d — the figures below measure the failure, not the server\n", s.Errors)
		for _, k := range sortedReasons(s.ErrorsByReason) {
			fmt.Fprintf(&b, "  %-24s %d\n", k, s.ErrorsByReason[k])
		}
	} else {
		fmt.Fprintf(&b, "errors: 0\n")
	}
	if s.Dropped != nil && *s.Dropped > 0 {
		fmt.Fprintf(&b, "DROPPED: %d connections lost during the window\n", *s.Dropped)
	}
	if s.Saturated {
		fmt.Fprintf(&b, "SATURATED: %s\n", s.SaturatedReason)
	}
	var rows []ReportRow
	if d, ok := Lookup(c.Scenario); ok && d.Report != nil {
		var warnings []string
		warnings, rows = d.Report(r)
		for _, w := range warnings {
			fmt.Fprintf(&b, "%s\n", w)
		}
	}
	b.WriteString("\n")

	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	mode := s.Mode
	if s.RequestedOpsPerS != nil {
		mode = fmt.Sprintf("open loop, %.0f ops/s requested, %.0f attempted, %.0f succeeded", *s.RequestedOpsPerS, s.AttemptedOpsPerS, s.AchievedOpsPerS)
	} else if s.AttemptedOpsPerS != s.AchievedOpsPerS {
		mode = fmt.Sprintf("closed loop, %.0f ops/s attempted, %.0f succeeded", s.AttemptedOpsPerS, s.AchievedOpsPerS)
	} else {
		mode = fmt.Sprintf("closed loop, %.0f ops/s", s.AchievedOpsPerS)
	}
	fmt.Fprintf(tw, "scenario\t%s, %s\n", s.Scenario, mode)
	fmt.Fprintf(tw, "target\t%s\n", c.URL)
	fmt.Fprintf(tw, "load\t%d/%d connections, batch %d, %d B %s payloads\n", s.ConnectionsOpen, s.ConnectionsRequested, c.Batch, c.RecordSize, c.Payload)
	fmt.Fprintf(tw, "window\t%v measured after %v warm-up\n", time.Duration(s.MeasuredNs).Round(time.Millisecond), time.Duration(c.WarmupNs))
	fmt.Fprintf(tw, "throughput\t%.0f msg/s, %s/s (%d messages)\n", s.ThroughputPerS, bytesHuman(s.BytesPerS), s.Messages)
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", row.Name, row.Value)
	}
	fmt.Fprintf(tw, "latency\t%s\n", latencyLine(s.Latency))
	g := &r.Generator
	fmt.Fprintf(tw, "generator\t%.2f cores (user %.2fs, system %.2fs), runnable p99 %v, OS run delay %v\n",
		g.CPUCores, g.CPUUserS, g.CPUSystemS, time.Duration(g.RunnableP99Ns), time.Duration(g.OSRunDelayNs))
	if lt := g.LoadThreads; lt != nil {
		fmt.Fprintf(tw, "threads\t%d carried the load, run delay %.1f%% of their runnable time (worst thread %.1f%%)\n",
			lt.Threads, 100*lt.RunDelayFraction, 100*lt.MaxThreadFraction)
	}
	if g.ReadSyscalls > 0 {
		fmt.Fprintf(tw, "reads\t%d read syscalls, %.2f messages per read\n", g.ReadSyscalls, g.MessagesPerRead)
	}
	if l := g.Loops; l != nil {
		fmt.Fprintf(tw, "event loops\t%d, busiest %.0f%% busy, ready -> handled p99 %v, max %v\n",
			l.Count, 100*l.MaxBusy, time.Duration(l.LagP99Ns), time.Duration(l.LagMaxNs))
	}
	if g.ScheduleLag.Count > 0 {
		fmt.Fprintf(tw, "schedule lag\tp50 %v, p99 %v, max %v, %.2f%% of sends late by more than one interval\n",
			time.Duration(g.ScheduleLag.P50), time.Duration(g.ScheduleLagP99), time.Duration(g.ScheduleLag.Max), 100*g.LateSendsFrac)
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// ReportRow is one line of a scenario's part of the report table.
type ReportRow struct{ Name, Value string }

// LatencyLine is the report's one-line form of a latency summary.
func LatencyLine(l Latency) string { return latencyLine(l) }

func latencyLine(l Latency) string {
	if l.Count == 0 {
		return "no samples"
	}
	d := func(ns int64) time.Duration { return time.Duration(ns) }
	return fmt.Sprintf("p50 %v  p90 %v  p99 %v  p99.9 %v  max %v  (n=%d)", d(l.P50), d(l.P90), d(l.P99), d(l.P999), d(l.Max), l.Count)
}

func bytesHuman(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.2f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.2f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

// WriteJSONFile writes r as indented JSON to path, through a temporary
// file and a rename, so a reader never sees half a document.
func WriteJSONFile(path string, r *Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("--json %s: %w", path, err)
	}
	if err := atomicfile.Write(path, append(b, '\n')); err != nil {
		return fmt.Errorf("--json %s: %w", path, err)
	}
	return nil
}
