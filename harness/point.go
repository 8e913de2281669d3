package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/load"
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
	srvs     []*supervise.Proc
	booted   []target.Server
	gen      *supervise.Proc
	ag       *agentRun // AGENTS: the coordinator and its agents, in place of gen
	throttle *pinning.Throttle
	// The point's server (a two-arm sweep's arm) and its window and
	// warm-up (ProcRunner.targetFor).
	target         target.Spec
	window, warmup time.Duration
	// srvCPUs and genCPUs are the point's sets: the Options', or its
	// duet half's.
	srvCPUs, genCPUs pinning.CPUSet
	// fault is FAULT's signal in a resilience point (nil in any other).
	fault *faultRun
}

func (p *pointRun) fail(phase string, tailOf *supervise.Proc, format string, args ...any) error {
	e := &PointError{Phase: phase, Err: fmt.Errorf(format, args...)}
	if tailOf != nil {
		e.Tail = tailOf.Tail(tailLines)
	}
	return e
}

// runAs is the identity the point's servers start with: SRV_USER's for
// the head (or the only arm); nil, the harness's, for a two-arm sweep's
// base, whose code is trusted.
func (p *pointRun) runAs() *RunAs {
	if p.spec.Arm == result.ArmBase {
		return nil
	}
	return p.pr.o.RunAs
}

func (p *pointRun) interrupted(phase string) error {
	return &PointError{Phase: phase, Err: ErrPointInterrupted}
}

func (p *pointRun) run(ctx context.Context, out *verdict.Outcome) error {
	pr := p.pr
	p.target, p.window, p.warmup = pr.targetFor(p.spec)
	p.srvCPUs, p.genCPUs = pr.o.ServerCPUs, pr.o.GeneratorCPUs
	if h := p.spec.Half; h != nil {
		p.srvCPUs, p.genCPUs = h.Server, h.Generator
	}
	var err error
	if p.f, err = pr.files(p.spec); err != nil {
		return p.fail(PhaseFiles, nil, "work dir: %v", err)
	}
	ports, err := target.FreePortsN(max(2, p.target.PortsUsed()))
	if err != nil {
		return p.fail(PhaseFiles, nil, "%v", err)
	}
	p.addr.Port, p.addr.Port2, p.addr.Ports = ports[0], ports[1], ports[2:]
	p.addr.Host = pr.serverHost()
	if p.addr.WorkDir, err = filepath.Abs(p.f.dir); err != nil {
		return p.fail(PhaseFiles, nil, "work dir: %v", err)
	}
	if r := p.runAs(); r != nil {
		// The point's directory holds the generator's evidence (the
		// marker, load.json): a server of another user gets a directory
		// of its own inside it for {workdir}, and no write to the rest.
		if p.addr.WorkDir, err = r.stateDir(p.addr.WorkDir); err != nil {
			return p.fail(PhaseFiles, nil, "work dir: %v", err)
		}
	}
	if err := p.boot(ctx); err != nil {
		return err
	}
	p.fault = p.newFaultRun()
	if err := p.startGenerator(ctx); err != nil {
		return err
	}
	if err := p.waitMarker(ctx); err != nil {
		return err
	}
	p.measure(ctx, out)
	err = p.collect(ctx, out)
	p.recordFault(ctx, out)
	return err
}

// startGenerator starts the generator (in the headroom probe's cgroup for
// that role).
func (p *pointRun) startGenerator(ctx context.Context) error {
	pr, spec := p.pr, p.spec
	url, err := p.target.URLFor(pr.o.Scenario)
	if err != nil {
		return p.fail(PhaseGenerator, nil, "target: %v", err)
	}
	var cgroup string
	if spec.Role == result.RoleHeadroom {
		name := supervise.CgroupName("headroom", spec.Index)
		th, err := pinning.NewThrottle(name, pr.o.HeadroomProbe*float64(len(p.genCPUs)))
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
	if pr.o.Agents > 0 {
		return p.startAgents(ctx, target.Expand(url, p.addr), cgroup)
	}
	args := append(append([]string(nil), pr.generator[1:]...), pr.loadArgs(p.target, spec.Key, p.addr, target.Expand(url, p.addr), p.window, p.warmup, p.f)...)
	if p.fault != nil {
		args = append(args, p.fault.splitArgs...)
	}
	gate := filepath.Join(p.f.dir, "start.gate")
	if spec.Gate != nil {
		args = append(args, "--start-gate", gate)
	}
	gen, err := supervise.Start(ctx, supervise.Spec{
		Name: "generator", Path: pr.generator[0],
		Args:    args,
		Env:     []string{"GOMAXPROCS=" + strconv.Itoa(len(p.genCPUs))},
		Environ: ChildEnviron(os.Environ(), p.target.PassEnv, generatorEnvPrefixes),
		CPUs:    p.genCPUs,
		NoFile:  NoFileLimit,
		Cgroup:  cgroup, // joined before exec: capped from its first instruction, children too
		LogPath: p.f.genLog,
		Grace:   InterruptGrace(pr.grace),
	})
	if err != nil {
		return p.fail(PhaseGenerator, nil, "start generator: %v", err)
	}
	p.gen = gen
	if spec.Gate != nil {
		pids := []int{gen.Pid}
		for _, s := range p.srvs {
			pids = append(pids, s.Pid)
		}
		spec.Gate.register(spec.Half, gate, pids...)
	}
	return nil
}

// waitMarker waits for the marker: every connection open and the warm-up
// over.
func (p *pointRun) waitMarker(ctx context.Context) error {
	pr, gen := p.pr, p.gen
	markerWait := connectTimeout
	if p.ag != nil {
		markerWait = max(connectTimeout, pr.joinTimeout()+5*time.Second)
	}
	if p.spec.Gate != nil {
		markerWait += connectTimeout // the partner's connecting too
	}
	markerBy := time.Now().Add(p.warmup + markerWait)
	for {
		if _, err := os.Stat(p.f.marker); err == nil {
			break
		}
		if g := p.spec.Gate; g != nil {
			if err := g.poll(); err != nil {
				return p.fail(PhaseMarker, nil, "duet: %v", err)
			}
		}
		if p.ag != nil {
			if why, tail := p.agentsMarkerFailed(); why != "" {
				return p.fail(PhaseMarker, tail, "%s", why)
			}
		}
		switch {
		case ctx.Err() != nil:
			return p.interrupted(PhaseMarker)
		case p.anyExited():
			i, _ := p.exitedServer()
			return p.fail(PhaseMarker, p.srvs[i], "%s exited before the measured window (%s)", p.label(i), exitText(p.srvs[i]))
		case p.ag != nil:
			if time.Now().After(markerBy) {
				return p.fail(PhaseMarker, nil, "the coordinator created no measure marker within warm-up + %s", markerWait)
			}
		case gen.Exited():
			return p.fail(PhaseMarker, gen, "generator exited before creating its measure marker (%s)%s", exitText(gen), lastWords(gen))
		case time.Now().After(markerBy):
			return p.fail(PhaseMarker, gen, "generator created no measure marker within warm-up + %s", connectTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p.ag != nil {
		if len(p.ag.procs) > 0 { // none with AGENTS_LISTEN: remote
			p.noteGranted(&pr.generatorGranted, p.genCPUs, "generator", p.ag.procs[0].Pid)
		}
		return nil
	}
	p.noteGranted(&pr.generatorGranted, p.genCPUs, "generator", gen.Pid)
	return nil
}

// measure samples both sides over the measured window, as process trees:
// the server's forks and a GENERATOR wrapper's real work are children.
// Several servers are sampled at the same instants, each its own tree:
// ServerCPU is their sum, and Servers each one's share.
func (p *pointRun) measure(ctx context.Context, out *verdict.Outcome) {
	m := meter.Spec{Every: SampleEvery, ServerCPUs: p.srvCPUs, GeneratorCPUs: p.genCPUs, Roots: p.attribRoots()}
	if !p.target.External {
		for _, s := range p.srvs {
			m.Servers = append(m.Servers, cpusample.Tree(s.Pid))
		}
	}
	// The agents' trees are sampled at the same instants, as one side.
	var genDone <-chan struct{}
	if p.ag != nil {
		m.Generator, m.Agents, genDone = p.ag.trees(), true, p.ag.anyDone()
	} else {
		m.Generator, genDone = []cpusample.Source{cpusample.Tree(p.gen.Pid)}, p.gen.Done()
	}
	run := p.pr.meter().Start(ctx, m)
	capture := p.startCapture(ctx) // the server's metrics and profile
	if p.target.External {
		p.measureExternal(ctx, out, run, genDone, capture)
		return
	}
	p.startFault(ctx)
	windowEnd := time.NewTimer(p.window)
	select {
	case <-windowEnd.C:
	case <-genDone:
	case <-p.anyServerDone():
	case <-ctx.Done():
	}
	windowEnd.Stop()
	capture.windowEnded(ctx)
	var parts []result.CPUStats
	out.ServerCPU, out.GeneratorCPU, parts = meter.Sides(run.Stop(), p.srvCPUs, p.genCPUs, p.target.Multi())
	if len(parts) > 0 {
		urls := p.servedURLs()
		for i, c := range parts {
			out.Servers = append(out.Servers, result.NamedCPU{Name: p.booted[i].Name, URL: urls[i], CPUStats: c})
		}
	}
	capture.finish(out)
}

// collect waits for the generator to end by itself after its window and
// reads its JSON. A generator that exits 0 without writing one fails the
// point (the files were fresh, so nothing older can stand in).
func (p *pointRun) collect(ctx context.Context, out *verdict.Outcome) error {
	if p.ag != nil {
		return p.collectAgents(ctx, out)
	}
	gen := p.gen
	wait := exitTimeout
	if p.pr.o.Drop {
		// The drop check may wait load.DropTimeout for a server that no
		// longer answers: that is its finding (server_up false), not a
		// stuck generator.
		wait += load.DropTimeout
	}
	select {
	case <-gen.Done():
	case <-time.After(wait):
		return p.fail(PhaseCollect, gen, "generator still running %s after its window", wait)
	case <-ctx.Done():
		return p.interrupted(PhaseCollect)
	}
	if i, ok := p.exitedServer(); ok {
		return p.fail(PhaseCollect, p.srvs[i], "%s exited during the point (%v)", p.label(i), p.srvs[i].ExitErr())
	}
	if err := gen.ExitErr(); err != nil {
		return p.fail(PhaseCollect, gen, "generator failed (%v)", err)
	}
	res, err := readLoad(p.f.json)
	if err != nil {
		return p.fail(PhaseCollect, gen, "generator result: %v", err)
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
	case p.spec.Half == nil || p.spec.Half.Name == HalfA:
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
