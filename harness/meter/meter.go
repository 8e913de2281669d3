package meter

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/memsample"
	"github.com/ceiling-bench/ceiling/pinning"
)

// Meter measures a point's two sides over its window: each side's
// process trees (cpusample), how busy its pinned cores were and how much
// the hypervisor stole (/proc/stat), and who else ran on them (attrib).
// Start is called as the window opens and Stop as it ends; what Stop
// returns is raw, and Sides makes the point's CPUStats of it, so the
// rules over a window are tested on recorded windows without a process.
// Proc is the real Meter; a test of the harness gives its own.
type Meter interface {
	Start(ctx context.Context, s Spec) Run
}

// Run is one window being measured.
type Run interface {
	Stop() Window
}

// Spec is what a window measures.
type Spec struct {
	Every time.Duration
	// Servers are the servers' trees, sampled at the same instants;
	// none for an external server (nothing of it is sampled here).
	Servers []cpusample.Source
	// Generator is the generator's tree, or the local agents' trees
	// sampled at the same instants (Agents).
	Generator []cpusample.Source
	Agents    bool
	// ServerCPUs and GeneratorCPUs are the point's pinned sets.
	ServerCPUs, GeneratorCPUs pinning.CPUSet
	// Roots are the point's own processes, for attribution.
	Roots attrib.Roots
	// ServerMemory and GeneratorMemory are the trees whose memory is
	// sampled (memsample), every MemoryEvery: the programs themselves,
	// not their supervisors, which are the harness's. None: not sampled.
	ServerMemory, GeneratorMemory []cpusample.Source
	MemoryEvery                   time.Duration
}

// Window is what a Meter saw over one window.
type Window struct {
	External bool              // no server was sampled
	Server   cpusample.Stats   // the servers' sum
	Servers  []cpusample.Stats // each server's, in boot order
	// Generator is the generator's tree, or the agents' sum.
	Generator cpusample.Stats
	// The pinned cores' counters at the window's start and end; ok false
	// when a read failed or missed a CPU.
	ServerCores, GeneratorCores CoreWindow
	Who                         attrib.Report
	// ServerMemory is the servers' memory summed at each reading, and
	// ServerMemoryParts each one's; GeneratorMemory the generator's (the
	// agents' sum). Zero Stats where nothing was sampled.
	ServerMemory, GeneratorMemory memsample.Stats
	ServerMemoryParts             []memsample.Stats
}

// CoreWindow is one side's pinned cores read at both ends of a window.
type CoreWindow struct {
	Start, End     CoreSnap
	StartOK, EndOK bool
}

// Proc is the real Meter: it samples the process trees (cpusample),
// reads the pinned cores' counters (/proc/stat) at both ends of the
// window, and scans who ran on them (attrib).
func Proc() Meter { return procMeter{} }

type procMeter struct{}

type procRun struct {
	spec       Spec
	srv        *cpusample.Group
	genStop    func() cpusample.Stats
	scan       *attrib.Scan
	srvMem     *memsample.Group
	genMem     *memsample.Group
	srv0, gen0 CoreSnap
	okS0, okG0 bool
}

func (procMeter) Start(ctx context.Context, m Spec) Run {
	r := &procRun{spec: m}
	if len(m.Servers) > 0 {
		r.srv = cpusample.StartGroup(ctx, m.Every, m.Servers...)
	}
	if m.Agents {
		g := cpusample.StartGroup(ctx, m.Every, m.Generator...)
		r.genStop = func() cpusample.Stats { t, _ := g.Stop(); return t }
	} else {
		r.genStop = cpusample.Start(ctx, m.Every, m.Generator[0]).Stop
	}
	r.scan = attrib.Start(ctx, m.Every, m.Roots)
	if len(m.ServerMemory) > 0 {
		r.srvMem = memsample.StartGroup(ctx, m.MemoryEvery, m.ServerMemory...)
	}
	if len(m.GeneratorMemory) > 0 {
		r.genMem = memsample.StartGroup(ctx, m.MemoryEvery, m.GeneratorMemory...)
	}
	if r.srv != nil {
		r.srv0, r.okS0 = snapCores(m.ServerCPUs)
	}
	r.gen0, r.okG0 = snapCores(m.GeneratorCPUs)
	return r
}

func (r *procRun) Stop() Window {
	w := Window{External: r.srv == nil}
	if r.srv != nil {
		s1, ok := snapCores(r.spec.ServerCPUs)
		w.ServerCores = CoreWindow{Start: r.srv0, End: s1, StartOK: r.okS0, EndOK: ok}
	}
	g1, ok := snapCores(r.spec.GeneratorCPUs)
	w.GeneratorCores = CoreWindow{Start: r.gen0, End: g1, StartOK: r.okG0, EndOK: ok}
	w.Who = r.scan.Stop()
	if r.srv != nil {
		w.Server, w.Servers = r.srv.Stop()
	}
	w.Generator = r.genStop()
	if r.srvMem != nil {
		w.ServerMemory, w.ServerMemoryParts = r.srvMem.Stop()
	}
	if r.genMem != nil {
		w.GeneratorMemory, _ = r.genMem.Stop()
	}
	return w
}
