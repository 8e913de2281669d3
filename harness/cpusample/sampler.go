package cpusample

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/shirou/gopsutil/v3/process"
)

// Boot time only changes on reboot; without the cache gopsutil reads
// /proc/stat again for every process at every tick.
func init() { process.EnableBootTimeCache(true) }

// DefaultInterval is the sampling period the harness uses.
const DefaultInterval = 250 * time.Millisecond

// key names one process across pid reuse.
type key struct {
	pid   int
	start uint64
}

// cpuTimes is a process's cumulative user and system seconds, and the
// run delay (seconds runnable but waiting for a CPU) of the tree.
type cpuTimes struct{ user, sys, delay float64 }

// taskKey names one thread of one process.
type taskKey struct {
	key
	tid int
}

// Sampler samples the CPU times of a Source's processes at a fixed
// interval until Stop.
type Sampler struct {
	src      Source
	interval time.Duration

	mu        sync.Mutex
	last      map[key]cpuTimes    // last-seen times of every process ever seen, gone ones kept
	delays    map[taskKey]float64 // last-seen run delay of every thread ever seen
	base      cpuTimes            // totals at Start
	prevTotal float64
	prevAt    time.Time
	startAt   time.Time
	cores     []float64 // per-interval core usage

	quit    chan struct{}
	done    chan struct{}
	stopped sync.Once
	stats   Stats
}

// Start takes a first sample at once (the window's start) and then one
// every interval (DefaultInterval if <= 0) until Stop or ctx ends.
func Start(ctx context.Context, interval time.Duration, src Source) *Sampler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	s := &Sampler{
		src:      src,
		interval: interval,
		last:     make(map[key]cpuTimes),
		delays:   make(map[taskKey]float64),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	s.base = s.sample()
	s.startAt = time.Now()
	s.prevAt, s.prevTotal = s.startAt, s.base.user+s.base.sys
	go s.loop(ctx)
	return s
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.tick(false)
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		}
	}
}

// tick samples and closes one interval. The window's end (final) merges a
// stub shorter than half an interval into the previous one: CPU times have
// a 10 ms resolution, which would make a few-ms interval read as 0 or
// several cores.
func (s *Sampler) tick(final bool) {
	tot := s.sample()
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	total := tot.user + tot.sys
	wall := now.Sub(s.prevAt).Seconds()
	cpu := total - s.prevTotal
	switch {
	case final && wall < s.interval.Seconds()/2 && len(s.cores) > 0:
		i := len(s.cores) - 1
		prevWall := s.interval.Seconds() // close enough for the merge: ticks are that far apart
		s.cores[i] = (s.cores[i]*prevWall + cpu) / (prevWall + wall)
	case wall > 0:
		s.cores = append(s.cores, cpu/wall)
	}
	s.prevAt, s.prevTotal = now, total
	if final {
		w := now.Sub(s.startAt).Seconds()
		st := Stats{
			Samples:         len(s.cores),
			P95Cores:        p95(s.cores),
			UserSeconds:     tot.user - s.base.user,
			SystemSeconds:   tot.sys - s.base.sys,
			RunDelaySeconds: tot.delay - s.base.delay,
			WallSeconds:     w,
			Processes:       len(s.last),
		}
		if w > 0 {
			st.MeanCores = (st.UserSeconds + st.SystemSeconds) / w
		}
		s.stats = st
	}
}

// sample reads the times of every current process, updates last-seen and
// returns the sum over every process ever seen (gone ones at their last
// value, so a child that exits mid-window keeps its CPU).
func (s *Sampler) sample() cpuTimes {
	for _, pid := range s.src() {
		st, err := supervise.ReadStat(pid)
		if err != nil {
			continue // gone between listing and reading
		}
		// No NewProcess: it only checks that the pid exists, which
		// ReadStat just did.
		p := &process.Process{Pid: int32(pid)}
		t, err := p.Times()
		if err != nil {
			continue
		}
		k := key{pid, st.StartTicks}
		delays := runDelays(pid)
		s.mu.Lock()
		s.last[k] = cpuTimes{user: t.User, sys: t.System}
		for tid, d := range delays {
			s.delays[taskKey{k, tid}] = d
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum cpuTimes
	for _, t := range s.last {
		sum.user += t.user
		sum.sys += t.sys
	}
	for _, d := range s.delays {
		sum.delay += d
	}
	return sum
}

// runDelays reads the run delay of every thread of pid from
// /proc/PID/task/TID/schedstat (second field, ns): time the thread was
// runnable but waited for a CPU. Empty where the kernel has no schedstat.
func runDelays(pid int) map[int]float64 {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make(map[int]float64, len(tasks))
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[tid] = ns / 1e9
		}
	}
	return out
}

// Stop takes the final sample (the window's end), stops sampling and
// returns the window's Stats. Later calls return the same Stats.
func (s *Sampler) Stop() Stats {
	s.stopped.Do(func() {
		close(s.quit)
		<-s.done
		s.tick(true)
	})
	return s.stats
}
