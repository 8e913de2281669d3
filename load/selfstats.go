package load

import (
	"math"
	"os"
	"runtime/metrics"
	"sync"

	"github.com/ceiling-bench/ceiling/internal/procfs"
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
	threads       map[int]threadSched       // each thread's schedstat by TID; nil where unavailable
	reads, msgs   int64
	mem           procfs.Memory // this process's memory (selfmemory.go); mem.RSSBytes 0: unread
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
	c.threads = readThreads()
	for _, t := range c.threads {
		c.runDelayNs += t.delayNs
	}
	c.reads, c.msgs = sc.ReadCounters()
	c.mem = readSelfMemory()
	return c
}

// threadSched is one thread's cumulative schedstat: field 1, the time it
// ran on a CPU, and field 2, the time it was runnable but waited for one
// (run delay), in nanoseconds.
type threadSched struct{ runNs, delayNs int64 }

// readThreads reads /proc/self/task/*/schedstat, keyed by thread id; nil
// where there is no such file (not Linux, a kernel without schedstats).
func readThreads() map[int]threadSched {
	pid := os.Getpid()
	tids := procfs.Tasks(pid)
	if len(tids) == 0 {
		return nil
	}
	m := make(map[int]threadSched, len(tids))
	for _, tid := range tids {
		ss, err := procfs.ReadSchedstat(pid, tid)
		if err != nil {
			continue // the thread exited, or the kernel keeps no schedstat
		}
		m[tid] = threadSched{runNs: int64(ss.RunNs), delayNs: int64(ss.DelayNs)}
	}
	if len(m) == 0 {
		return nil // no schedstat at all
	}
	return m
}

// sysmonTID is the thread id of the Go runtime's monitor thread (sysmon),
// or 0 when it cannot be told. runtime.main starts it before anything else
// can start a thread, so it is the oldest thread after the main one (start
// time, then thread id, which the kernel hands out in order).
var sysmonTID = sync.OnceValue(func() int {
	pid := os.Getpid()
	best, bestStart := 0, uint64(math.MaxUint64)
	for _, tid := range procfs.Tasks(pid) {
		if tid == pid {
			continue
		}
		st, err := procfs.ReadTaskStat(pid, tid)
		if err != nil {
			continue
		}
		if start := st.StartTicks; start < bestStart || start == bestStart && tid < best {
			best, bestStart = tid, start
		}
	}
	return best
})

// LoadThreadMinShare is the share of the window a thread must have run to
// count as one that carried the load.
//
// Why a share, and why a tenth: the old figure summed the run delay of
// every thread, and most of a Go process's threads carry no load. Idle
// runtime threads run about 1% of the window (measured beside a generator
// at 94% of its pinned core) yet spend most of their short runnable time
// waiting behind the very thread that does the work, so they read 30-60%
// "delayed" and swamped the sum. The thread that carries the load runs
// most of the window (94% there); a goroutine engine that hands its P
// between threads around syscalls spreads the work over a few threads,
// each still above a tenth. A thread below a tenth did too little of the
// work to say whether the generator kept up.
const LoadThreadMinShare = 0.10

// loadThreads is the schedstat evidence of the threads that carried the
// load over the window [a, b] of windowNs: those present at both edges
// (keyed by thread id) that ran at least LoadThreadMinShare of the window.
// When none did — a generator starved so hard that even its busiest
// thread ran less than that — the busiest thread stands for them, so that
// starvation is seen rather than filtered out.
//
// skip (0 for none) is the runtime's sysmon, never counted: it carries no
// load, but while it finds Ps to retake (a syscall running longer than
// 20 µs) it wakes every 20 µs, and beside a busy generator it ran up to 14%
// of the window and spent two thirds of its runnable time queued behind
// the threads doing the work: run delay that is no part of the work.
//
// Threads started or ended inside the window are left out: there is no
// edge to subtract from (the runtime starts spare threads mid-window
// around syscalls; a thread that ends takes its counts along). A thread id
// reused inside the window shows as counters that went backwards and is
// left out too. nil when schedstat is unavailable.
func loadThreads(a, b map[int]threadSched, windowNs int64, skip int) *ThreadStats {
	if a == nil || b == nil || windowNs <= 0 {
		return nil
	}
	minRun := int64(LoadThreadMinShare * float64(windowNs))
	var ts ThreadStats
	var busiest threadSched
	add := func(d threadSched) {
		ts.Threads++
		ts.RunNs += d.runNs
		ts.RunDelayNs += d.delayNs
		if f := DelayFraction(d.runNs, d.delayNs); f > ts.MaxThreadFraction {
			ts.MaxThreadFraction = f
		}
	}
	for tid, end := range b {
		start, ok := a[tid]
		if !ok || tid == skip {
			continue
		}
		d := threadSched{runNs: end.runNs - start.runNs, delayNs: end.delayNs - start.delayNs}
		if d.runNs < 0 || d.delayNs < 0 {
			continue
		}
		if d.runNs > busiest.runNs {
			busiest = d
		}
		if d.runNs >= minRun {
			add(d)
		}
	}
	if ts.Threads == 0 && busiest.runNs > 0 {
		add(busiest)
	}
	ts.RunDelayFraction = DelayFraction(ts.RunNs, ts.RunDelayNs)
	return &ts
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
	g.LoadThreads = loadThreads(a.threads, b.threads, b.at-a.at, sysmonTID())
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
