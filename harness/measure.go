package harness

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/verdict"
)

// SampleEvery is the CPU sampling period over the measured window.
const SampleEvery = cpusample.DefaultInterval

// window is a point's measured window (the measure stage): both sides
// sampled as process trees from the window's opening to its end (the
// server's forks and a GENERATOR wrapper's real work are children),
// several servers at the same instants, each its own tree (ServerCPU is
// their sum, Servers each one's share), the agents' trees as one side;
// the server's own metrics and profile taken around it; and the fault
// sent inside it. It ends early when the side or any of its processes
// ends, or a server exits (but the one a FAULT stops).
type window struct {
	meter   meter.Meter
	clock   Clock
	setup   pointSetup
	servers serverStage
	set     *serverSet
	gen     *generation
	fault   faultStage
	prof    *pointProfile
	capture scrape.WindowSpec
	roots   attrib.Roots
}

// measure measures the window that opened at opened, and returns what
// the meter saw (the memory's readings, for recordMemory).
func (w window) measure(ctx context.Context, opened time.Time, out *verdict.Outcome) meter.Window {
	run := w.meter.Start(ctx, w.spec())
	capture := scrape.StartWindow(ctx, w.capture)
	w.prof.enable()
	w.fault.start(ctx, opened)
	g := w.gen.side
	genDone := []<-chan struct{}{g.Done()}
	for _, p := range g.Procs() {
		genDone = append(genDone, p.Done())
	}
	select {
	case <-w.clock.After(w.setup.window):
	case <-firstDone(genDone...):
	case <-w.set.done(w.fault.faulted):
	case <-ctx.Done():
	}
	capture.WindowEnded(ctx)
	w.prof.windowEnded()
	mw := run.Stop()
	recordCapture(capture, out)
	w.servers.account(mw, w.setup, out)
	w.prof.record(out)
	return mw
}

// spec is what the meter samples: both sides' trees (none of an
// external server) for their CPU and, without the supervisors, their
// memory; the pinned sets; the point's own processes for attribution.
func (w window) spec() meter.Spec {
	s, g := w.setup, w.gen.side
	m := meter.Spec{Every: SampleEvery, ServerCPUs: s.srvCPUs, GeneratorCPUs: s.genCPUs, Roots: w.roots,
		Servers: w.set.trees(), Agents: g.Bounds().Group,
		MemoryEvery: MemoryEvery, ServerMemory: w.set.programs(), GeneratorMemory: memoryTrees(w.gen)}
	for _, p := range g.Procs() {
		m.Generator = append(m.Generator, cpusample.Tree(p.Pid()))
	}
	return m
}
