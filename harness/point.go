package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/duet"
	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// pointRun is one point in flight: its files, port and processes.
type pointRun struct {
	pr   *ProcRunner
	spec PointSpec
	f    pointFiles
	addr target.Addr // port, port2, portN, workdir: the placeholders
	// srvs are the servers booted so far, in the order of booted (one,
	// named "server", unless the target lists servers).
	srvs     []supervise.Process
	booted   []target.Server
	side     generatorSide // the generator, or AGENTS' agents (newSide)
	throttle *pinning.Throttle
	// The point's server (a two-arm sweep's arm) and its window and
	// warm-up (ProcRunner.targetFor).
	target         target.Spec
	window, warmup time.Duration
	// srvCPUs and genCPUs are the point's sets: the plan's CPUs, or its
	// duet half's.
	srvCPUs, genCPUs pinning.CPUSet
	// fault is FAULT's signal in a resilience point (nil in any other).
	fault *faultRun
	// live is a warm point's arm (PointSpec.Warm): the boot that holds
	// the servers it measures and does not stop (warmarm.go); nil: the
	// point boots and stops its own. armDown: one of them was found
	// exited after the point.
	live    *pointRun
	armDown bool
	// readyCost and stopCost are the point's own servers' boot (start to
	// readiness) and stop (SIGTERM to exit and free ports).
	readyCost, stopCost time.Duration
	// prof is a profiled point's CPU profile (nil in any other).
	prof *cpuprof.Recording
	// memBase is each server's memory before the generator started,
	// memWindow the window's readings (memory.go).
	memBase   []meter.Baseline
	memWindow meter.Window
}

func (p *pointRun) fail(phase string, tailOf supervise.Process, format string, args ...any) error {
	e := &PointError{Phase: phase, Err: fmt.Errorf(format, args...)}
	if tailOf != nil {
		e.Tail = tailOf.Tail(tailLines)
	}
	return e
}

// runAs is the identity the point's servers start with: SRV_USER's for
// the head (or the only arm); nil, the harness's, for a two-arm sweep's
// base, whose code is trusted.
func (p *pointRun) runAs() *runas.User {
	if p.spec.Arm == result.ArmBase {
		return nil
	}
	return p.pr.o.RunAs
}

func (p *pointRun) interrupted(phase string) error {
	return &PointError{Phase: phase, Err: ErrPointInterrupted}
}

// ports gives the point its free ports and its {workdir}, a directory of
// the server's own inside the point's when the server runs as another
// user.
func (p *pointRun) ports() error {
	ports, err := p.pr.freePorts(max(2, p.target.PortsUsed()))
	if err != nil {
		return p.fail(PhaseFiles, nil, "%v", err)
	}
	p.addr.Port, p.addr.Port2, p.addr.Ports = ports[0], ports[1], ports[2:]
	p.addr.Host = p.pr.serverHost()
	if p.addr.WorkDir, err = filepath.Abs(p.f.dir); err != nil {
		return p.fail(PhaseFiles, nil, "work dir: %v", err)
	}
	if r := p.runAs(); r != nil {
		// The point's directory holds the generator's evidence (the
		// marker, load.json): a server of another user gets a directory
		// of its own inside it for {workdir}, and no write to the rest.
		if p.addr.WorkDir, err = r.StateDir(p.addr.WorkDir); err != nil {
			return p.fail(PhaseFiles, nil, "work dir: %v", err)
		}
	}
	return nil
}

func (p *pointRun) run(ctx context.Context, out *verdict.Outcome) error {
	pr := p.pr
	p.target, p.window, p.warmup = pr.targetFor(p.spec)
	p.srvCPUs, p.genCPUs = pr.o.CPUs.Server, pr.o.CPUs.Generator
	if h := p.spec.Half; h != nil {
		p.srvCPUs, p.genCPUs = h.Server, h.Generator
	}
	var err error
	if p.f, err = pr.files(p.spec); err != nil {
		return p.fail(PhaseFiles, nil, "work dir: %v", err)
	}
	if p.spec.Warm {
		if err := p.attachLive(); err != nil {
			return err
		}
	} else {
		if err := p.ports(); err != nil {
			return err
		}
		clock := pr.clock()
		start := clock.Now()
		err := p.boot(ctx)
		p.readyCost = clock.Now().Sub(start)
		if err != nil {
			return err
		}
	}
	p.prof = p.startProfile(ctx) // a profiled block's: perf attached, not yet sampling
	defer p.prof.Finish()
	p.fault = p.newFaultRun()
	p.memoryBaseline()
	if err := p.startGenerator(ctx); err != nil {
		return err
	}
	if err := p.waitMarker(ctx); err != nil {
		return err
	}
	p.measure(ctx, out)
	err = p.collect(ctx, out)
	p.recordMemory(out)
	p.recordFault(ctx, out)
	return err
}

// startGenerator starts the point's generator side (newSide), in the
// headroom probe's cgroup for that role.
func (p *pointRun) startGenerator(ctx context.Context) error {
	pr, spec := p.pr, p.spec
	url, err := p.target.URLFor(pr.o.Point.Scenario)
	if err != nil {
		return p.fail(PhaseGenerator, nil, "target: %v", err)
	}
	var cgroup string
	if spec.Role == result.RoleHeadroom {
		name := supervise.CgroupName("headroom", spec.Index)
		th, err := pinning.NewThrottle(name, pr.o.Schedule.HeadroomProbe*float64(len(p.genCPUs)))
		if err != nil {
			return p.fail(PhaseGenerator, nil, "headroom probe: cannot cap the generator: %v", err)
		}
		pr.mu.Lock()
		pr.cgroup = fmt.Sprintf("v%d", th.Version)
		pr.mu.Unlock()
		// Removed by stop, after the generator has stopped. A cgroup
		// left behind does not unmake the measurement.
		p.throttle = th
		cgroup = th.Path
	}
	url = target.Expand(url, p.addr)
	flags := pr.loadArgs(p.target, spec.Key, p.addr, url, p.window, p.warmup, p.f)
	p.side = p.newSide()
	if tail, err := p.side.Start(ctx, url, flags, cgroup); err != nil {
		return p.fail(PhaseGenerator, tail, "%v", err)
	}
	return nil
}

// waitMarker waits for the marker: every connection open and the warm-up
// over.
func (p *pointRun) waitMarker(ctx context.Context) error {
	pr, side, clock := p.pr, p.side, p.pr.clock()
	markerWait := side.MarkerWait()
	if p.spec.Gate != nil {
		markerWait += connectTimeout // the partner's connecting too
	}
	markerBy := clock.Now().Add(p.warmup + markerWait)
	for {
		if _, err := os.Stat(p.f.marker); err == nil {
			break
		}
		if g := p.spec.Gate; g != nil {
			if err := g.Poll(); err != nil {
				return p.fail(PhaseMarker, nil, "duet: %v", err)
			}
		}
		if why, tail := side.MarkerFailed(); why != "" {
			return p.fail(PhaseMarker, tail, "%s", why)
		}
		if ctx.Err() != nil {
			return p.interrupted(PhaseMarker)
		}
		if i, ok := p.exitedServer(); ok {
			return p.fail(PhaseMarker, p.srvs[i], "%s exited before the measured window (%s)", p.label(i), exitText(p.srvs[i]))
		}
		if why, tail := side.NoMarker(clock.Now().After(markerBy), markerWait); why != "" {
			if rf := p.refusal(); rf != "" {
				e := p.fail(PhaseMarker, tail, "%s", rf).(*PointError)
				e.Refused = true
				return e
			}
			return p.fail(PhaseMarker, tail, "%s", why)
		}
		clock.Sleep(20 * time.Millisecond)
	}
	if procs := side.Procs(); len(procs) > 0 { // none with AGENTS_LISTEN: remote
		p.noteGranted(&pr.generatorGranted, p.genCPUs, "generator", procs[0].Pid())
	}
	return nil
}

// refusal is the whole reason of a generator that stopped at its
// preflight on a refusal every point would meet (load.Refused), as its
// JSON says it, uncut; "" for any other failure, or without the file
// (agents report elsewhere).
func (p *pointRun) refusal() string {
	res, err := readLoad(p.f.json)
	if err != nil || !res.Summary.Refused {
		return ""
	}
	why := "the generator's preflight was refused, as it would be at every point: " + res.Summary.Failure
	if names := p.cluster().NameServers(res.Summary.Failure, p.addr); names != "" {
		why += " (" + names + ")"
	}
	return why
}

// measure samples both sides over the measured window, as process trees:
// the server's forks and a GENERATOR wrapper's real work are children.
// Several servers are sampled at the same instants, each its own tree:
// ServerCPU is their sum, and Servers each one's share.
func (p *pointRun) measure(ctx context.Context, out *verdict.Outcome) {
	m := meter.Spec{Every: SampleEvery, ServerCPUs: p.srvCPUs, GeneratorCPUs: p.genCPUs, Roots: p.attribRoots()}
	if !p.target.External {
		for _, s := range p.srvs {
			m.Servers = append(m.Servers, cpusample.Tree(s.Pid()))
		}
	}
	// The agents' trees are sampled at the same instants, as one side.
	// The window ends early when the side ends or any of its processes
	// exits.
	m.Agents = p.side.Group()
	genDone := []<-chan struct{}{p.side.Finished()}
	for _, g := range p.side.Procs() {
		m.Generator = append(m.Generator, cpusample.Tree(g.Pid()))
		genDone = append(genDone, g.Done())
	}
	p.memorySpec(&m)
	run := p.pr.meter().Start(ctx, m)
	capture := p.startCapture(ctx) // the server's metrics and profile
	p.prof.Enable()
	if p.target.External {
		p.measureExternal(ctx, out, run, firstDone(genDone...), capture)
		return
	}
	p.startFault(ctx)
	select {
	case <-p.pr.clock().After(p.window):
	case <-firstDone(genDone...):
	case <-p.anyServerDone():
	case <-ctx.Done():
	}
	capture.WindowEnded(ctx)
	p.prof.WindowEnded()
	var parts []result.CPUStats
	p.memWindow = run.Stop()
	out.ServerCPU, out.GeneratorCPU, parts = meter.Sides(p.memWindow, p.srvCPUs, p.genCPUs, p.target.Multi())
	if len(parts) > 0 {
		urls := p.servedURLs()
		for i, c := range parts {
			out.Servers = append(out.Servers, result.NamedCPU{Name: p.booted[i].Name, URL: urls[i], CPUStats: c})
		}
	}
	recordCapture(capture, out)
	p.recordProfile(out)
}

// collect waits for the generator side to end by itself after its window
// and reads its JSON.
func (p *pointRun) collect(ctx context.Context, out *verdict.Outcome) error {
	side := p.side
	wait := side.CollectWait()
	select {
	case <-side.Finished():
	case <-p.pr.clock().After(wait):
		why, tail := side.StillRunning(wait)
		return p.fail(PhaseCollect, tail, "%s", why)
	case <-ctx.Done():
		return p.interrupted(PhaseCollect)
	}
	if why, tail := side.Ended(out); why != "" {
		return p.fail(PhaseCollect, tail, "%s", why)
	}
	if i, ok := p.exitedServer(); ok {
		return p.fail(PhaseCollect, p.srvs[i], "%s exited during the point (%v)", p.label(i), p.srvs[i].ExitErr())
	}
	if why, tail := side.Failed(); why != "" {
		return p.fail(PhaseCollect, tail, "%s", why)
	}
	res, err := readLoad(p.f.json)
	if err != nil {
		why, tail := side.ResultFailed(err)
		return p.fail(PhaseCollect, tail, "%s", why)
	}
	out.Load = res
	return nil
}

// noteGranted reads back the affinity the kernel granted pid, the point's
// side asked for asked: the first of the first half's (or of a sweep
// that is no duet) goes into dst for RecordGranted; a duet's second half
// is checked here, its mismatch kept for RecordGranted's warnings.
func (p *pointRun) noteGranted(dst *pinning.CPUSet, asked pinning.CPUSet, side string, pid int) {
	pr := p.pr
	set, err := pinning.Granted(pid)
	if err != nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	switch {
	case p.spec.Half == nil || p.spec.Half.Name == duet.HalfA:
		if *dst == nil {
			*dst = set
		}
	case set.String() != asked.String():
		w := fmt.Sprintf("duet half %s: %s asked for CPUs %s but the kernel granted %s", p.spec.Half.Name, side, asked, set)
		if !slices.Contains(pr.halfWarnings, w) {
			pr.halfWarnings = append(pr.halfWarnings, w)
		}
	}
	if n, err := pinning.NoFile(pid); err == nil && (pr.noFile == 0 || n < pr.noFile) {
		pr.noFile = n
	}
}
