package memsample

import (
	"context"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// DefaultInterval is how often a window's memory is sampled: reading
// smaps_rollup walks page tables, so less often than CPU
// (cpusample.DefaultInterval).
const DefaultInterval = time.Second

// The measures a Reading or Stats can be in.
const (
	PSS = "pss" // /proc/PID/smaps_rollup Pss: shared pages divided among their processes
	RSS = "rss" // /proc/PID/status VmRSS: resident pages, shared ones counted in every process
)

// Reading is a tree's memory at one instant, summed over its processes.
type Reading struct {
	// PSS is true when every process's smaps_rollup was read: PSSBytes
	// is then the tree's PSS. False: PSSBytes means nothing.
	PSS       bool
	PSSBytes  uint64
	RSSBytes  uint64
	Processes int // processes read
}

// OK reports whether anything was read.
func (r Reading) OK() bool { return r.Processes > 0 }

// Measure is the reading's measure: PSS when every process had one, else
// RSS; "" when nothing was read.
func (r Reading) Measure() string {
	switch {
	case !r.OK():
		return ""
	case r.PSS:
		return PSS
	}
	return RSS
}

// Read reads src's processes once.
func Read(src cpusample.Source) Reading { return readWith(src, procfs.ReadMemory) }

func readWith(src cpusample.Source, read func(int) (procfs.Memory, error)) Reading {
	r := Reading{PSS: true}
	for _, pid := range src() {
		m, err := read(pid)
		if err != nil {
			continue // gone between listing and reading
		}
		r.Processes++
		r.PSSBytes += m.PSSBytes
		r.RSSBytes += m.RSSBytes
		r.PSS = r.PSS && m.HasPSS
	}
	if r.Processes == 0 {
		r.PSS = false
	}
	return r
}

// Stats is a tree's memory over a window.
type Stats struct {
	// Samples is the readings that read something; PSS is true when
	// every one of them read PSS (PeakPSS and EndPSS are then figures).
	Samples int
	PSS     bool
	// The largest reading and the last, in each measure.
	PeakPSS, EndPSS uint64
	PeakRSS, EndRSS uint64
	// Processes is the most processes one reading read.
	Processes int
}

// Measure is the window's measure: PSS when every reading had it, else
// RSS; "" with no reading.
func (s Stats) Measure() string {
	switch {
	case s.Samples == 0:
		return ""
	case s.PSS:
		return PSS
	}
	return RSS
}

// add folds one reading into the window's stats.
func (s *Stats) add(r Reading) {
	if !r.OK() {
		return
	}
	if s.Samples == 0 {
		s.PSS = true
	}
	s.Samples++
	s.PSS = s.PSS && r.PSS
	s.PeakPSS, s.EndPSS = max(s.PeakPSS, r.PSSBytes), r.PSSBytes
	s.PeakRSS, s.EndRSS = max(s.PeakRSS, r.RSSBytes), r.RSSBytes
	s.Processes = max(s.Processes, r.Processes)
}

// Group samples several trees at the same instants: each one's Stats and
// their sum's.
type Group struct {
	srcs     []cpusample.Source
	read     func(int) (procfs.Memory, error)
	interval time.Duration

	mu    sync.Mutex
	parts []Stats
	total Stats

	quit    chan struct{}
	done    chan struct{}
	stopped sync.Once
}

// StartGroup reads every tree at once (the window's start) and then every
// interval (DefaultInterval if <= 0) until Stop or ctx ends.
func StartGroup(ctx context.Context, interval time.Duration, srcs ...cpusample.Source) *Group {
	g := newGroup(interval, procfs.ReadMemory, srcs...)
	g.tick()
	go g.loop(ctx)
	return g
}

func newGroup(interval time.Duration, read func(int) (procfs.Memory, error), srcs ...cpusample.Source) *Group {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Group{srcs: srcs, read: read, interval: interval, parts: make([]Stats, len(srcs)),
		quit: make(chan struct{}), done: make(chan struct{})}
}

// tick reads every tree and folds the readings in, and their sum: a sum
// of PSS only where every part read PSS. A tick at which a tree read
// nothing (its processes gone between listing and reading, or exited)
// adds nothing to the sum: a sum short of a part is no reading of the
// whole, and its empty part is no RSS reading either.
func (g *Group) tick() {
	rs := make([]Reading, len(g.srcs))
	for i, src := range g.srcs {
		rs[i] = readWith(src, g.read)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	sum, whole := Reading{PSS: true}, true
	for i, r := range rs {
		g.parts[i].add(r)
		whole = whole && r.OK()
		sum.PSS = sum.PSS && r.PSS
		sum.PSSBytes += r.PSSBytes
		sum.RSSBytes += r.RSSBytes
		sum.Processes += r.Processes
	}
	if whole && sum.Processes > 0 {
		g.total.add(sum)
	}
}

func (g *Group) loop(ctx context.Context) {
	cpusample.Every(ctx, g.interval, g.quit, g.done, g.tick)
}

// Stop reads once more (the window's end), stops sampling and returns the
// sum's Stats and each tree's, in the order of the sources. Later calls
// return the same.
func (g *Group) Stop() (total Stats, parts []Stats) {
	g.stopped.Do(func() {
		close(g.quit)
		<-g.done
		g.tick()
	})
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total, append([]Stats(nil), g.parts...)
}
