package harness

import (
	"fmt"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/load"
)

// The verdict rule.
//
// A point is server-saturated when the server's process tree used, on
// average over the measured window, at least Thresholds.ServerBusy (90%)
// of its pinned cores.
//
// A point is generator-capped only on evidence that the generator fell
// behind, never on its CPU alone: on loopback the kernel's per-message work
// lands on both sides, and a consumer that reads eagerly spends more CPU per
// message the faster it keeps up, so a busy generator is not proof of a
// capped one.
//
//   - Open loop (--rate): the generator sent late against its own schedule
//     (schedule lag p99 above ScheduleLagP99, or more than LateSendsFrac of
//     sends over an interval late), or it achieved less than the requested
//     rate by more than RateShortfall without the in-flight cap (which
//     marks a slow server, not a slow generator) having been hit.
//   - Closed loop (the sweep's mode): work was ready but not run — the
//     generator's goroutine runnable latency p99 above RunnableP99, or its
//     threads waited for a CPU (OS run delay) more than RunDelayFrac of the
//     window — while its process tree used at least GeneratorBusy of its
//     pinned cores (or its pinned CPUs were that busy with anything: other
//     processes on a shared machine starve it just the same). Either alone
//     is not enough: ready work on an idle core
//     is a scheduling blip, and a busy core with nothing waiting is an
//     eager reader keeping up.
//   - A generator that reports no self-evidence at all (another GENERATOR
//     without those fields) is judged by CPU: at GeneratorBusy or above it
//     is capped, the conservative call, since a lower bound understates.
//
// Both conditions give "both"; either generator verdict makes the point a
// lower bound. Whatever the verdict, a point whose pinned CPUs were
// contended (see Contention) says so in its reason and is not clean. Neither gives "neither", with a reason naming what else may
// limit (latency-bound at too few connections, errors).
type Thresholds struct {
	ServerBusy     float64       // fraction of the server's pinned cores
	GeneratorBusy  float64       // fraction of the generator's pinned cores
	RunnableP99    time.Duration // goroutine runnable latency p99
	RunDelayFrac   float64       // OS run delay / measured window
	ScheduleLagP99 time.Duration // open loop
	LateSendsFrac  float64       // open loop
	RateShortfall  float64       // open loop: 1 - achieved/requested
}

// DefaultThresholds are the documented rule's numbers.
var DefaultThresholds = Thresholds{
	ServerBusy:     0.90,
	GeneratorBusy:  0.85,
	RunnableP99:    time.Millisecond,
	RunDelayFrac:   0.10,
	ScheduleLagP99: 10 * time.Millisecond,
	LateSendsFrac:  0.05,
	RateShortfall:  0.05,
}

// Judge gives a measured point its verdict and the reason in words.
// summary and self are the generator's report; the CPU stats are the
// harness's own sampling of both sides.
func Judge(th Thresholds, server, generator CPUStats, summary load.Summary, self load.GeneratorStats) (verdict, reason string) {
	srvBusy := server.FractionMean >= th.ServerBusy
	srvWhy, genWhy := cpuWhy("server", server), cpuWhy("generator", generator)
	genBehind, evidence := generatorBehind(th, generator, summary, self)
	contended := Contention(server, generator)
	// A limit found on contended CPUs is said, and so is the contention:
	// such a point is not clean (MakePoint), whatever limited it.
	also := ""
	if contended != "" {
		also = "; contended: " + contended
	}

	switch {
	case srvBusy && genBehind:
		return VerdictBoth, fmt.Sprintf("%s and %s; %s: lower bound%s", srvWhy, genWhy, evidence, also)
	case srvBusy:
		return VerdictServerSaturated, fmt.Sprintf("%s; %s, %s%s", srvWhy, genWhy, evidence, also)
	case genBehind:
		return VerdictGeneratorCapped, fmt.Sprintf("%s; %s: lower bound%s", genWhy, evidence, also)
	}
	why := "neither side near its cores: latency- or connection-bound (each connection waits a round trip; more connections may raise it)"
	switch {
	case summary.Errors > 0:
		why = fmt.Sprintf("neither side near its cores and %d errors: the errors limit it%s", summary.Errors, also)
	// Contention first: a server whose cores other work filled cannot
	// be said not to scale across them.
	case contended != "":
		why = "contended: " + contended + ": the machine was not quiet, this point measures contention"
	case server.PinnedCores > 1 && server.MeanCores >= th.ServerBusy && server.MeanCores <= float64(server.PinnedCores-1)+0.1:
		why = fmt.Sprintf("the server used %.2f of its %d cores: it may not scale across them (a serial section, one hot thread), more connections will not help then", server.MeanCores, server.PinnedCores)
	}
	return VerdictNeither, fmt.Sprintf("%s, %s; %s; %s", srvWhy, genWhy, evidence, why)
}

// generatorBehind applies the generator half of the rule; evidence says
// what was found either way.
func generatorBehind(th Thresholds, gen CPUStats, s load.Summary, self load.GeneratorStats) (bool, string) {
	if s.Mode == "open" {
		lag := time.Duration(self.ScheduleLagP99)
		if lag == 0 {
			lag = time.Duration(self.ScheduleLag.P99)
		}
		switch {
		case lag > th.ScheduleLagP99:
			return true, fmt.Sprintf("schedule lag p99 %s > %s", lag, th.ScheduleLagP99)
		case self.LateSendsFrac > th.LateSendsFrac:
			return true, fmt.Sprintf("%.1f%% of sends late > %.0f%%", self.LateSendsFrac*100, th.LateSendsFrac*100)
		case s.RequestedOpsPerS != nil && *s.RequestedOpsPerS > 0 && !s.Saturated &&
			s.AchievedOpsPerS < *s.RequestedOpsPerS*(1-th.RateShortfall):
			return true, fmt.Sprintf("achieved %.0f of %.0f ops/s requested without hitting max in-flight", s.AchievedOpsPerS, *s.RequestedOpsPerS)
		}
		return false, fmt.Sprintf("generator on schedule (lag p99 %s)", lag)
	}

	runnable := time.Duration(self.RunnableP99Ns)
	delayFrac := 0.0
	if s.MeasuredNs > 0 {
		delayFrac = float64(self.OSRunDelayNs) / float64(s.MeasuredNs)
	}
	// Its cores count as busy when its own tree filled them, or when they
	// were full of anything (other processes on a shared machine leave the
	// generator just as short of CPU).
	busy := gen.FractionMean >= th.GeneratorBusy || gen.PinnedBusy >= th.GeneratorBusy
	if runnable == 0 && self.OSRunDelayNs == 0 {
		if gen.Samples == 0 && gen.PinnedBusy < 0 {
			return false, "no self-evidence reported and generator CPU not sampled: cannot tell"
		}
		if busy {
			return true, "no self-evidence reported, generator CPU near its cores (conservative)"
		}
		return false, "no self-evidence reported, generator CPU below its cores"
	}
	waited := runnable > th.RunnableP99 || delayFrac > th.RunDelayFrac
	ev := fmt.Sprintf("runnable p99 %s, run delay %.1f%% of window", runnable.Round(time.Microsecond), delayFrac*100)
	switch {
	case waited && busy:
		return true, "work ready but not run (" + ev + ")"
	case busy:
		return false, "generator busy but nothing waited (" + ev + "): eager reads, not a cap"
	}
	return false, "generator kept up (" + ev + ")"
}

// Contention: a point is contended, and so not clean, when either side's
// pinned CPUs were shared with work that is not the sweep's.
//
//   - Shared: the CPUs were busier (/proc/stat, PinnedBusy) than the side's
//     own process tree kept them (FractionMean), plus the other side's
//     estimated use where the sets overlap (OverlapCores), by more than
//     SharedMargin. The margin covers interrupts and the softirq work of
//     the other side's packets, which land on these CPUs.
//   - Stolen: the hypervisor ran another guest on them for more than
//     StealMax of the window (StealFraction). Steal is invisible to the
//     process list and takes the CPU all the same.
//
// Either side counts: a server on shared cores measures the neighbour, and
// a generator on shared cores drives the server unevenly. The thresholds
// are documented in docs/sweep.md ("Contention").
const (
	SharedMargin = 0.15
	StealMax     = 0.05
)

// Shared reports whether a side's pinned CPUs were busy with other work
// beyond SharedMargin.
func Shared(c CPUStats) bool {
	return c.PinnedBusy >= 0 && c.PinnedBusy-c.FractionMean-c.overlapFraction() > SharedMargin
}

// Stolen reports whether the hypervisor stole more than StealMax of a
// side's pinned CPUs (unknown steal, -1, is not counted).
func Stolen(c CPUStats) bool { return c.StealFraction > StealMax }

func (c CPUStats) overlapFraction() float64 {
	if c.PinnedCores <= 0 {
		return 0
	}
	return c.OverlapCores / float64(c.PinnedCores)
}

// Contention says in words how a point's pinned CPUs were contended, or
// "" when they were not.
func Contention(server, generator CPUStats) string {
	var parts []string
	for _, s := range []struct {
		side string
		c    CPUStats
	}{{"server", server}, {"generator", generator}} {
		if Shared(s.c) {
			own := "its own use"
			if s.c.OverlapCores > 0 {
				own = "its own use and the other side's on the shared CPUs"
			}
			parts = append(parts, fmt.Sprintf("%s CPUs %.0f%% busy, %.0f%% of it %s", s.side, s.c.PinnedBusy*100,
				(s.c.FractionMean+s.c.overlapFraction())*100, own))
		}
		if Stolen(s.c) {
			parts = append(parts, fmt.Sprintf("hypervisor stole %.1f%% of the %s CPUs (above %.0f%%)", s.c.StealFraction*100, s.side, StealMax*100))
		}
	}
	return strings.Join(parts, ", ")
}

// IsLowerBound reports whether a verdict means the throughput understates
// the server.
func IsLowerBound(verdict string) bool {
	return verdict == VerdictGeneratorCapped || verdict == VerdictBoth
}

// cpuWhy is one side's CPU for a reason; an unsampled side says so
// instead of reading as 0%.
func cpuWhy(side string, c CPUStats) string {
	if c.Samples == 0 {
		return side + " CPU not sampled"
	}
	return fmt.Sprintf("%s %.0f%% of %s", side, c.FractionMean*100, cores(c.PinnedCores))
}

func cores(n int) string {
	if n == 1 {
		return "1 core"
	}
	return fmt.Sprintf("%d cores", n)
}
