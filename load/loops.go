package load

import "github.com/ceiling-bench/ceiling/load/evloop"

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
