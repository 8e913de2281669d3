package harness

import (
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/memsample"
	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/supervise"
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

// programPid is the program a process runs, without the supervisor the
// harness put above it: the supervisor is the harness's, and its pages
// (this binary's, shared with every other supervisor) would move the
// server's PSS as generators come and go.
func programPid(s supervise.Process) int {
	if t, ok := s.(interface{ TargetPid() int }); ok {
		return t.TargetPid()
	}
	return s.Pid()
}

// memoryBaseline reads each booted server's memory before any
// connection. An external server is nobody's child here: nothing of it
// is read.
func (p *pointRun) memoryBaseline() {
	if p.target.External {
		return
	}
	p.memBase = nil
	for _, s := range p.srvs {
		p.memBase = append(p.memBase, meter.ReadingBaseline(memsample.Read(cpusample.Tree(programPid(s)))))
	}
}

// memorySpec adds the trees whose memory the window samples.
func (p *pointRun) memorySpec(m *meter.Spec) {
	m.MemoryEvery = MemoryEvery
	if !p.target.External {
		for _, s := range p.srvs {
			m.ServerMemory = append(m.ServerMemory, cpusample.Tree(programPid(s)))
		}
	}
	for _, g := range p.side.Procs() {
		m.GeneratorMemory = append(m.GeneratorMemory, cpusample.Tree(programPid(g)))
	}
}

// recordMemory makes each side's memory of the window and the
// generator's JSON: per connection over the connections it held open.
func (p *pointRun) recordMemory(out *verdict.Outcome) {
	if out.Load == nil {
		return
	}
	open := out.Load.Summary.ConnectionsOpen
	w := p.memWindow
	if !p.target.External {
		names := make([]string, len(p.booted))
		for i, s := range p.booted {
			names[i] = s.Name
		}
		out.ServerMemory = meter.ServerMemory(w, p.memBase, names, open)
	}
	self := out.Load.Generator.Memory
	gen := w.GeneratorMemory
	if gen.Samples == 0 {
		gen = meter.SelfReported(self) // no generator process of ours: remote agents
	}
	out.GeneratorMemory = meter.Memory(gen, meter.GeneratorBaseline(self), open)
}
