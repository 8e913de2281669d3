package harness

import (
	"sync"

	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/redact"
)

// ProcOptions are a ProcRunner's seams, given once to NewProcRunner: each
// nil one is the real part, filled in there and nowhere else.
type ProcOptions struct {
	// Secrets are redacted from each point's files when it ends (none:
	// nothing to redact).
	Secrets *redact.Set
	// Meter measures each point's window (the real one: meter.Proc, over
	// /proc and the process trees).
	Meter meter.Meter
	// Clock is the points' time (the wall clock).
	Clock Clock
	// Starter starts the points' processes and waits for the servers'
	// readiness (supervise's).
	Starter Starter
	// FreePorts gives a point its n free loopback ports
	// (target.FreePortsN).
	FreePorts func(n int) ([]int, error)
	// Profiler records the profiled points' CPU (one over the machine's
	// own perf, made at the first profiled point).
	Profiler *cpuprof.Profiler
}

// withDefaults is o with each nil seam the real part. The profiler is
// left nil: it is made when a point first asks for it (profiles).
func (o ProcOptions) withDefaults() ProcOptions {
	if o.Secrets == nil {
		o.Secrets = redact.New()
	}
	if o.Meter == nil {
		o.Meter = meter.Proc()
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.Starter == nil {
		o.Starter = procStarter{}
	}
	if o.FreePorts == nil {
		o.FreePorts = target.FreePortsN
	}
	return o
}

// lazyProfiler is a runner's Profiler: ProcOptions'; or, without one, one
// over the machine's own perf, made when a point first asks for it.
type lazyProfiler struct {
	mu sync.Mutex
	p  *cpuprof.Profiler
}

// get is the profiler, made at the first call.
func (l *lazyProfiler) get() *cpuprof.Profiler {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == nil {
		l.p = cpuprof.New(cpuprof.Real())
	}
	return l.p
}
