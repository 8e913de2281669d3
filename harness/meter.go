package harness

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// Meter measures a point's two sides over its window: each side's
// process trees (cpusample), how busy its pinned cores were and how much
// the hypervisor stole (/proc/stat), and who else ran on them (attrib).
// Start is called as the window opens and Stop as it ends; what Stop
// returns is raw, and sidesCPU makes the point's CPUStats of it, so the
// rules over a window are tested on recorded windows without a process.
// The real Meter is the default; a test gives its own (ProcRunner.Meter).
type Meter interface {
	Start(ctx context.Context, m MeterSpec) MeterRun
}

// MeterRun is one window being measured.
type MeterRun interface {
	Stop() Window
}

// MeterSpec is what a window measures.
type MeterSpec struct {
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
}

// CoreWindow is one side's pinned cores read at both ends of a window.
type CoreWindow struct {
	Start, End     coreSnap
	StartOK, EndOK bool
}

// procMeter is the real Meter.
type procMeter struct{}

type procMeterRun struct {
	spec       MeterSpec
	srv        *cpusample.Group
	genStop    func() cpusample.Stats
	scan       *attrib.Scan
	srv0, gen0 coreSnap
	okS0, okG0 bool
}

func (procMeter) Start(ctx context.Context, m MeterSpec) MeterRun {
	r := &procMeterRun{spec: m}
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
	if r.srv != nil {
		r.srv0, r.okS0 = snapCores(m.ServerCPUs)
	}
	r.gen0, r.okG0 = snapCores(m.GeneratorCPUs)
	return r
}

func (r *procMeterRun) Stop() Window {
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
	return w
}

// sidesCPU is each side's CPU over a window: the trees' CPU against the
// pinned cores, how busy the cores were and the steal, the two sides'
// use of each other's cores when the sets overlap, and who else ran on
// them. servers are each server's own share (when each: a target that
// lists its servers), with the set's busy, steal and attribution. For an external server, server is
// left for its metrics (externalCPU) and only the generator's is made.
func sidesCPU(w Window, srvSet, genSet pinning.CPUSet, each bool) (server, generator result.CPUStats, servers []result.CPUStats) {
	generator = cpuStats(w.Generator, len(genSet))
	g := w.GeneratorCores
	pinnedCPU(&generator, g.Start, g.End, g.StartOK, g.EndOK)
	if w.External {
		generator.Attribution = attribution(w.Who, genSet)
		return result.CPUStats{}, generator, nil
	}
	pinned := len(srvSet)
	server = cpuStats(w.Server, pinned)
	s := w.ServerCores
	pinnedCPU(&server, s.Start, s.End, s.StartOK, s.EndOK)
	attributeOverlap(&server, &generator, srvSet, genSet)
	server.Attribution = attribution(w.Who, srvSet)
	generator.Attribution = attribution(w.Who, genSet)
	if each {
		for _, st := range w.Servers {
			c := cpuStats(st, pinned)
			// The pinned CPUs are the servers' together: how busy they
			// were, and the steal, are the set's.
			c.PinnedBusy, c.StealFraction = server.PinnedBusy, server.StealFraction
			c.Attribution = server.Attribution
			servers = append(servers, c)
		}
	}
	return server, generator, servers
}
