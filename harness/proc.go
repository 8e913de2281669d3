package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
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
	agents    agentside.Env
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
	// Meter measures each point's window; nil: the real one, over
	// /proc and the process trees.
	Meter meter.Meter
	// Clock is the points' time, Starter what starts their processes;
	// nil: the wall clock, and supervise's.
	Clock   Clock
	Starter Starter
	// FreePorts gives a point its n free loopback ports; nil:
	// target.FreePortsN.
	FreePorts func(n int) ([]int, error)
	// Profiler records the profiled points' CPU (harness/cpuprof); nil:
	// one over the machine's own perf, made at the first profiled point.
	Profiler *cpuprof.Profiler

	bg   sync.WaitGroup // stops left running by an interrupted point
	late []string       // warnings found after the result was written

	// live are a two-arm sweep's warm arms: their servers kept up
	// between points (warmarm.go), by arm.
	live map[string]*liveArm

	hub    *agents.Hub    // AGENTS_LISTEN: the remote agents' sessions, for the whole sweep
	hubLog io.WriteCloser // its coordinator.log in the work dir
}

// NewProcRunner prepares the runner for the plan's points (its Target is
// the head's server); the generator defaults to this executable's own
// `load` subcommand.
func NewProcRunner(o *Plan, ag agentside.Env) (*ProcRunner, error) {
	t := o.Target
	gen := strings.Fields(o.Point.Generator)
	if len(gen) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("GENERATOR: find this executable for `load`: %w", err)
		}
		gen = []string{self, "load"}
	}
	ready, grace := t.Durations()
	if o.Point.ReadyTimeout > 0 {
		ready = o.Point.ReadyTimeout
	}
	return &ProcRunner{o: o, agents: ag, target: t, generator: gen, ready: ready, grace: grace, live: map[string]*liveArm{}}, nil
}

// SetBase gives a two-arm sweep's runner its base arm: points with Arm
// ArmBase boot it, with the same pinning, limits and generator as the
// head. The readiness timeout and stop grace are the longer of the two
// targets' (unless --ready-timeout set one).
func (pr *ProcRunner) SetBase(t target.Spec) {
	pr.base = &t
	ready, grace := t.Durations()
	if pr.o.Point.ReadyTimeout <= 0 {
		pr.ready = max(pr.ready, ready)
	}
	pr.grace = max(pr.grace, grace)
}

// meter is the runner's Meter.
func (pr *ProcRunner) meter() meter.Meter {
	if pr.Meter == nil {
		return meter.Proc()
	}
	return pr.Meter
}

// clock is the runner's Clock.
func (pr *ProcRunner) clock() Clock {
	if pr.Clock == nil {
		return wallClock{}
	}
	return pr.Clock
}

// freePorts is n free loopback ports, from the runner's FreePorts.
func (pr *ProcRunner) freePorts(n int) ([]int, error) {
	if pr.FreePorts == nil {
		return target.FreePortsN(n)
	}
	return pr.FreePorts(n)
}

// starter is the runner's Starter.
func (pr *ProcRunner) starter() Starter {
	if pr.Starter == nil {
		return procStarter{}
	}
	return pr.Starter
}

// targetFor is the server a point boots, and its window and warm-up.
func (pr *ProcRunner) targetFor(spec PointSpec) (t target.Spec, window, warmup time.Duration) {
	t, window, warmup = pr.target, pr.o.Point.Duration, pr.o.Point.Warmup
	if spec.Arm == result.ArmBase && pr.base != nil {
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
func (pr *ProcRunner) RecordGranted(r *result.Result) {
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
	if pr.serverGranted != nil && pr.serverGranted.String() != pr.o.CPUs.Server.String() {
		r.Warn(fmt.Sprintf("server asked for CPUs %s but the kernel granted %s", pr.o.CPUs.Server, pr.serverGranted))
	}
	if pr.generatorGranted != nil && pr.generatorGranted.String() != pr.o.CPUs.Generator.String() {
		r.Warn(fmt.Sprintf("generator asked for CPUs %s but the kernel granted %s", pr.o.CPUs.Generator, pr.generatorGranted))
	}
	for _, w := range pr.halfWarnings {
		r.Warn(w)
	}
	if w := pr.uncheckedAgents(); w != "" {
		r.Warn(w)
	}
}

// uncheckedAgents warns of remote agents whose counts nothing checks: the
// target names no server counter for the scenario (metrics.counts).
func (pr *ProcRunner) uncheckedAgents() string {
	if pr.o.Agents.Listen == "" {
		return ""
	}
	if m := pr.target.Metrics; m != nil && m.Counts[pr.o.Point.Scenario] != "" {
		return ""
	}
	return fmt.Sprintf("AGENTS_LISTEN: the target names no server counter for scenario %s (metrics.counts), so nothing checks the remote agents' counts against the server's own (docs/targets.md, \"Server metrics\")", pr.o.Point.Scenario)
}

// pointFiles are one point's paths in the work dir.
type pointFiles struct{ dir, serverLog, genLog, marker, json string }

// files makes the point's directory, fresh: whatever an earlier run with
// the same --work-dir left under the same name (a load.json, a marker) is
// removed first, so an old figure can never pass for this point's.
func (pr *ProcRunner) files(spec PointSpec) (pointFiles, error) {
	k := spec.Key
	dir := filepath.Join(pr.o.Point.WorkDir, fmt.Sprintf("point-%03d-%s-b%d-c%d-r%d", spec.Index, spec.Role, k.Batch, k.Connections, k.Rep))
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
	// Refused: the generator's preflight was refused as every point's
	// would be (load.Refused): the sweep stops.
	Refused bool
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

// RunPoint measures one point in its phases — boot (the server),
// ready, generator, marker, the measured window (measure), collect — then
// stops both sides. Every failure becomes a failed verdict.Outcome (a PointError's
// text); nothing here stops the sweep.
//
// When ctx ends during the point, RunPoint returns at once with
// Interrupted set and leaves the stopping (with InterruptGrace) to a
// goroutine that Drain waits for: the caller writes its partial result
// first.
func (pr *ProcRunner) RunPoint(ctx context.Context, spec PointSpec) (out verdict.Outcome) {
	out.StartedAt = pr.clock().Now().UTC()
	p := &pointRun{pr: pr, spec: spec}
	err := p.run(ctx, &out)
	if spec.Gate != nil {
		spec.Gate.Abandon() // its partner waits no longer (a no-op once open)
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
			if w := (result.Point{Index: spec.Index, Escaped: escaped}).EscapedWarning(); w != "" {
				pr.late = append(pr.late, w)
			}
		}()
		out.Wall = pr.clock().Now().Sub(out.StartedAt)
		return out
	}
	esc, escaped, stopErr := p.stop(ctx, pr.grace)
	out.Escalated, out.Escaped = esc, escaped
	out.ReadyCost, out.StopCost, out.ArmDown = p.readyCost, p.stopCost, p.armDown
	if err == nil && stopErr != nil {
		err = &PointError{Phase: PhaseStop, Err: fmt.Errorf("stop server: %w", stopErr)}
	}
	if err != nil {
		out.FailReason = err.Error()
		out.Load = nil
		var pe *PointError
		isPE := errors.As(err, &pe)
		if isPE && pe.Tail != "" {
			out.LogTail = pe.Tail
		} else if len(p.srvs) > 0 {
			out.LogTail = p.srvs[0].Tail(tailLines)
		}
		out.Refused = isPE && pe.Refused
	}
	p.scrub()
	out.Wall = pr.clock().Now().Sub(out.StartedAt)
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
	case <-pr.clock().After(limit):
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	late := pr.late
	pr.late = nil
	return late
}

// loadArgs are the `ceiling load` flags of one point (the GENERATOR
// contract). The connect strategy is pinned explicitly: bounded, 32 in
// flight, so the high rungs are not an auth storm.
func (pr *ProcRunner) loadArgs(tg target.Spec, k result.PointKey, addr target.Addr, url string, window, warmup time.Duration, f pointFiles) []string {
	a := []string{
		"--scenario", pr.o.Point.Scenario,
		"--url", url,
		"--connections", strconv.Itoa(k.Connections),
		"--batch", strconv.Itoa(k.Batch),
		"--record-size", strconv.Itoa(pr.o.Point.RecordSize),
		"--duration", window.String(),
		"--warmup", warmup.String(),
		"--connect-strategy", "bounded",
		"--connect-concurrency", strconv.Itoa(knob.ConnectConcurrency),
		"--measure-marker", f.marker,
		"--json", f.json,
		"--quiet",
	}
	if blk, err := tg.Block(pr.o.Point.Scenario); err == nil {
		args := blk.Args()
		for i := 0; i < len(args); i++ {
			if _, multi := blk.(load.MultiURLBlock); multi && tg.URL != "" && args[i] == "--url" && i+1 < len(args) {
				i++ // the sweep's --url replaced the block's servers
				continue
			}
			a = append(a, target.Expand(args[i], addr))
		}
	}
	if s := pr.o.Point.SourceAddrs; s != "" && s != load.SourceAuto {
		a = append(a, "--source-addrs", s)
	}
	if pr.o.Point.IOPattern == load.IOEager {
		a = append(a, "--eager-reads")
	}
	a = append(a, pr.connArgs()...)
	if pr.o.Point.Drop {
		a = append(a, "--drop")
		// The target's own ready probe, when the generator can poll it
		// (a log: probe it cannot): how soon the server answers again.
		if r := target.Expand(tg.Ready, addr); strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "https://") || strings.HasPrefix(r, "tcp:") {
			a = append(a, "--drop-probe", r)
		}
	}
	return a
}
