package attrib

import (
	"cmp"
	"context"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// Class is who a task belongs to.
type Class int

// The classes, in the order a task's parents are checked.
const (
	Foreign Class = iota
	Server
	Generator
	Harness
	Kernel
	// Partner is the other arm of a duet block: the sweep's own, on its
	// own half of the machine (its share of these CPUs is non-zero only
	// where the halves share CPUs).
	Partner
	nClasses
)

func (c Class) String() string {
	return [...]string{"foreign", "server", "generator", "harness", "kernel", "partner"}[c]
}

// Roots are the processes whose trees are the sweep's own: the servers'
// and the generator's (with every descendant), and the harness process
// itself (this process unless Harness is set; its threads, not its other
// children).
type Roots struct {
	Server, Generator []int
	Harness           int
	Partner           []int // a duet's other arm: its servers and generator
}

// Task is one foreign process's CPU time over the window, by CPU.
type Task struct {
	Pid     int
	Comm    string
	Seconds map[int]float64 // CPU -> seconds
}

// Report is a window's attribution.
type Report struct {
	// WallSeconds is the window's length (first scan to last).
	WallSeconds float64
	// PerCPU is each CPU's attributed seconds by class.
	PerCPU map[int]*[nClasses]float64
	// Foreign lists the foreign processes that ran at all.
	Foreign []Task
	// Scans is how many scans of the machine were made; Err the first
	// error that made a scan fail as a whole (then the report is not to
	// be used).
	Scans int
	Err   error
}

// Named is one foreign process's share of a side's CPUs.
type Named struct {
	Pid      int
	Comm     string
	Fraction float64
}

// Share is a side's CPUs over the window, as fractions of their time
// (1.0: every CPU of the set busy for the whole window), by class, with
// the foreign processes named (largest first).
type Share struct {
	Foreign, Server, Generator, Harness, Kernel, Partner float64
	Tasks                                                []Named
}

// Share sums the report over cpus.
func (r Report) Share(cpus []int) Share {
	var s Share
	if r.WallSeconds <= 0 || len(cpus) == 0 {
		return s
	}
	den := r.WallSeconds * float64(len(cpus))
	var tot [nClasses]float64
	for _, c := range cpus {
		if v := r.PerCPU[c]; v != nil {
			for i := range tot {
				tot[i] += v[i]
			}
		}
	}
	s.Foreign, s.Server, s.Generator = tot[Foreign]/den, tot[Server]/den, tot[Generator]/den
	s.Harness, s.Kernel, s.Partner = tot[Harness]/den, tot[Kernel]/den, tot[Partner]/den
	for _, t := range r.Foreign {
		var sec float64
		for _, c := range cpus {
			sec += t.Seconds[c]
		}
		if sec > 0 {
			s.Tasks = append(s.Tasks, Named{Pid: t.Pid, Comm: t.Comm, Fraction: sec / den})
		}
	}
	slices.SortFunc(s.Tasks, func(a, b Named) int {
		return cmp.Or(cmp.Compare(b.Fraction, a.Fraction), cmp.Compare(a.Pid, b.Pid))
	})
	return s
}

type taskKey struct {
	tid   int
	start uint64
}

// Scan attributes CPU time from Start until Stop.
type Scan struct {
	roots    Roots
	interval time.Duration

	mu      sync.Mutex
	prev    map[taskKey]uint64 // run ns at the last scan
	startUp float64            // uptime at the first scan, s
	start   time.Time
	last    time.Time
	perCPU  map[int]*[nClasses]float64
	foreign map[int]*Task
	scans   int
	err     error

	quit, done chan struct{}
	stopped    sync.Once
	report     Report
}

// Start takes the first scan at once (the window opens when it returns)
// and then one every interval until Stop or ctx ends.
func Start(ctx context.Context, interval time.Duration, roots Roots) *Scan {
	if roots.Harness == 0 {
		roots.Harness = os.Getpid()
	}
	s := &Scan{
		roots: roots, interval: interval,
		prev:    make(map[taskKey]uint64),
		perCPU:  make(map[int]*[nClasses]float64),
		foreign: make(map[int]*Task),
		quit:    make(chan struct{}), done: make(chan struct{}),
	}
	s.startUp, _ = procfs.UptimeSeconds()
	s.scan(true)
	go s.loop(ctx)
	return s
}

func (s *Scan) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.scan(false)
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		}
	}
}

// Stop takes the last scan (the window closes) and returns the report.
// Later calls return the same report.
func (s *Scan) Stop() Report {
	s.stopped.Do(func() {
		close(s.quit)
		<-s.done
		s.scan(false)
		s.mu.Lock()
		defer s.mu.Unlock()
		r := Report{WallSeconds: s.last.Sub(s.start).Seconds(), PerCPU: s.perCPU, Scans: s.scans, Err: s.err}
		for _, t := range s.foreign {
			r.Foreign = append(r.Foreign, *t)
		}
		slices.SortFunc(r.Foreign, func(a, b Task) int { return cmp.Compare(a.Pid, b.Pid) })
		s.report = r
	})
	return s.report
}

// proc is one process as a scan saw it.
type proc struct {
	st    procfs.Stat
	class Class
	known bool
}

// scan reads every thread and charges its run time since the previous
// scan to the CPU it is on now. first only records the baseline.
func (s *Scan) scan(first bool) {
	pids, err := procfs.Pids()
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	procs := make(map[int]*proc, len(pids))
	for _, pid := range pids {
		if st, err := procfs.ReadStat(pid); err == nil {
			procs[pid] = &proc{st: st}
		}
	}
	seen := make(map[taskKey]uint64, len(s.prev))
	for pid, p := range procs {
		class := s.classify(procs, pid)
		for _, tid := range procfs.Tasks(pid) {
			ts, err := procfs.ReadTaskStat(pid, tid)
			if err != nil {
				continue
			}
			run, ok := runNs(pid, tid, ts)
			if !ok {
				continue
			}
			k := taskKey{tid, ts.StartTicks}
			seen[k] = run
			if first {
				continue
			}
			before, had := s.prev[k]
			switch {
			case had:
			case float64(ts.StartTicks)/procfs.ClockTicks >= s.startUp-1.0/procfs.ClockTicks:
				before = 0 // born in the window: all of its time is the window's
			default:
				continue // older than the window and never seen: no baseline
			}
			if run <= before {
				continue
			}
			sec := float64(run-before) / 1e9
			c := s.perCPU[ts.Processor]
			if c == nil {
				c = new([nClasses]float64)
				s.perCPU[ts.Processor] = c
			}
			c[class] += sec
			if class == Foreign {
				t := s.foreign[pid]
				if t == nil {
					t = &Task{Pid: pid, Comm: p.st.Comm, Seconds: map[int]float64{}}
					s.foreign[pid] = t
				}
				t.Seconds[ts.Processor] += sec
			}
		}
	}
	s.prev = seen
	s.scans++
	if first {
		s.start = now
	}
	s.last = now
}

// runNs is a thread's time on a CPU: schedstat's nanoseconds, else
// stat's ticks (10 ms resolution) where the kernel has no schedstat.
func runNs(pid, tid int, ts procfs.Stat) (uint64, bool) {
	if ss, err := procfs.ReadSchedstat(pid, tid); err == nil {
		return ss.RunNs, true
	}
	return (ts.UTicks + ts.STicks) * (1e9 / procfs.ClockTicks), true
}

// classify walks pid's parents to the first root it meets.
func (s *Scan) classify(procs map[int]*proc, pid int) Class {
	p := procs[pid]
	if p == nil {
		return Foreign
	}
	if p.known {
		return p.class
	}
	var c Class
	switch {
	case slices.Contains(s.roots.Server, pid):
		c = Server
	case slices.Contains(s.roots.Generator, pid):
		c = Generator
	case slices.Contains(s.roots.Partner, pid):
		c = Partner
	case pid == s.roots.Harness:
		c = Harness
	case p.st.KernelThread() || pid == 2 || p.st.PPid == 2:
		c = Kernel
	case p.st.PPid <= 1 || p.st.PPid == pid || p.st.PPid == s.roots.Harness:
		// Only the harness process itself is the harness: a child it
		// started that is neither side (a test's hog) is someone else.
		c = Foreign
	default:
		p.known, p.class = true, Foreign // a cycle guard while the parent is walked
		c = s.classify(procs, p.st.PPid)
	}
	p.known, p.class = true, c
	return c
}
