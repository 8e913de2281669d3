package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
)

// NoFileLimit is the RLIMIT_NOFILE both children get: every socket is a
// file on both sides.
const NoFileLimit = 1 << 16

// SampleEvery is the CPU sampling period over the measured window.
const SampleEvery = cpusample.DefaultInterval

// Bounds on the phases of a point that have no knob, so that a stuck child
// fails its point instead of hanging the sweep.
const (
	connectTimeout = 60 * time.Second // spawn to marker, on top of the warm-up
	exitTimeout    = 30 * time.Second // window end to the generator's exit
	tailLines      = 30
)

// ProcRunner measures points with real processes: a dedicated server per
// point pinned to the server CPUs, the generator pinned to its own, both
// sampled from the generator's marker to the end of its window.
type ProcRunner struct {
	o         *Plan
	agents    AgentsEnv
	target    target.Spec
	generator []string // argv before the load flags
	ready     time.Duration
	grace     time.Duration

	base *target.Spec // a two-arm sweep's base arm (PointSpec.Arm), else nil

	mu               sync.Mutex
	serverGranted    pinning.CPUSet
	generatorGranted pinning.CPUSet
	noFile           uint64
	cgroup           string // the headroom probe's cgroup version, once used
	halfWarnings     []string

	// Secrets are redacted from the point's files when it ends (scrub).
	Secrets *redact.Set

	bg   sync.WaitGroup // stops left running by an interrupted point
	late []string       // warnings found after the result was written

	hub    *agents.Hub // AGENTS_LISTEN: the remote agents' sessions, for the whole sweep
	hubLog *syncWriter // its coordinator.log in the work dir
}

// NewProcRunner prepares the runner for the plan's points (its Target is
// the head's server); the generator defaults to this executable's own
// `load` subcommand.
func NewProcRunner(o *Plan, ag AgentsEnv) (*ProcRunner, error) {
	t := o.Target
	gen := strings.Fields(o.Generator)
	if len(gen) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("GENERATOR: find this executable for `load`: %w", err)
		}
		gen = []string{self, "load"}
	}
	ready, grace := t.Durations()
	if o.ReadyTimeout > 0 {
		ready = o.ReadyTimeout
	}
	return &ProcRunner{o: o, agents: ag, target: t, generator: gen, ready: ready, grace: grace}, nil
}

// SetBase gives a two-arm sweep's runner its base arm: points with Arm
// ArmBase boot it, with the same pinning, limits and generator as the
// head. The readiness timeout and stop grace are the longer of the two
// targets' (unless --ready-timeout set one).
func (pr *ProcRunner) SetBase(t target.Spec) {
	pr.base = &t
	ready, grace := t.Durations()
	if pr.o.ReadyTimeout <= 0 {
		pr.ready = max(pr.ready, ready)
	}
	pr.grace = max(pr.grace, grace)
}

// targetFor is the server a point boots, and its window and warm-up.
func (pr *ProcRunner) targetFor(spec PointSpec) (t target.Spec, window, warmup time.Duration) {
	t, window, warmup = pr.target, pr.o.Duration, pr.o.Warmup
	if spec.Arm == ArmBase && pr.base != nil {
		t = *pr.base
	}
	if spec.Duration > 0 {
		window, warmup = spec.Duration, spec.Warmup
	}
	return t, window, warmup
}

// RecordGranted copies the affinities the kernel granted (read back from
// the first point that booted each side) into r, and warns when they
// differ from the request.
func (pr *ProcRunner) RecordGranted(r *Result) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	r.Meta.Pinning.ServerGranted = pr.serverGranted.Ints()
	r.Meta.Pinning.GeneratorGranted = pr.generatorGranted.Ints()
	if pr.noFile > 0 {
		r.Meta.Pinning.NoFileLimit = pr.noFile
	}
	if r.HeadroomProbe != nil {
		r.HeadroomProbe.Cgroup = pr.cgroup
	}
	if pr.serverGranted != nil && pr.serverGranted.String() != pr.o.ServerCPUs.String() {
		r.Warn(fmt.Sprintf("server asked for CPUs %s but the kernel granted %s", pr.o.ServerCPUs, pr.serverGranted))
	}
	if pr.generatorGranted != nil && pr.generatorGranted.String() != pr.o.GeneratorCPUs.String() {
		r.Warn(fmt.Sprintf("generator asked for CPUs %s but the kernel granted %s", pr.o.GeneratorCPUs, pr.generatorGranted))
	}
	for _, w := range pr.halfWarnings {
		r.Warn(w)
	}
}

// pointFiles are one point's paths in the work dir.
type pointFiles struct{ dir, serverLog, genLog, marker, json string }

// files makes the point's directory, fresh: whatever an earlier run with
// the same --work-dir left under the same name (a load.json, a marker) is
// removed first, so an old figure can never pass for this point's.
func (pr *ProcRunner) files(spec PointSpec) (pointFiles, error) {
	k := spec.Key
	dir := filepath.Join(pr.o.WorkDir, fmt.Sprintf("point-%03d-%s-b%d-c%d-r%d", spec.Index, spec.Role, k.Batch, k.Connections, k.Rep))
	if err := os.RemoveAll(dir); err != nil {
		return pointFiles{}, fmt.Errorf("remove the stale %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return pointFiles{}, err
	}
	f := pointFiles{
		dir:       dir,
		serverLog: filepath.Join(dir, "server.log"),
		genLog:    filepath.Join(dir, "generator.log"),
		marker:    filepath.Join(dir, "measure.marker"),
		json:      filepath.Join(dir, "load.json"),
	}
	for _, stale := range []string{f.marker, f.json} {
		if _, err := os.Lstat(stale); err == nil {
			return pointFiles{}, fmt.Errorf("%s exists before the point ran", stale)
		}
	}
	return f, nil
}

// Phases of a point, named by PointError.
const (
	PhaseFiles     = "files"     // the point's fresh directory and port
	PhaseBoot      = "boot"      // starting the server
	PhaseReady     = "ready"     // waiting for its readiness probe
	PhaseGenerator = "generator" // starting the generator
	PhaseMarker    = "marker"    // waiting for the measure marker
	PhaseCollect   = "collect"   // the generator's exit and its JSON
	PhaseStop      = "stop"      // stopping the server
)

// ErrPointInterrupted is the cause of a PointError when the sweep's
// context ended during the point.
var ErrPointInterrupted = errors.New("interrupted")

// PointError is why a point failed: the phase and the reason (its text is
// the point's fail_reason), and the log tail that explains it.
type PointError struct {
	Phase string
	Err   error
	Tail  string
}

func (e *PointError) Error() string { return e.Err.Error() }
func (e *PointError) Unwrap() error { return e.Err }

// MaxInterruptGrace bounds the SIGTERM-to-SIGKILL grace of every stop
// after an interrupt, whatever the target's stop_grace: CI cancellation
// gives a job seconds, and the partial result must be written by then.
const MaxInterruptGrace = 2 * time.Second

// InterruptGrace is the grace a stop gets once the sweep was interrupted:
// the target's stop_grace, at most MaxInterruptGrace.
func InterruptGrace(stopGrace time.Duration) time.Duration {
	return min(stopGrace, MaxInterruptGrace)
}

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
}

// RunPoint measures one point in its phases — boot (the server),
// ready, generator, marker, the measured window (measure), collect — then
// stops both sides. Every failure becomes a failed Outcome (a PointError's
// text); nothing here stops the sweep.
//
// When ctx ends during the point, RunPoint returns at once with
// Interrupted set and leaves the stopping (with InterruptGrace) to a
// goroutine that Drain waits for: the caller writes its partial result
// first.
func (pr *ProcRunner) RunPoint(ctx context.Context, spec PointSpec) (out Outcome) {
	out.StartedAt = time.Now().UTC()
	p := &pointRun{pr: pr, spec: spec}
	err := p.run(ctx, &out)
	if spec.Gate != nil {
		spec.Gate.abandon() // its partner waits no longer (a no-op once open)
	}
	if ctx.Err() != nil {
		// Interrupted: a point the interrupt cut short is no measurement
		// (one that finished its window before keeps its figures).
		if err != nil {
			out.Interrupted = true
			out.FailReason = "interrupted"
			if !errors.Is(err, ErrPointInterrupted) {
				out.FailReason = "interrupted: " + err.Error()
			}
			out.Load = nil
		}
		pr.bg.Add(1)
		go func() {
			defer pr.bg.Done()
			esc, escaped, _ := p.stop(ctx, InterruptGrace(pr.grace))
			p.scrub()
			pr.mu.Lock()
			defer pr.mu.Unlock()
			if len(esc) > 0 {
				pr.late = append(pr.late, fmt.Sprintf("point %d: %s did not exit within its grace after SIGTERM (%s after the interrupt) and was SIGKILLed",
					spec.Index, strings.Join(esc, " and "), InterruptGrace(pr.grace)))
			}
			if w := escapedWarning(Point{Index: spec.Index, Escaped: escaped}); w != "" {
				pr.late = append(pr.late, w)
			}
		}()
		out.Wall = time.Since(out.StartedAt)
		return out
	}
	esc, escaped, stopErr := p.stop(ctx, pr.grace)
	out.Escalated, out.Escaped = esc, escaped
	if err == nil && stopErr != nil {
		err = &PointError{Phase: PhaseStop, Err: fmt.Errorf("stop server: %w", stopErr)}
	}
	if err != nil {
		out.FailReason = err.Error()
		out.Load = nil
		var pe *PointError
		if errors.As(err, &pe) && pe.Tail != "" {
			out.LogTail = pe.Tail
		} else if len(p.srvs) > 0 {
			out.LogTail = p.srvs[0].Tail(tailLines)
		}
	}
	p.scrub()
	out.Wall = time.Since(out.StartedAt)
	return out
}

// Drain waits (at most limit) for the stops RunPoint left running after an
// interrupt, and returns what they found worth a warning (escalations to
// SIGKILL) that the result written before could not hold.
func (pr *ProcRunner) Drain(limit time.Duration) []string {
	done := make(chan struct{})
	go func() { pr.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	late := pr.late
	pr.late = nil
	return late
}

func (p *pointRun) fail(phase string, tailOf *supervise.Proc, format string, args ...any) error {
	e := &PointError{Phase: phase, Err: fmt.Errorf(format, args...)}
	if tailOf != nil {
		e.Tail = tailOf.Tail(tailLines)
	}
	return e
}

func (p *pointRun) interrupted(phase string) error {
	return &PointError{Phase: phase, Err: ErrPointInterrupted}
}

// exitText is a child's exit for a reason: its error, or "exit status 0".
func exitText(pr *supervise.Proc) string {
	if err := pr.ExitErr(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}

func (p *pointRun) run(ctx context.Context, out *Outcome) error {
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
	if err := p.boot(ctx); err != nil {
		return err
	}
	if err := p.startGenerator(ctx); err != nil {
		return err
	}
	if err := p.waitMarker(ctx); err != nil {
		return err
	}
	p.measure(ctx, out)
	return p.collect(ctx, out)
}

// boot starts the servers, in order, each under its own supervisor pinned
// to the server CPUs with its own log, then waits for each one's readiness
// probe in the same order: all are started first, as a cluster's node may
// only be ready once its peers are up (a JetStream node's /healthz waits
// for the meta group's quorum). A server that exits or is not ready fails
// the point with its name and log tail.
func (p *pointRun) boot(ctx context.Context) error {
	pr, addr := p.pr, p.addr
	if p.target.External {
		return p.readyExternal(ctx) // nothing to boot, nothing to stop later
	}
	p.booted = p.target.Booted()
	for i, s := range p.booted {
		if len(s.Command) == 0 {
			return p.fail(PhaseBoot, nil, "boot %s: no command", p.label(i))
		}
		argv := make([]string, len(s.Command))
		for j, a := range s.Command {
			argv[j] = target.Expand(a, addr)
		}
		var env []string
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			env = append(env, k+"="+target.Expand(s.Env[k], addr))
		}
		srv, err := supervise.Start(ctx, supervise.Spec{
			Name: p.label(i), Path: argv[0], Args: argv[1:], Env: env, Dir: p.target.Dir,
			CPUs: p.srvCPUs, NoFile: NoFileLimit, LogPath: p.serverLog(i),
			Grace: InterruptGrace(pr.grace), // used only when ctx ends: an interrupt
		})
		if err != nil {
			return p.fail(PhaseBoot, nil, "boot %s: %v", p.label(i), err)
		}
		p.srvs = append(p.srvs, srv)
	}
	deadline := time.Now().Add(pr.ready)
	for i, s := range p.booted {
		srv := p.srvs[i]
		probe, err := supervise.ParseProbe(target.Expand(s.Ready, addr))
		if err != nil {
			return p.fail(PhaseReady, nil, "target %s: %v", p.readyField(i), err)
		}
		// One readiness budget for all: the later ones have had the time
		// the earlier took to come up.
		if err := supervise.WaitReady(ctx, srv, probe, max(time.Until(deadline), time.Second)); err != nil {
			if ctx.Err() != nil {
				return p.interrupted(PhaseReady)
			}
			return p.fail(PhaseReady, srv, "%s never became ready: %v", p.label(i), err)
		}
		// Before any other has exited: one that died while a later one
		// came up fails the point by its own name.
		for j := range i {
			if p.srvs[j].Exited() {
				return p.fail(PhaseReady, p.srvs[j], "%s exited while %s came up (%s)", p.label(j), p.label(i), exitText(p.srvs[j]))
			}
		}
	}
	p.noteGranted(&pr.serverGranted, p.srvCPUs, "server", p.srvs[0].Pid)
	return nil
}

// label names server i in messages: "server" for a one-server target,
// "server NAME" for one of several.
func (p *pointRun) label(i int) string {
	if !p.target.Multi() {
		return "server"
	}
	return "server " + p.booted[i].Name
}

func (p *pointRun) readyField(i int) string {
	if !p.target.Multi() {
		return "ready"
	}
	return fmt.Sprintf("servers[%d].ready", i)
}

// serverLog is server i's log: server.log, or server-NAME.log for one of
// several.
func (p *pointRun) serverLog(i int) string {
	if !p.target.Multi() {
		return p.f.serverLog
	}
	return filepath.Join(p.f.dir, "server-"+p.booted[i].Name+".log")
}

// exitedServer is the first server that has exited, if any.
func (p *pointRun) exitedServer() (int, bool) {
	for i, s := range p.srvs {
		if s.Exited() {
			return i, true
		}
	}
	return 0, false
}

// anyServerDone is closed when the first server exits.
func (p *pointRun) anyServerDone() <-chan struct{} {
	var chs []<-chan struct{}
	for _, s := range p.srvs {
		chs = append(chs, s.Done())
	}
	return firstDone(chs...)
}

// firstDone is closed when the first of chs is.
func firstDone(chs ...<-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	var once sync.Once
	for _, c := range chs {
		go func() {
			<-c
			once.Do(func() { close(done) })
		}()
	}
	return done
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
	if spec.Role == RoleHeadroom {
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
	gate := filepath.Join(p.f.dir, "start.gate")
	if spec.Gate != nil {
		args = append(args, "--start-gate", gate)
	}
	gen, err := supervise.Start(ctx, supervise.Spec{
		Name: "generator", Path: pr.generator[0],
		Args:    args,
		Env:     []string{"GOMAXPROCS=" + strconv.Itoa(len(p.genCPUs))},
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
			return p.fail(PhaseMarker, gen, "generator exited before creating its measure marker (%s)", exitText(gen))
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
func (p *pointRun) measure(ctx context.Context, out *Outcome) {
	gen := p.gen
	var trees []cpusample.Source
	for _, s := range p.srvs {
		trees = append(trees, cpusample.Tree(s.Pid))
	}
	var srvS *cpusample.Group
	if !p.target.External {
		srvS = cpusample.StartGroup(ctx, SampleEvery, trees...)
	}
	// The agents' trees are sampled at the same instants, as one side.
	var genStop func() cpusample.Stats
	var genDone <-chan struct{}
	if p.ag != nil {
		g := cpusample.StartGroup(ctx, SampleEvery, p.ag.trees()...)
		genStop = func() cpusample.Stats { t, _ := g.Stop(); return t }
		genDone = p.ag.anyDone()
	} else {
		genStop, genDone = cpusample.Start(ctx, SampleEvery, cpusample.Tree(gen.Pid)).Stop, gen.Done()
	}
	capture := p.startCapture(ctx) // the server's metrics and profile
	if p.target.External {
		p.measureExternal(ctx, out, genStop, genDone, capture)
		return
	}
	scan := attrib.Start(ctx, SampleEvery, p.attribRoots())
	srvCores0, okS0 := snapCores(p.srvCPUs)
	genCores0, okG0 := snapCores(p.genCPUs)
	windowEnd := time.NewTimer(p.window)
	select {
	case <-windowEnd.C:
	case <-genDone:
	case <-p.anyServerDone():
	case <-ctx.Done():
	}
	windowEnd.Stop()
	capture.windowEnded(ctx)
	srvCores1, okS1 := snapCores(p.srvCPUs)
	genCores1, okG1 := snapCores(p.genCPUs)
	who := scan.Stop()
	total, parts := srvS.Stop()
	pinned := len(p.srvCPUs)
	out.ServerCPU = cpuStats(total, pinned)
	out.GeneratorCPU = cpuStats(genStop(), len(p.genCPUs))
	pinnedCPU(&out.ServerCPU, srvCores0, srvCores1, okS0, okS1)
	pinnedCPU(&out.GeneratorCPU, genCores0, genCores1, okG0, okG1)
	attributeOverlap(&out.ServerCPU, &out.GeneratorCPU, p.srvCPUs, p.genCPUs)
	out.ServerCPU.Attribution = attribution(who, p.srvCPUs)
	out.GeneratorCPU.Attribution = attribution(who, p.genCPUs)
	if p.target.Multi() {
		for i, st := range parts {
			c := cpuStats(st, pinned)
			// The pinned CPUs are the servers' together: how busy they
			// were, and the steal, are the set's.
			c.PinnedBusy, c.StealFraction = out.ServerCPU.PinnedBusy, out.ServerCPU.StealFraction
			c.Attribution = out.ServerCPU.Attribution
			out.Servers = append(out.Servers, NamedCPU{Name: p.booted[i].Name, CPUStats: c})
		}
	}
	capture.finish(out)
}

// anyExited reports whether a server has exited.
func (p *pointRun) anyExited() bool {
	_, ok := p.exitedServer()
	return ok
}

// collect waits for the generator to end by itself after its window and
// reads its JSON. A generator that exits 0 without writing one fails the
// point (the files were fresh, so nothing older can stand in).
func (p *pointRun) collect(ctx context.Context, out *Outcome) error {
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

// stop stops the generator, removes the headroom cgroup, stops the server
// and waits for its port, each with grace; it returns the sides that had
// to be SIGKILLed, the processes that escaped containment (killed by
// Stop), and the server's stop error (the generator's does not unmake a
// point whose JSON was read). An interrupt (ctx) cuts a long grace short:
// see stopProc.
func (p *pointRun) stop(ctx context.Context, grace time.Duration) (escalated []string, escaped []EscapedProcess, err error) {
	if p.gen != nil {
		if esc, _ := stopProc(ctx, p.gen, grace); esc {
			escalated = append(escalated, "generator")
		}
		escaped = append(escaped, escapedOf(p.gen)...)
	}
	if p.ag != nil {
		esc, escd := p.stopAgents(ctx, grace)
		escalated, escaped = append(escalated, esc...), append(escaped, escd...)
	}
	if p.throttle != nil {
		_ = p.throttle.Remove()
	}
	// The servers in reverse order, each with its own grace: a cluster's
	// later nodes were started last. The first stop error is the point's.
	for i := len(p.srvs) - 1; i >= 0; i-- {
		esc, serr := stopProc(ctx, p.srvs[i], grace)
		if esc {
			escalated = append(escalated, p.label(i))
		}
		if serr != nil && err == nil {
			err = fmt.Errorf("%s: %w", p.label(i), serr)
			if !p.target.Multi() {
				err = serr
			}
		}
		escaped = append(escaped, escapedOf(p.srvs[i])...)
	}
	if len(p.srvs) > 0 {
		portWait := grace
		if ctx.Err() != nil {
			portWait = InterruptGrace(grace)
		}
		// Every port a server's command, env or ready names.
		var named []int
		for _, s := range p.booted {
			all := strings.Join(append(slices.Clone(s.Command), s.Ready), " ")
			for _, v := range s.Env {
				all += " " + v
			}
			for _, n := range target.PortsNamed(all) {
				if !slices.Contains(named, n) {
					named = append(named, n)
				}
			}
		}
		if !slices.Contains(named, 1) {
			named = append(named, 1)
		}
		slices.Sort(named)
		for _, n := range named {
			if port := p.addr.PortN(n); port > 0 {
				_ = supervise.WaitPortFree(net.JoinHostPort(cmp.Or(p.addr.Host, "127.0.0.1"), strconv.Itoa(port)), portWait)
			}
		}
	}
	return escalated, escaped, err
}

// stopProc is proc.Stop(grace), except that an interrupt arriving while
// it waits out the grace bounds the wait to InterruptGrace from then on,
// then kills the tree (Proc.KillTree): a stop already begun cannot be given
// a shorter grace, and a server ignoring SIGTERM with a long stop_grace
// would otherwise hold the interrupted harness for all of it. It reports
// whether the process had to be SIGKILLed.
func stopProc(ctx context.Context, proc *supervise.Proc, grace time.Duration) (escalated bool, err error) {
	done := make(chan error, 1)
	go func() { done <- proc.Stop(grace) }()
	select {
	case err = <-done:
		return proc.Escalated(), err
	case <-ctx.Done():
	}
	t := time.NewTimer(InterruptGrace(grace))
	defer t.Stop()
	select {
	case err = <-done:
		return proc.Escalated(), err
	case <-t.C:
	}
	// Stop, still waiting, sees the exit and sweeps.
	proc.KillTree()
	return true, <-done
}

// scrub redacts the point's files once its processes are gone: what the
// server or the generator printed (a config with a secret in it) stays in
// the work dir only while the point runs.
func (p *pointRun) scrub() {
	if p.f.dir == "" || p.pr.Secrets.Len() == 0 {
		return
	}
	paths := []string{p.f.genLog, p.f.json}
	if p.ag != nil {
		for i := range p.ag.procs {
			paths = append(paths, p.agentLog(i))
		}
	}
	if len(p.booted) == 0 {
		paths = append(paths, p.f.serverLog)
	}
	for i := range p.booted {
		paths = append(paths, p.serverLog(i))
	}
	for _, path := range paths {
		if err := RedactFile(path, p.pr.Secrets); err != nil {
			p.pr.mu.Lock()
			p.pr.late = append(p.pr.late, fmt.Sprintf("point %d: could not redact %s: %v", p.spec.Index, path, err))
			p.pr.mu.Unlock()
		}
	}
}

// loadArgs are the `ceiling load` flags of one point (the GENERATOR
// contract). The connect strategy is pinned explicitly: bounded, 32 in
// flight, so the high rungs are not an auth storm.
func (pr *ProcRunner) loadArgs(tg target.Spec, k PointKey, addr target.Addr, url string, window, warmup time.Duration, f pointFiles) []string {
	a := []string{
		"--scenario", pr.o.Scenario,
		"--url", url,
		"--connections", strconv.Itoa(k.Connections),
		"--batch", strconv.Itoa(k.Batch),
		"--record-size", strconv.Itoa(pr.o.RecordSize),
		"--duration", window.String(),
		"--warmup", warmup.String(),
		"--connect-strategy", "bounded",
		"--connect-concurrency", strconv.Itoa(knob.ConnectConcurrency),
		"--measure-marker", f.marker,
		"--json", f.json,
		"--quiet",
	}
	if blk, err := tg.Block(pr.o.Scenario); err == nil {
		args := blk.Args()
		for i := 0; i < len(args); i++ {
			if _, multi := blk.(load.MultiURLBlock); multi && tg.URL != "" && args[i] == "--url" && i+1 < len(args) {
				i++ // the sweep's --url replaced the block's servers
				continue
			}
			a = append(a, target.Expand(args[i], addr))
		}
	}
	if s := pr.o.SourceAddrs; s != "" && s != load.SourceAuto {
		a = append(a, "--source-addrs", s)
	}
	if pr.o.Drop {
		a = append(a, "--drop")
		// The target's own ready probe, when the generator can poll it
		// (a log: probe it cannot): how soon the server answers again.
		if r := target.Expand(tg.Ready, addr); strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "https://") || strings.HasPrefix(r, "tcp:") {
			a = append(a, "--drop-probe", r)
		}
	}
	return a
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

// readLoad reads and checks the generator's JSON document.
func readLoad(path string) (*load.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no JSON written: %w", err)
	}
	var r load.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.SchemaVersion != load.SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, want %d", path, r.SchemaVersion, load.SchemaVersion)
	}
	return &r, nil
}

// cpuStats is one side's sampled CPU against its pinned cores.
func cpuStats(s cpusample.Stats, pinned int) CPUStats {
	c := CPUStats{
		Samples:       s.Samples,
		MeanCores:     s.MeanCores,
		P95Cores:      s.P95Cores,
		PinnedCores:   pinned,
		UserSeconds:   s.UserSeconds,
		SystemSeconds: s.SystemSeconds,
	}
	c.FractionMean, c.FractionP95 = s.Fraction(pinned)
	return c
}
