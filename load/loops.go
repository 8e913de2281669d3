package load

import (
	"context"
	"sync"

	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/load/evloop"
)

// LoopReporter is a Scenario that says how it drove its connections
// (GeneratorStats.Engine) and, when that was the event-loop engine
// (load/evloop), the loops' evidence over the window (GeneratorStats.Loops:
// busy fraction per loop, ready -> handled lag). Run asks after Load
// returned.
type LoopReporter interface {
	// Engine is "loop" (load/evloop), "goroutines" (one or two per
	// connection) or a client library's name ("nats.go").
	Engine() string
	// LoopStats is the loops' evidence over w; nil when the connections
	// were not on event loops.
	LoopStats(w Window) *LoopStats
}

// IOPatterner is a Scenario that says how its connections wrote and
// read (GeneratorStats.IOPattern). Run asks after Load returned.
type IOPatterner interface {
	IOPattern() string
}

// I/O patterns for GeneratorStats.IOPattern (internal/wire's, which the
// knobs check IO_PATTERN by).
const (
	IOBatchWake = wire.IOBatchWake
	IOEager     = wire.IOEager
)

// Engine names for GeneratorStats.Engine.
const (
	EngineLoop       = "loop"
	EngineGoroutines = "goroutines"
)

// LoopStatsOf turns an engine's Stats (after its Run) into the result's
// loops block. The evloop engine windows its own figures (busy time and
// lag inside Config.Window), so this needs no snapshot at the edges.
func LoopStatsOf(st evloop.Stats) *LoopStats {
	ls := &LoopStats{Count: len(st.Busy), BusyFraction: st.Busy, MaxBusy: st.MaxBusy()}
	if ls.BusyFraction == nil {
		ls.BusyFraction = []float64{}
	}
	if st.Lag != nil && st.Lag.TotalCount() > 0 {
		ls.LagP99Ns = st.Lag.ValueAtQuantile(99)
		ls.LagMaxNs = st.Lag.Max()
	}
	return ls
}

// reportLoops fills the generator block's engine and loops from a
// scenario that reports them.
func reportLoops(g *GeneratorStats, sc Scenario, w Window) {
	lr, ok := sc.(LoopReporter)
	if !ok {
		return
	}
	g.Engine = lr.Engine()
	g.Loops = lr.LoopStats(w)
}

// reportIOPattern fills the generator block's io_pattern from a scenario
// that reports it.
func reportIOPattern(g *GeneratorStats, sc Scenario) {
	if p, ok := sc.(IOPatterner); ok {
		g.IOPattern = p.IOPattern()
	}
}

// LoopRunner runs a scenario's event-loop engine and keeps what the engine
// asks of it: the engine's counters for the observer mid-run
// (Scenario.ReadCounters) and the loops block after it (LoopReporter).
// The zero value is ready; Counters is zero and Stats nil until Run.
type LoopRunner struct {
	mu    sync.Mutex // guards eng: the observer reads counters mid-run
	eng   *evloop.Engine
	stats *LoopStats
}

// Run runs eng until it ends, then keeps its Stats.
func (r *LoopRunner) Run(ctx context.Context, eng *evloop.Engine) {
	r.mu.Lock()
	r.eng = eng
	r.mu.Unlock()
	eng.Run(ctx)
	st := LoopStatsOf(eng.Stats())
	r.mu.Lock()
	r.stats = st
	r.mu.Unlock()
}

// Counters are the engine's read syscalls and messages so far.
func (r *LoopRunner) Counters() (reads, messages int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.eng == nil {
		return 0, 0
	}
	return r.eng.Counters()
}

// Stats is the loops block of the engine's run; nil before it ended.
func (r *LoopRunner) Stats() *LoopStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}
