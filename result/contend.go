package result

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxNamed is how many foreign processes a side's Attribution names.
const MaxNamed = 5

// Contenders says who took the pinned CPUs of a curve's contended
// points, for the table's CONTENDED line and the warning, side by side:
// the most other processes took of that side's CPUs in any one point,
// against what a clean point allows (ForeignMax), then each foreign
// process with the most it took, largest first (at most MaxNamed); and
// the most the hypervisor stole, against StealMax. The share that broke
// the rule is the sum, so it is said before the names: a process that
// took 2% alone did not break a 3% rule, the 3.04% all of them took did.
// "" when no contended point has a name to give (a document from before
// attribution).
func Contenders(curve []Point) string {
	type who struct {
		comm string
		pid  int
	}
	type side struct {
		name           string
		foreign, steal float64
		most           map[who]float64
		order          []who
	}
	sides := []*side{{name: "server", most: map[who]float64{}}, {name: "generator", most: map[who]float64{}}}
	for _, p := range curve {
		if !p.Contended {
			continue
		}
		for i, c := range []CPUStats{p.ServerCPU, p.GeneratorCPU} {
			s := sides[i]
			if Stolen(c) {
				s.steal = max(s.steal, c.StealFraction)
			}
			a := c.Attribution
			if a == nil || a.Foreign <= ForeignMax {
				continue
			}
			s.foreign = max(s.foreign, a.Foreign)
			for _, t := range a.Tasks {
				k := who{t.Comm, t.Pid}
				if _, ok := s.most[k]; !ok {
					s.order = append(s.order, k)
				}
				s.most[k] = max(s.most[k], t.Fraction)
			}
		}
	}
	var parts []string
	for _, s := range sides {
		if s.foreign > 0 {
			slices.SortStableFunc(s.order, func(a, b who) int { return cmp.Compare(s.most[b], s.most[a]) })
			part := fmt.Sprintf("other processes took up to %s of the %s CPUs (a clean point allows %s)",
				PctOver(s.foreign, ForeignMax), s.name, pctWhole(ForeignMax))
			var named []string
			for i, k := range s.order {
				if i == MaxNamed {
					named = append(named, fmt.Sprintf("and %d more", len(s.order)-MaxNamed))
					break
				}
				named = append(named, fmt.Sprintf("%s (pid %d) up to %s", k.comm, k.pid, pctShare(s.most[k])))
			}
			if len(named) > 0 {
				part += ": " + strings.Join(named, ", ")
			}
			parts = append(parts, part)
		}
		if s.steal > 0 {
			parts = append(parts, fmt.Sprintf("the hypervisor stole up to %s of the %s CPUs (a clean point allows %s)",
				PctOver(s.steal, StealMax), s.name, pctWhole(StealMax)))
		}
	}
	return strings.Join(parts, "; ")
}

// PctOver is a fraction v, which is above limit, as a percentage written
// so that it reads above limit's: 3.04% against 3%, never "3.0%".
func PctOver(v, limit float64) string {
	for prec := 1; prec < 4; prec++ {
		s := strconv.FormatFloat(v*100, 'f', prec, 64)
		if f, _ := strconv.ParseFloat(s, 64); f > limit*100 {
			return s + "%"
		}
	}
	return strconv.FormatFloat(v*100, 'f', 4, 64) + "%"
}

// pctWhole is a threshold: "3%".
func pctWhole(v float64) string { return strconv.FormatFloat(v*100, 'f', -1, 64) + "%" }

// pctShare is one process's share: "17%", "2.4%" below 10%.
func pctShare(v float64) string {
	if v*100 >= 10 {
		return fmt.Sprintf("%.0f%%", v*100)
	}
	return fmt.Sprintf("%.1f%%", v*100)
}

// Contention: a point is contended, and so not clean, when either side's
// pinned CPUs were shared with work that is not the sweep's.
//
//   - Foreign: tasks that are neither the server's tree, the generator's,
//     the harness process nor kernel threads ran on the side's pinned CPUs
//     for more than ForeignMax of their time (Attribution, measured task
//     by task over the window: harness/attrib). The tasks are named.
//   - Stolen: the hypervisor ran another guest on them for more than
//     StealMax of the window (StealFraction). Steal is invisible to the
//     process list and takes the CPU all the same.
//   - Where attribution was not measured (Attribution nil: a document
//     from before it, a system without /proc), the residual decides as it
//     used to: the CPUs busier (/proc/stat, PinnedBusy) than the side's
//     own tree and the other side's share of overlapping sets, by more
//     than SharedMargin. Where attribution exists the residual is kept as
//     evidence only: it also holds the harness and the kernel's share of
//     the sweep's own packets, which made it fire on a quiet machine and
//     let a tenant through under the margin.
//
// Either side counts: a server on shared cores measures the neighbour, and
// a generator on shared cores drives the server unevenly. The thresholds
// and the measurements behind them are in docs/sweep.md ("Contention").
const (
	ForeignMax   = 0.03
	NameFraction = 0.01
	SharedMargin = 0.15
	StealMax     = 0.05
)

// Shared reports whether a side's pinned CPUs were shared with foreign
// work: by attribution where it was measured, else by the residual.
func Shared(c CPUStats) bool {
	if c.Attribution != nil {
		return c.Attribution.Foreign > ForeignMax
	}
	return c.PinnedBusy >= 0 && c.PinnedBusy-c.FractionMean-c.OverlapFraction() > SharedMargin
}

// Stolen reports whether the hypervisor stole more than StealMax of a
// side's pinned CPUs (unknown steal, -1, is not counted).
func Stolen(c CPUStats) bool { return c.StealFraction > StealMax }

func (c CPUStats) OverlapFraction() float64 {
	if c.PinnedCores <= 0 {
		return 0
	}
	return c.OverlapCores / float64(c.PinnedCores)
}

// IsLowerBound reports whether a verdict means the throughput understates
// the server.
func IsLowerBound(verdict string) bool {
	return verdict == VerdictGeneratorCapped || verdict == VerdictBoth
}

// Contention says in words how a point's pinned CPUs were contended, or
// "" when they were not. Foreign work names its processes.
func Contention(server, generator CPUStats) string {
	var parts []string
	for _, s := range []struct {
		side string
		c    CPUStats
	}{{"server", server}, {"generator", generator}} {
		if Shared(s.c) {
			parts = append(parts, sharedWhy(s.side, s.c))
		}
		if Stolen(s.c) {
			parts = append(parts, fmt.Sprintf("hypervisor stole %.1f%% of the %s CPUs (above %.0f%%)", s.c.StealFraction*100, s.side, StealMax*100))
		}
	}
	return strings.Join(parts, ", ")
}

// sharedWhy is one shared side in words.
func sharedWhy(side string, c CPUStats) string {
	a := c.Attribution
	if a == nil {
		own := "its own use"
		if c.OverlapCores > 0 {
			own = "its own use and the other side's on the shared CPUs"
		}
		return fmt.Sprintf("%s CPUs %.0f%% busy, %.0f%% of it %s", side, c.PinnedBusy*100, (c.FractionMean+c.OverlapFraction())*100, own)
	}
	// A point's reason, which its recorded verdicts keep word for word
	// (harness/verdict's TestRecorded): the sum first, as Contenders.
	why := fmt.Sprintf("other processes took %.1f%% of the %s CPUs (above %.0f%%)", a.Foreign*100, side, ForeignMax*100)
	if len(a.Tasks) == 0 {
		return why + ", none of them 1% alone"
	}
	var named []string
	for _, t := range a.Tasks {
		named = append(named, fmt.Sprintf("%s (pid %d) %.0f%%", t.Comm, t.Pid, t.Fraction*100))
	}
	return why + ": " + strings.Join(named, ", ")
}
