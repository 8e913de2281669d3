package load

import (
	"math"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// selfStats are the generator's own counters at the window's edges. They
// are its evidence about itself: a generator near one core, with a late
// schedule, runnable goroutines waiting or threads waiting for a CPU, was
// the limit, whatever the server did.
type selfStats struct{ start, end counters }

type counters struct {
	ok            bool
	at            int64 // mono
	userNs, sysNs int64
	sched         *metrics.Float64Histogram // /sched/latencies:seconds, cumulative
	runDelayNs    int64                     // sum of schedstat run_delay over our threads
	reads, msgs   int64
}

const schedLatencies = "/sched/latencies:seconds"

func snapshot(sc Scenario) counters {
	c := counters{ok: true, at: Mono()}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
		c.userNs = ru.Utime.Nano()
		c.sysNs = ru.Stime.Nano()
	}
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindFloat64Histogram {
		c.sched = s[0].Value.Float64Histogram()
	}
	c.runDelayNs = runDelay()
	c.reads, c.msgs = sc.ReadCounters()
	return c
}

// runDelay sums field 2 of /proc/self/task/*/schedstat: nanoseconds each
// thread spent runnable but waiting for a CPU. 0 where unavailable.
func runDelay() int64 {
	tasks, _ := filepath.Glob("/proc/self/task/*/schedstat")
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			sum += v
		}
	}
	return sum
}

// generatorStats turns the two snapshots and the merged record into the
// result's generator block.
func (s selfStats) generatorStats(m *Recorder, measuredNs int64) GeneratorStats {
	var g GeneratorStats
	if m.Lag != nil {
		g.ScheduleLag = m.Lag.Latency()
		g.ScheduleLagP99 = g.ScheduleLag.P99
		if m.Ops > 0 {
			g.LateSendsFrac = float64(m.LateSends) / float64(m.Ops)
		}
	}
	if !s.start.ok || !s.end.ok {
		return g
	}
	a, b := s.start, s.end
	g.CPUUserS = float64(b.userNs-a.userNs) / 1e9
	g.CPUSystemS = float64(b.sysNs-a.sysNs) / 1e9
	if span := b.at - a.at; span > 0 {
		g.CPUCores = (g.CPUUserS + g.CPUSystemS) / (float64(span) / 1e9)
	}
	g.RunnableP99Ns = histDeltaP99Ns(a.sched, b.sched)
	g.OSRunDelayNs = b.runDelayNs - a.runDelayNs
	if g.OSRunDelayNs < 0 {
		g.OSRunDelayNs = 0 // threads that exited took their counts along
	}
	g.ReadSyscalls = b.reads - a.reads
	if g.ReadSyscalls > 0 {
		g.MessagesPerRead = float64(b.msgs-a.msgs) / float64(g.ReadSyscalls)
	}
	return g
}

// histDeltaP99Ns is the p99 of the goroutine scheduling latencies recorded
// between two cumulative runtime/metrics snapshots, as the upper edge of
// the bucket holding it (the runtime gives no finer figure).
func histDeltaP99Ns(a, b *metrics.Float64Histogram) int64 {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return 0
	}
	var total uint64
	delta := make([]uint64, len(b.Counts))
	for i := range b.Counts {
		delta[i] = b.Counts[i] - a.Counts[i]
		total += delta[i]
	}
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	for i, d := range delta {
		seen += d
		if seen >= rank {
			edge := b.Buckets[i+1]
			if math.IsInf(edge, 1) {
				edge = b.Buckets[i]
			}
			return int64(edge * 1e9)
		}
	}
	return 0
}
