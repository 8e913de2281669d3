package harness

import (
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/memsample"
	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/verdict"
)

// A point's memory on both sides (docs/efficiency.md, "Memory per
// connection"): each server's baseline is read after it is ready and
// before the generator starts (memoryBaseline), both sides are sampled
// over the window with the CPU (the meter's MemoryEvery), and once the
// generator's JSON is read each side's cost per connection is the slope
// from its baseline (recordMemory). The generator's baseline is its own
// report: it reads itself before its first connection, which the
// harness, starting it, cannot.

// MemoryEvery is the memory sampling period over the window: a quarter
// as often as the CPU's (memsample.DefaultInterval).
const MemoryEvery = memsample.DefaultInterval

// memoryBaseline reads each of set's servers' memory before any
// connection (an external server has none here: nobody's child).
func memoryBaseline(set *serverSet) []meter.Baseline {
	var base []meter.Baseline
	for _, t := range set.programs() {
		base = append(base, meter.ReadingBaseline(memsample.Read(t)))
	}
	return base
}

// recordMemory makes each side's memory of the window w and the
// generator's JSON: per connection over the connections it held open,
// the servers' as their stage accounts for them.
func recordMemory(servers serverStage, w meter.Window, base []meter.Baseline, out *verdict.Outcome) {
	if out.Load == nil {
		return
	}
	open := out.Load.Summary.ConnectionsOpen
	servers.memory(w, base, open, out)
	self := out.Load.Generator.Memory
	gen := w.GeneratorMemory
	if gen.Samples == 0 {
		gen = meter.SelfReported(self) // no generator process of ours: remote agents
	}
	out.GeneratorMemory = meter.Memory(gen, meter.GeneratorBaseline(self), open)
}

// memoryTrees are the generator side's programs' trees, as its memory
// is sampled.
func memoryTrees(gen *generation) []cpusample.Source {
	var out []cpusample.Source
	for _, g := range gen.side.Procs() {
		out = append(out, cpusample.Tree(programPid(g)))
	}
	return out
}
