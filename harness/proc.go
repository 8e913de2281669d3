package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/supervise"
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
	o         *Options
	target    TargetSpec
	generator []string // argv before the load flags
	ready     time.Duration
	grace     time.Duration

	base *TargetSpec // a two-arm sweep's base arm (PointSpec.Arm), else nil

	mu               sync.Mutex
	serverGranted    pinning.CPUSet
	generatorGranted pinning.CPUSet
	noFile           uint64
	cgroup           string // the headroom probe's cgroup version, once used
}

// NewProcRunner prepares the runner; the generator defaults to this
// executable's own `load` subcommand.
func NewProcRunner(o *Options, t TargetSpec) (*ProcRunner, error) {
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
	return &ProcRunner{o: o, target: t, generator: gen, ready: ready, grace: grace}, nil
}

// SetBase gives a two-arm sweep's runner its base arm: points with Arm
// ArmBase boot it, with the same pinning, limits and generator as the
// head. The readiness timeout and stop grace are the longer of the two
// targets' (unless --ready-timeout set one).
func (pr *ProcRunner) SetBase(t TargetSpec) {
	pr.base = &t
	ready, grace := t.Durations()
	if pr.o.ReadyTimeout <= 0 {
		pr.ready = max(pr.ready, ready)
	}
	pr.grace = max(pr.grace, grace)
}

// targetFor is the server a point boots, and its window and warm-up.
func (pr *ProcRunner) targetFor(spec PointSpec) (t TargetSpec, window, warmup time.Duration) {
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
		r.warn(fmt.Sprintf("server asked for CPUs %s but the kernel granted %s", pr.o.ServerCPUs, pr.serverGranted))
	}
	if pr.generatorGranted != nil && pr.generatorGranted.String() != pr.o.GeneratorCPUs.String() {
		r.warn(fmt.Sprintf("generator asked for CPUs %s but the kernel granted %s", pr.o.GeneratorCPUs, pr.generatorGranted))
	}
}

// pointFiles are one point's paths in the work dir.
type pointFiles struct{ dir, serverLog, genLog, marker, json string }

func (pr *ProcRunner) files(spec PointSpec) (pointFiles, error) {
	k := spec.Key
	dir := filepath.Join(pr.o.WorkDir, fmt.Sprintf("point-%03d-%s-b%d-c%d-r%d", spec.Index, spec.Role, k.Batch, k.Connections, k.Rep))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return pointFiles{}, err
	}
	return pointFiles{
		dir:       dir,
		serverLog: filepath.Join(dir, "server.log"),
		genLog:    filepath.Join(dir, "generator.log"),
		marker:    filepath.Join(dir, "measure.marker"),
		json:      filepath.Join(dir, "load.json"),
	}, nil
}

// RunPoint boots the server, waits for it, runs the generator, samples
// both sides over the measured window and stops the server. Every failure
// becomes a failed Outcome; nothing here stops the sweep.
func (pr *ProcRunner) RunPoint(ctx context.Context, spec PointSpec) (out Outcome) {
	out.StartedAt = time.Now().UTC()
	defer func() { out.Wall = time.Since(out.StartedAt) }()
	fail := func(format string, args ...any) Outcome {
		out.FailReason = fmt.Sprintf(format, args...)
		out.Load = nil
		return out
	}
	f, err := pr.files(spec)
	if err != nil {
		return fail("work dir: %v", err)
	}
	port, err := FreePort()
	if err != nil {
		return fail("%v", err)
	}
	target, window, warmup := pr.targetFor(spec)

	// The server.
	argv := make([]string, len(target.Command))
	for i, a := range target.Command {
		argv[i] = Expand(a, port)
	}
	var env []string
	for k, v := range target.Env {
		env = append(env, k+"="+Expand(v, port))
	}
	srv, err := supervise.Start(ctx, supervise.Spec{
		Name: "server", Path: argv[0], Args: argv[1:], Env: env, Dir: target.Dir,
		CPUs: pr.o.ServerCPUs, NoFile: NoFileLimit, LogPath: f.serverLog, Grace: pr.grace,
	})
	if err != nil {
		return fail("boot server: %v", err)
	}
	defer func() {
		if err := srv.Stop(pr.grace); err != nil && out.FailReason == "" {
			out.FailReason = fmt.Sprintf("stop server: %v", err)
			out.Load = nil
		}
		if out.FailReason != "" && out.LogTail == "" {
			out.LogTail = srv.Tail(tailLines)
		}
		_ = supervise.WaitPortFree(fmt.Sprintf("127.0.0.1:%d", port), pr.grace)
	}()
	probe, err := supervise.ParseProbe(Expand(target.Ready, port))
	if err != nil {
		return fail("target ready: %v", err)
	}
	if err := supervise.WaitReady(ctx, srv, probe, pr.ready); err != nil {
		out.LogTail = srv.Tail(tailLines)
		return fail("server never became ready: %v", err)
	}
	pr.noteGranted(&pr.serverGranted, srv.Pid)

	// The generator.
	url, err := target.URLFor(pr.o.Scenario)
	if err != nil {
		return fail("target: %v", err)
	}
	var cgroup string
	if spec.Role == RoleHeadroom {
		name := fmt.Sprintf("ceiling-headroom-%d-%d", os.Getpid(), spec.Index)
		th, err := pinning.NewThrottle(name, pr.o.HeadroomProbe*float64(len(pr.o.GeneratorCPUs)))
		if err != nil {
			return fail("headroom probe: cannot cap the generator: %v", err)
		}
		pr.mu.Lock()
		pr.cgroup = fmt.Sprintf("v%d", th.Version)
		pr.mu.Unlock()
		// After the generator has stopped (defers run last-first). A
		// cgroup left behind does not unmake the measurement.
		defer func() { _ = th.Remove() }()
		cgroup = th.Path
	}
	gen, err := supervise.Start(ctx, supervise.Spec{
		Name: "generator", Path: pr.generator[0],
		Args:    append(append([]string(nil), pr.generator[1:]...), pr.loadArgs(target, spec.Key, Expand(url, port), window, warmup, f)...),
		Env:     []string{"GOMAXPROCS=" + strconv.Itoa(len(pr.o.GeneratorCPUs))},
		CPUs:    pr.o.GeneratorCPUs,
		NoFile:  NoFileLimit,
		Cgroup:  cgroup, // joined before exec: capped from its first instruction, children too
		LogPath: f.genLog,
		Grace:   pr.grace,
	})
	if err != nil {
		return fail("start generator: %v", err)
	}
	defer gen.Stop(pr.grace)

	// Wait for the marker: every connection open and the warm-up over.
	markerBy := time.Now().Add(warmup + connectTimeout)
	for {
		if _, err := os.Stat(f.marker); err == nil {
			break
		}
		switch {
		case ctx.Err() != nil:
			return fail("interrupted")
		case srv.Exited():
			out.LogTail = srv.Tail(tailLines)
			return fail("server exited before the measured window (%v)", srv.ExitErr())
		case gen.Exited():
			out.LogTail = gen.Tail(tailLines)
			return fail("generator exited before creating its measure marker (%v)", gen.ExitErr())
		case time.Now().After(markerBy):
			out.LogTail = gen.Tail(tailLines)
			return fail("generator created no measure marker within warm-up + %s", connectTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pr.noteGranted(&pr.generatorGranted, gen.Pid)

	// The measured window: sample both sides until it ends.
	// Both as trees: the server's forks and a GENERATOR wrapper's real
	// work are children.
	srvS := cpusample.Start(ctx, SampleEvery, cpusample.Tree(srv.Pid))
	genS := cpusample.Start(ctx, SampleEvery, cpusample.Tree(gen.Pid))
	srvCores0, okS0 := snapCores(pr.o.ServerCPUs)
	genCores0, okG0 := snapCores(pr.o.GeneratorCPUs)
	windowEnd := time.NewTimer(window)
	select {
	case <-windowEnd.C:
	case <-gen.Done():
	case <-srv.Done():
	case <-ctx.Done():
	}
	windowEnd.Stop()
	srvCores1, okS1 := snapCores(pr.o.ServerCPUs)
	genCores1, okG1 := snapCores(pr.o.GeneratorCPUs)
	out.ServerCPU = cpuStats(srvS.Stop(), len(pr.o.ServerCPUs))
	out.GeneratorCPU = cpuStats(genS.Stop(), len(pr.o.GeneratorCPUs))
	pinnedCPU(&out.ServerCPU, srvCores0, srvCores1, okS0, okS1)
	pinnedCPU(&out.GeneratorCPU, genCores0, genCores1, okG0, okG1)
	attributeOverlap(&out.ServerCPU, &out.GeneratorCPU, pr.o.ServerCPUs, pr.o.GeneratorCPUs)

	// The generator ends by itself after its window.
	select {
	case <-gen.Done():
	case <-time.After(exitTimeout):
		out.LogTail = gen.Tail(tailLines)
		return fail("generator still running %s after its window", exitTimeout)
	case <-ctx.Done():
		return fail("interrupted")
	}
	if srv.Exited() {
		out.LogTail = srv.Tail(tailLines)
		return fail("server exited during the point (%v)", srv.ExitErr())
	}
	if err := gen.ExitErr(); err != nil {
		out.LogTail = gen.Tail(tailLines)
		return fail("generator failed (%v)", err)
	}
	res, err := readLoad(f.json)
	if err != nil {
		out.LogTail = gen.Tail(tailLines)
		return fail("generator result: %v", err)
	}
	out.Load = res
	return out
}

// loadArgs are the `ceiling load` flags of one point (the GENERATOR
// contract). The connect strategy is pinned explicitly: bounded, 32 in
// flight, so the high rungs are not an auth storm.
func (pr *ProcRunner) loadArgs(target TargetSpec, k PointKey, url string, window, warmup time.Duration, f pointFiles) []string {
	a := []string{
		"--scenario", pr.o.Scenario,
		"--url", url,
		"--connections", strconv.Itoa(k.Connections),
		"--batch", strconv.Itoa(k.Batch),
		"--record-size", strconv.Itoa(pr.o.RecordSize),
		"--duration", window.String(),
		"--warmup", warmup.String(),
		"--connect-strategy", "bounded",
		"--connect-concurrency", strconv.Itoa(ConnectConcurrency),
		"--measure-marker", f.marker,
		"--json", f.json,
		"--quiet",
	}
	if pr.o.Scenario == ScenarioFanout && target.Fanout != nil {
		fo := target.Fanout
		a = append(a, "--app-id", fo.AppID, "--key", fo.Key, "--secret", fo.Secret)
		if fo.Channels > 0 {
			a = append(a, "--channels", strconv.Itoa(fo.Channels))
		}
	}
	return a
}

func (pr *ProcRunner) noteGranted(dst *pinning.CPUSet, pid int) {
	set, err := pinning.Granted(pid)
	if err != nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if *dst == nil {
		*dst = set
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
