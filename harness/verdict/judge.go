package verdict

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/result"
)

// The verdict rule (docs/sweep.md, "The verdict rule", has it whole, with
// the measurements behind each threshold):
//
//   - server-saturated: the server's tree used at least ServerBusy of its
//     pinned cores over the window;
//   - generator-capped: only on evidence that the generator fell behind,
//     never on its CPU alone. Open loop: late sends or a rate shortfall.
//     Closed loop: an event loop that never waited (LoopBusy) or whose
//     events waited (LoopLagP99); or load threads that waited for a CPU
//     (RunDelayFrac, RunnableP99) while their cores were busy
//     (GeneratorBusy). A generator reporting none of that is judged by
//     its CPU, the conservative call;
//   - an external server is judged on its own metrics' CPU, and never
//     saturated when that is unknown;
//   - both give "both"; either generator verdict makes a lower bound;
//     none gives "neither", with a reason. A point whose pinned CPUs were
//     contended (Contention) says so and is not clean.
type Thresholds struct {
	ServerBusy     float64       // fraction of the server's pinned cores
	GeneratorBusy  float64       // fraction of the generator's pinned cores
	RunnableP99    time.Duration // goroutine runnable latency p99
	RunDelayFrac   float64       // load threads' run delay / their runnable time (run + run delay)
	LoopBusy       float64       // an event loop's share of the window not blocked waiting for events
	LoopLagP99     time.Duration // event loop: ready -> handled, p99
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
	LoopBusy:       0.98,
	LoopLagP99:     10 * time.Millisecond,
	ScheduleLagP99: 10 * time.Millisecond,
	LateSendsFrac:  0.05,
	RateShortfall:  0.05,
}

// Judge gives a measured point its verdict and the reason in words.
// summary and self are the generator's report; the CPU stats are the
// harness's own sampling of both sides.
func Judge(th Thresholds, server, generator result.CPUStats, summary wire.Summary, self wire.GeneratorStats) (verdict, reason string) {
	// An external server's CPU comes from its metrics, or is unknown: an
	// unknown one is never saturated (externalKnown).
	external := server.Source != ""
	srvBusy := server.FractionMean >= th.ServerBusy && (!external || externalKnown(server))
	srvWhy, genWhy := cpuWhy("server", server), cpuWhy("generator", generator)
	if external {
		srvWhy = externalCPUWhy(server)
	}
	genBehind, evidence := generatorBehind(th, generator, summary, self)
	contended := result.Contention(server, generator)
	// A limit found on contended CPUs is said, and so is the contention:
	// such a point is not clean (Point), whatever limited it.
	also := ""
	if contended != "" {
		also = "; contended: " + contended
	}

	switch {
	case srvBusy && genBehind:
		return result.VerdictBoth, fmt.Sprintf("%s and %s; %s: lower bound%s", srvWhy, genWhy, evidence, also)
	case srvBusy:
		return result.VerdictServerSaturated, fmt.Sprintf("%s; %s, %s%s", srvWhy, genWhy, evidence, also)
	case genBehind:
		if external && !externalKnown(server) {
			genWhy = srvWhy + ", " + genWhy // unknown is said, not left out
		}
		return result.VerdictGeneratorCapped, fmt.Sprintf("%s; %s: lower bound%s", genWhy, evidence, also)
	}
	why := "neither side near its cores: latency- or connection-bound (each connection waits a round trip; more connections may raise it)"
	switch {
	case summary.Errors > 0:
		why = fmt.Sprintf("neither side near its cores and %d errors: the errors limit it%s", summary.Errors, also)
	// Contention first: a server whose cores other work filled cannot
	// be said not to scale across them.
	case contended != "":
		why = "contended: " + contended + ": the machine was not quiet, this point measures contention"
	case external && !externalKnown(server):
		why = "the generator kept up and the server's CPU is unknown: it may be server-bound, latency- or connection-bound; the throughput is measured, what limited it is not"
	case server.PinnedCores > 1 && server.MeanCores >= th.ServerBusy && server.MeanCores <= float64(server.PinnedCores-1)+0.1:
		why = fmt.Sprintf("the server used %.2f of its %d cores: it may not scale across them (a serial section, one hot thread), more connections will not help then", server.MeanCores, server.PinnedCores)
	}
	return result.VerdictNeither, fmt.Sprintf("%s, %s; %s; %s", srvWhy, genWhy, evidence, why)
}

// generatorBehind applies the generator half of the rule; evidence says
// what was found either way.
func generatorBehind(th Thresholds, gen result.CPUStats, s wire.Summary, self wire.GeneratorStats) (bool, string) {
	if s.Mode == "open" {
		lag := time.Duration(self.ScheduleLagP99)
		if lag == 0 {
			lag = time.Duration(self.ScheduleLag.P99)
		}
		// The generator fell behind when it did not *send* at the rate:
		// attempted operations, not successful ones (a server that fails
		// requests is not a slow generator). A generator that does not
		// report attempted_ops_per_s is judged on achieved, as before.
		sent := s.AttemptedOpsPerS
		if sent == 0 {
			sent = s.AchievedOpsPerS
		}
		switch {
		case lag > th.ScheduleLagP99:
			return true, fmt.Sprintf("schedule lag p99 %s > %s", lag, th.ScheduleLagP99)
		case self.LateSendsFrac > th.LateSendsFrac:
			return true, fmt.Sprintf("%.1f%% of sends late > %.0f%%", self.LateSendsFrac*100, th.LateSendsFrac*100)
		case s.RequestedOpsPerS != nil && *s.RequestedOpsPerS > 0 && !s.Saturated &&
			sent < *s.RequestedOpsPerS*(1-th.RateShortfall):
			return true, fmt.Sprintf("attempted %.0f of %.0f ops/s requested without hitting max in-flight", sent, *s.RequestedOpsPerS)
		}
		return false, fmt.Sprintf("generator on schedule (lag p99 %s)", lag)
	}

	runnable := time.Duration(self.RunnableP99Ns)
	lt, loops := self.LoadThreads, self.Loops
	// Its cores count as busy when its own tree filled them, or when they
	// were full of anything (other processes on a shared machine leave the
	// generator just as short of CPU).
	busy := gen.FractionMean >= th.GeneratorBusy || gen.PinnedBusy >= th.GeneratorBusy
	if runnable == 0 && lt == nil && loops == nil {
		if gen.Samples == 0 && gen.PinnedBusy < 0 {
			return false, "no self-evidence reported and generator CPU not sampled: cannot tell"
		}
		if busy {
			return true, "no self-evidence reported, generator CPU near its cores (conservative)"
		}
		return false, "no self-evidence reported, generator CPU below its cores"
	}
	var ev []string
	saturated, waited := false, runnable > th.RunnableP99
	if loops != nil {
		lag := time.Duration(loops.LagP99Ns)
		saturated = loops.MaxBusy >= th.LoopBusy || lag > th.LoopLagP99
		ev = append(ev, fmt.Sprintf("busiest event loop %.0f%% of the window, loop lag p99 %s", loops.MaxBusy*100, lag.Round(time.Microsecond)))
	}
	if lt != nil {
		waited = waited || lt.RunDelayFraction > th.RunDelayFrac
		n := fmt.Sprintf("%d threads", lt.Threads)
		if lt.Threads == 1 {
			n = "1 thread"
		}
		ev = append(ev, fmt.Sprintf("load threads waited %.1f%% of their runnable time for a CPU (%s, worst %.1f%%)",
			lt.RunDelayFraction*100, n, lt.MaxThreadFraction*100))
	}
	if runnable > 0 {
		ev = append(ev, fmt.Sprintf("runnable p99 %s", runnable.Round(time.Microsecond)))
	}
	evidence := strings.Join(ev, ", ")
	switch {
	case saturated:
		return true, "event loop saturated (" + evidence + ")"
	case waited && busy:
		return true, "work ready but not run (" + evidence + ")"
	case busy:
		return false, "generator busy but nothing waited (" + evidence + "): eager reads, not a cap"
	}
	return false, "generator kept up (" + evidence + ")"
}

// cpuWhy is one side's CPU for a reason; an unsampled side says so
// instead of reading as 0%.
func cpuWhy(side string, c result.CPUStats) string {
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

// CPUStats.Source values: where an external server's CPU came from
// (ExternalCPU gives it; Judge reads it).
const (
	CPUFromMetrics = "metrics" // process_cpu_seconds_total of an external server
	CPUUnknown     = "unknown" // an external server without it
)

// ProcessCPUSeries is the Prometheus counter of a process's user and
// system CPU seconds (Go's process collector, and most servers', export
// it).
const ProcessCPUSeries = "process_cpu_seconds_total"

// ExternalCPU is an external server's CPU over the window from its
// metrics: cores = delta of process_cpu_seconds_total / the interval
// between the reads, and the fraction of cpus (external_cpus; 0: unknown,
// fraction 0 and Source still CPUFromMetrics). Without the series (no
// metrics, a failed read, a reset counter) the Source is CPUUnknown and no
// figure is given. The busy and steal of the server's CPUs are unknown
// (-1): they are not this machine's.
func ExternalCPU(sm *result.ServerMetrics, cpus int) result.CPUStats {
	c := result.CPUStats{PinnedCores: cpus, PinnedBusy: -1, StealFraction: -1, Source: CPUUnknown}
	if sm == nil || sm.IntervalS <= 0 {
		return c
	}
	for _, s := range sm.Series {
		if s.Name != ProcessCPUSeries || s.Delta == nil || s.Reset || *s.Delta < 0 || math.IsNaN(*s.Delta) {
			continue
		}
		c.Source = CPUFromMetrics
		c.Samples = 2 // the two reads
		c.MeanCores = *s.Delta / sm.IntervalS
		if cpus > 0 {
			c.FractionMean = c.MeanCores / float64(cpus)
		}
		return c
	}
	return c
}

// externalUnknownWhy is what a verdict says when an external server's CPU
// cannot be told.
const externalUnknownWhy = "server CPU unknown (external server; give metrics with process_cpu_seconds_total and external_cpus)"

// externalCPUWhy is an external server's CPU for a verdict's reason.
func externalCPUWhy(c result.CPUStats) string {
	switch {
	case c.Source != CPUFromMetrics:
		return externalUnknownWhy
	case c.PinnedCores <= 0:
		return fmt.Sprintf("server %.2f cores (%s) of an unknown number: %s", c.MeanCores, ProcessCPUSeries, externalUnknownWhy)
	}
	return fmt.Sprintf("server %.0f%% of %s (external, from %s)", c.FractionMean*100, cores(c.PinnedCores), ProcessCPUSeries)
}

// externalKnown reports whether an external server's CPU fraction is
// known, so that it may be judged saturated.
func externalKnown(c result.CPUStats) bool {
	return c.Source == CPUFromMetrics && c.PinnedCores > 0
}
