package publish

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/result"
)

// renderWhy folds each compared point's reason and every sample away.
func renderWhy(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("<details><summary>Why each verdict: the test, the spread, every sample</summary>\n\n")
	p("Method: %s. Gate: %s.\n\n", text(c.Stats.Method), text(c.Stats.Gate))
	for _, r := range c.Rows {
		p("**batch %d, %d connections**: %s\n\n", r.Batch, r.Connections, text(r.Reason))
		for _, arm := range []struct {
			name string
			s    *Side
		}{{"base", r.Base}, {"head", r.Head}} {
			a := arm.s.Arm
			ci := "CI n/a (too few samples)"
			if a.CILowPerS != nil && a.CIHighPerS != nil {
				ci = fmt.Sprintf("%s CI %s"+nbsp+"…"+nbsp+"%s", confidence(c.Stats.Confidence), rate(*a.CILowPerS), rate(*a.CIHighPerS))
			}
			samples := make([]string, len(a.SamplesPerS))
			for i, v := range a.SamplesPerS {
				samples[i] = rate(v)
				if i < len(a.Points) {
					samples[i] += fmt.Sprintf(" (#%d)", a.Points[i])
				}
			}
			lost := ""
			if a.Failed > 0 {
				lost = fmt.Sprintf("; %d more failed or were not clean", a.Failed)
			}
			median := "none"
			if a.N > 0 {
				median = rate(a.MedianPerS) + nbsp + "msg/s"
				if a.LowerBound {
					median += nbsp + "†"
				}
			}
			p("- %s: median %s, %s, n"+nbsp+"="+nbsp+"%d%s: %s\n", arm.name, median, ci, a.N, lost, strings.Join(samples, ", "))
		}
		p("\n")
	}
	p("</details>\n\n")
}

func renderRuns(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	runs := []*result.Result{c.Head}
	names := []string{c.headName()}
	if c.Mode == ModeTwoArm {
		names = []string{"both arms"}
	}
	if c.Base != nil {
		runs, names = []*result.Result{c.Base, c.Head}, []string{"base", "head"}
	}
	p("<details><summary>Runs: git refs, regime, runners</summary>\n\n")
	p("| |%s\n|---|%s\n", joinCells(names), strings.Repeat("---|", len(names)))
	row := func(label string, f func(r *result.Result) string) {
		cells := make([]string, len(runs))
		for i, r := range runs {
			cells[i] = f(r)
		}
		p("| %s |%s\n", label, joinCells(cells))
	}
	// Abbreviated: two 40-hex refs side by side were wider than GitHub's
	// comment column; the document keeps the full one.
	row("git ref", func(r *result.Result) string { return text(shortRef(r.Meta.GitRef)) })
	row("regime", func(r *result.Result) string { return text(r.Regime) })
	row("runner", func(r *result.Result) string {
		rn := r.Meta.Runner
		if !rn.CI {
			return "local " + text(r.Meta.Hardware.OS+"/"+r.Meta.Hardware.Arch)
		}
		return text(strings.TrimSpace(rn.Name + " " + rn.OS + "/" + rn.Arch))
	})
	row("CPU", func(r *result.Result) string {
		return text(fmt.Sprintf("%s, %d logical", r.Meta.Hardware.CPUModel, r.Meta.Hardware.LogicalCPUs))
	})
	row("pinning", func(r *result.Result) string {
		pn := r.Meta.Pinning
		if !pn.Supported {
			return "not supported"
		}
		return text(fmt.Sprintf("server %s, generator %s", cpuList(pn.ServerGranted), cpuList(pn.GeneratorGranted)))
	})
	row("target", func(r *result.Result) string {
		if r.Meta.BaseTarget != nil {
			return "base " + text(r.Meta.BaseTarget.Name) + ", head " + text(r.Meta.Target.Name)
		}
		return text(r.Meta.Target.Name)
	})
	row("generator", func(r *result.Result) string {
		s := r.Meta.Generator + " " + r.Meta.Version
		if r.Meta.ClientIO != "" {
			s += " (client: " + r.Meta.ClientIO + ")"
		}
		return text(s)
	})
	row("ladder", func(r *result.Result) string {
		s := fmt.Sprintf("batches %v, reps %d, %s per point", r.Config.BatchLadder, r.Config.Reps, formatNs(r.Config.DurationNs))
		if r.Config.CompareReps > 0 {
			s += fmt.Sprintf("; compare: %d repeats per arm, %s each", r.Config.CompareReps, formatNs(r.Config.CompareDurationNs))
		}
		return text(s)
	})
	if slices.ContainsFunc(runs, func(r *result.Result) bool { return r.Config.Objective != "" }) {
		row("objective", func(r *result.Result) string {
			if r.Config.Objective == "" {
				return "none (ceiling = highest throughput)"
			}
			return text(r.Config.Objective) + " (ceiling = most connections that meet it)"
		})
	}
	row("finished", func(r *result.Result) string { return text(r.Meta.FinishedAt.UTC().Format("2006-01-02 15:04 UTC")) })
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

// renderPoints is the table of every point, narrow enough to read: one
// short verdict word and marks per point; the long reasons of the points
// that were not clean are listed under it.
func renderPoints(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	runs := []*result.Result{c.Head}
	names := []string{c.headName()}
	if c.Mode == ModeTwoArm {
		names = []string{"both arms"}
	}
	if c.Base != nil {
		runs, names = []*result.Result{c.Base, c.Head}, []string{"base", "head"}
	}
	p("<details><summary>Every point</summary>\n\n")
	memoryRuns := false
	for i, r := range runs {
		arms := slices.ContainsFunc(r.Curve, func(pt result.Point) bool { return pt.Arm != "" })
		p("**%s** (%d points, in the order run)\n\n", names[i], len(r.Curve))
		// The memory column only for a run that measured memory (a
		// document from before it has none).
		mem, memHead, memAlign := slices.ContainsFunc(r.Curve, hasMemory), "", ""
		if mem {
			memHead, memAlign, memoryRuns = " mem per conn |", "---:|", true
		}
		if arms {
			p("| # | arm | role | batch | conns | msg/s | p99 | CPU server · gen |%s limit |\n|---:|:---|:---|---:|---:|---:|---:|---:|%s:---|\n", memHead, memAlign)
		} else {
			p("| # | role | batch | conns | msg/s | p99 | CPU server · gen |%s limit |\n|---:|:---|---:|---:|---:|---:|---:|%s:---|\n", memHead, memAlign)
		}
		var notes []string
		for _, pt := range r.Curve {
			// A failed point measured nothing: "0 msg/s" would be a figure.
			tp, lat := "n/a", "n/a"
			if pt.Status == result.StatusOK {
				tp, lat = result.FormatRate(pt.ThroughputPerS), formatNs(pt.LatencyNs.P99)
				if pt.LowerBound {
					tp += nbsp + "†"
				}
			}
			limit := shortVerdict(pt.Verdict)
			switch {
			case pt.Fault != nil:
				limit = "resilience " + text(words(pt.Fault.Verdict)) // its section says why
			case pt.Status != result.StatusOK:
				limit = "**failed**"
			case pt.Errors > 0:
				limit += fmt.Sprintf(", **%d errors**", pt.Errors)
			case !pt.Clean:
				limit += ", not clean"
			}
			if o := pt.Objective; o != nil && pt.Status == result.StatusOK {
				if o.Met {
					limit += ", objective met"
				} else {
					limit += ", **objective missed**"
					notes = append(notes, fmt.Sprintf("- #%d: objective missed: %s", pt.Index, text(o.Reasons())))
				}
			}
			arm := ""
			if arms {
				arm = " " + text(pt.Arm) + " |"
			}
			memCell := ""
			if mem {
				memCell = " " + memPair(pt) + " |"
			}
			p("| %d |%s %s | %d | %d | %s | %s | %s |%s %s |\n", pt.Index, arm, text(roleWord(pt.Role)), pt.Batch, pt.Connections, tp, lat,
				cpuPair(pt.ServerCPU, pt.GeneratorCPU), memCell, limit)
			if why := pointWhy(pt); why != "" && pt.Fault == nil {
				notes = append(notes, fmt.Sprintf("- #%d: %s", pt.Index, text(why)))
			}
		}
		p("\n")
		if len(notes) > 0 {
			p("Not clean:\n\n%s\n\n", strings.Join(notes, "\n"))
		}
	}
	legend := "limit: which side limited the point (server = server-saturated, gen = generator-capped, both, neither). † a lower bound on the server's throughput. CPU: mean cores busy of those pinned, server · generator."
	if memoryRuns {
		legend += " mem per conn: each side's memory per connection, server · generator, its peak over the window less its baseline before connecting, over the connections open (PSS, or RSS where marked)."
	}
	p("<sub>%s</sub>\n\n", legend)
	p("</details>\n\n")
}

// pointWhy is the reason a point was not clean, or "".
func pointWhy(pt result.Point) string {
	if pt.Status == result.StatusOK && pt.Errors == 0 && pt.Clean {
		return ""
	}
	why := pt.VerdictReason
	if pt.FailReason != "" {
		why = strings.TrimSpace(why + "; " + pt.FailReason)
	}
	if pt.Errors > 0 {
		why = strings.TrimSpace(fmt.Sprintf("%d errors; %s", pt.Errors, why))
	}
	return strings.Trim(why, "; ")
}

func roleWord(role string) string {
	switch role {
	case result.RoleAARepeat:
		return "A-A"
	case result.RoleCompare:
		return "compare"
	}
	return role
}

func shortVerdict(v string) string {
	switch v {
	case result.VerdictServerSaturated:
		return "server"
	case result.VerdictGeneratorCapped:
		return "gen"
	case result.VerdictFailed:
		return "failed"
	}
	return text(v)
}

func cpuPair(s, g result.CPUStats) string {
	f := func(c result.CPUStats) string {
		if c.Samples == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f/%d", c.MeanCores, c.PinnedCores)
	}
	return f(s) + nbsp + "·" + nbsp + f(g)
}

// hasMemory: the point has a memory figure per connection on either
// side.
func hasMemory(pt result.Point) bool {
	_, s := pt.ServerMemory.PerConnection()
	_, g := pt.GeneratorMemory.PerConnection()
	return s || g
}

// memPair is a point's memory per connection, server · generator, in
// short units; n/a for a side without a figure.
func memPair(pt result.Point) string {
	f := func(m *result.Memory) string {
		v, ok := m.PerConnection()
		if !ok || pt.Status != result.StatusOK {
			return "n/a"
		}
		s := result.ShortBytes(v)
		if m.Measure == result.MemoryRSS {
			s += nbsp + "rss"
		}
		return s
	}
	return f(pt.ServerMemory) + " · " + f(pt.GeneratorMemory) // breakable: the table is at GitHub's width
}

// renderResilience is the head's resilience points (FAULT) in their own
// section: the fault, each server's clients, drops and delivered %
// before and after it, whether it stayed up, and the verdict.
func renderResilience(b *strings.Builder, c *Comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	for _, pt := range c.Head.Curve {
		f := pt.Fault
		if pt.Role != result.RoleResilience || f == nil {
			continue
		}
		when := "not sent: " + text(f.Error)
		if f.Sent {
			when = fmt.Sprintf("at %s of the window", formatNs(f.AtNs))
		}
		p("**Resilience** (point %d, batch %d, %d connections): %s %s %s: **%s**\n\n", pt.Index, pt.Batch, pt.Connections,
			text(f.Kind), text(f.Server), when, text(words(f.Verdict)))
		p("| server | conns | dropped | delivered before | after | up |\n|:---|---:|---:|---:|---:|:---|\n")
		for _, s := range f.Servers {
			name := text(s.Name)
			if s.Faulted {
				name += " (" + text(f.Kind) + ")"
			}
			up := "yes"
			if !s.Up {
				up = "**no**"
			}
			if s.Share == nil {
				p("| %s | – | – | – | – | %s |\n", name, up)
				continue
			}
			before, after := "–", "–"
			if s.Share.Before != nil {
				before = s.Share.Before.PctText()
			}
			if s.Share.After != nil {
				after = s.Share.After.PctText()
			}
			p("| %s | %d | %d | %s | %s | %s |\n", name, s.Share.Connections, s.Share.Dropped, before, after, up)
		}
		p("\n%s\n\n", text(f.Reason))
	}
}
