package cpusample

import (
	"context"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
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

	processes int // a Group's total: the parts' processes (it sees none itself)
}

// Start takes a first sample at once (the window's start) and then one
// every interval (DefaultInterval if <= 0) until Stop or ctx ends.
func Start(ctx context.Context, interval time.Duration, src Source) *Sampler {
	s := newSampler(interval, src)
	s.begin(s.sample(), time.Now())
	go s.loop(ctx)
	return s
}

func newSampler(interval time.Duration, src Source) *Sampler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Sampler{
		src:      src,
		interval: interval,
		last:     make(map[key]cpuTimes),
		delays:   make(map[taskKey]float64),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// begin opens the window at now with the totals base.
func (s *Sampler) begin(base cpuTimes, now time.Time) {
	s.base = base
	s.startAt = now
	s.prevAt, s.prevTotal = s.startAt, s.base.user+s.base.sys
}

func (s *Sampler) loop(ctx context.Context) {
	Every(ctx, s.interval, s.quit, s.done, func() { s.tick(false) })
}

// Every calls tick every interval until ctx ends or quit is closed, then
// closes done: the loop of a sampler whose first and last readings its
// Start and Stop take themselves.
func Every(ctx context.Context, interval time.Duration, quit <-chan struct{}, done chan<- struct{}, tick func()) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			tick()
		case <-ctx.Done():
			return
		case <-quit:
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
	s.record(tot, time.Now(), final)
}

// record closes one interval at now with the tree's totals tot.
func (s *Sampler) record(tot cpuTimes, now time.Time, final bool) {
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
			Processes:       len(s.last) + s.processes,
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
		st, err := procfs.ReadStat(pid)
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
	tids := procfs.Tasks(pid)
	if tids == nil {
		return nil
	}
	out := make(map[int]float64, len(tids))
	for _, tid := range tids {
		if ss, err := procfs.ReadSchedstat(pid, tid); err == nil {
			out[tid] = float64(ss.DelayNs) / 1e9
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

// Group samples several Sources (the servers of a multi-server target)
// at the same instants: each part's Stats, and the total's, whose
// intervals are the sum of the parts' (so its P95Cores is the busiest
// stretches of all together, not a sum of the parts' percentiles) and
// whose seconds and MeanCores are the parts' sums.
type Group struct {
	parts    []*Sampler
	total    *Sampler
	interval time.Duration
	quit     chan struct{}
	done     chan struct{}
	stopped  sync.Once
}

// StartGroup is Start for several Sources at once.
func StartGroup(ctx context.Context, interval time.Duration, srcs ...Source) *Group {
	g := &Group{total: newSampler(interval, nil), quit: make(chan struct{}), done: make(chan struct{})}
	g.interval = g.total.interval
	for _, src := range srcs {
		g.parts = append(g.parts, newSampler(interval, src))
	}
	tots, now := g.sample()
	for i, p := range g.parts {
		p.begin(tots[i], now)
	}
	g.total.begin(sum(tots), now)
	go g.loop(ctx)
	return g
}

func (g *Group) sample() ([]cpuTimes, time.Time) {
	tots := make([]cpuTimes, len(g.parts))
	for i, p := range g.parts {
		tots[i] = p.sample()
	}
	return tots, time.Now()
}

func sum(tots []cpuTimes) cpuTimes {
	var t cpuTimes
	for _, x := range tots {
		t.user += x.user
		t.sys += x.sys
		t.delay += x.delay
	}
	return t
}

func (g *Group) tick(final bool) {
	tots, now := g.sample()
	for i, p := range g.parts {
		p.record(tots[i], now, final)
	}
	if final {
		g.total.processes = 0
		for _, p := range g.parts {
			p.mu.Lock()
			g.total.processes += len(p.last)
			p.mu.Unlock()
		}
	}
	g.total.record(sum(tots), now, final)
}

func (g *Group) loop(ctx context.Context) {
	Every(ctx, g.interval, g.quit, g.done, func() { g.tick(false) })
}

// Stop takes the final sample and returns the total's Stats and each
// part's, in the order of the Sources. Later calls return the same.
func (g *Group) Stop() (total Stats, parts []Stats) {
	g.stopped.Do(func() {
		close(g.quit)
		<-g.done
		g.tick(true)
	})
	for _, p := range g.parts {
		parts = append(parts, p.stats)
	}
	return g.total.stats, parts
}
