package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/supervise/supervisetest"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// The point pipeline (boot, ready, generator, marker, window, collect,
// stop) driven end to end through Run by fake processes, a recorded
// window and a clock that moves only when the pipeline sleeps: the
// failure rules of a real sweep, with no process started and nothing
// that a busy machine could change. The real processes keep their own
// end-to-end sweeps (integration_test.go and the files beside it).

// fakeClock is a Clock that moves only when its owner sleeps (Sleep adds
// to Now). Its timers fire at once when their duration is at most
// horizon, else never: at every select of the pipeline the test decides
// which case is ready, and no two are.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	horizon time.Duration
	// step, when set, moves the clock on by itself after every read, so
	// that two reads in turn are never equal (seams_test.go).
	step time.Duration
}

func newFakeClock(horizon time.Duration) *fakeClock {
	return &fakeClock{now: time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC), horizon: horizon}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now
	c.now = c.now.Add(c.step)
	return now
}

func (c *fakeClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if d <= c.horizon {
		ch <- c.Now().Add(d)
	}
	return ch
}

// fakeStarter starts supervisetest processes: each is scripted by its
// Spec's name ("server", "server NAME", "generator") when it starts.
type fakeStarter struct {
	mu     sync.Mutex
	script map[string]func(spec supervise.Spec, p *supervisetest.Proc)
	// readying runs, by name, as the pipeline waits for that one's
	// readiness.
	readying map[string]func(p *supervisetest.Proc)
	started  []*supervisetest.Proc
	specs    []supervise.Spec
}

func (s *fakeStarter) Start(_ context.Context, spec supervise.Spec) (supervise.Process, error) {
	p := supervisetest.New(spec.Name, spec.LogPath)
	if f := s.script[spec.Name]; f != nil {
		f(spec, p)
	}
	s.mu.Lock()
	s.started, s.specs = append(s.started, p), append(s.specs, spec)
	s.mu.Unlock()
	return p, nil
}

// WaitReady is supervise.WaitReady's outcome for a process that is
// scripted: exited (an *ExitedError), not ready (its Ready error), or
// ready.
func (s *fakeStarter) WaitReady(_ context.Context, p supervise.Process, probe supervise.Probe, timeout time.Duration) error {
	fp := p.(*supervisetest.Proc)
	if f := s.readying[fp.Name()]; f != nil {
		f(fp)
	}
	if fp.Exited() {
		return &supervise.ExitedError{Name: fp.Name(), Pid: fp.Pid(), Err: fp.ExitErr(), LogTail: fp.Tail(supervise.TailLines)}
	}
	if fp.Ready != nil {
		return &supervise.NotReadyError{Name: fp.Name(), Probe: probe.String(), Timeout: timeout, Last: fp.Ready, LogTail: fp.Tail(supervise.TailLines)}
	}
	return nil
}

func (s *fakeStarter) named(name string) []*supervisetest.Proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*supervisetest.Proc
	for _, p := range s.started {
		if p.Name() == name {
			out = append(out, p)
		}
	}
	return out
}

// recordedMeter returns a window recorded on a quiet machine (server on
// CPU 1 at 95%, generator on CPU 0 at 31%: meter/testdata) for every
// point, and runs hook, if set, as each window starts.
type recordedMeter struct {
	w    meter.Window
	hook func()
}

func newRecordedMeter(t *testing.T) *recordedMeter {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("meter", "testdata", "windows", "quiet-echo-b10-c8.window.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Window meter.Window `json:"window"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return &recordedMeter{w: rec.Window}
}

type recordedRun struct{ w meter.Window }

func (r recordedRun) Stop() meter.Window { return r.w }

func (m *recordedMeter) Start(context.Context, meter.Spec) meter.Run {
	if m.hook != nil {
		m.hook()
	}
	return recordedRun{m.w}
}

// argAfter is the value of flag in args.
func argAfter(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// measuringGenerator is a generator that did its point: it writes the
// marker and a load document of thr messages per second, logs, and
// exits 0.
func measuringGenerator(thr float64) func(supervise.Spec, *supervisetest.Proc) {
	return func(spec supervise.Spec, p *supervisetest.Proc) {
		// Its own evidence as `ceiling load` reports it on a quiet
		// machine: one event loop, busy a fifth of the window.
		doc := load.Result{SchemaVersion: load.SchemaVersion, Summary: load.Summary{Mode: "closed", ThroughputPerS: thr, MeasuredNs: 1e9},
			Generator: load.GeneratorStats{Engine: "evloop", RunnableP99Ns: 2000,
				Loops: &wire.LoopStats{Count: 1, BusyFraction: []float64{0.2}, MaxBusy: 0.2, LagP99Ns: 300_000, LagMaxNs: 900_000}}}
		b, _ := json.Marshal(doc)
		_ = os.WriteFile(argAfter(spec.Args, "--measure-marker"), nil, 0o644)
		_ = os.WriteFile(argAfter(spec.Args, "--json"), b, 0o644)
		p.Log("generator: done").Exit(nil)
	}
}

// pipelinePlan is a targeted plan of one rung (batch 10 × 2
// connections) whose server is never really booted: the starter fakes
// it.
func pipelinePlan(t *testing.T, target string, edit func(*knob.Options)) *Plan {
	t.Helper()
	o := knob.DefaultOptions(true)
	o.BatchLadder, o.ConnsLadders = knob.Ladder{10}, knob.ConnsLadders{10: {2}}
	o.HeadlineBatch = 10
	o.ServerCPUs, o.GeneratorCPUs = pinning.CPUSet{1}, pinning.CPUSet{0}
	o.Out = filepath.Join(t.TempDir(), "ceiling.json")
	o.WorkDir = t.TempDir()
	o.Generator = "/bin/true load" // a real program, never run: the starter fakes it
	o.TargetFile = filepath.Join(t.TempDir(), "target.json")
	if target == "" {
		target = `{"name": "faked", "command": ["/bin/true", "{addr}"], "echo_url": "ws://{addr}/echo", "ready": "http://{addr}/health"}`
	}
	if err := os.WriteFile(o.TargetFile, []byte(target), 0o600); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&o)
	}
	p, err := Resolve(o, Env{Available: pinning.CPUSet{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeMachine is d with the machine's side effects faked where d leaves
// them nil: the harness's own threads stay where they are, no earlier
// run's leftovers are looked for, and the meta is fakeMeta's (no git).
// The ports stay the real ones (target.FreePortsN binds and frees
// loopback sockets, and execs nothing): a made-up port could be another
// process's, which the point's stop would then wait for.
func fakeMachine(d Deps) Deps {
	if d.KeepSelfOff == nil {
		d.KeepSelfOff = func(...pinning.CPUSet) (pinning.CPUSet, func(), error) { return nil, func() {}, nil }
	}
	if d.CleanLeftovers == nil {
		d.CleanLeftovers = func() []string { return nil }
	}
	if d.Meta == nil {
		d.Meta = fakeMeta
	}
	return d
}

// fakeMeta is Deps.Meta without git or /proc: the command and version
// as given, a fixed ref and machine, and a start the run replaces with
// its Clock's.
func fakeMeta(o load.Options) load.Meta {
	return load.Meta{Command: o.Command, Version: o.Version, GitRef: "0123456789ab-fake", StartedAt: time.Unix(0, 0).UTC(),
		Hardware: load.Hardware{CPUModel: "fake CPU", LogicalCPUs: 2, OS: "linux", Arch: "amd64", GOMAXPROCS: 2, CPUAffinity: []int{0, 1}}}
}

// pipelineRun is Run over the real ProcRunner with the fakes for its
// processes, clock and meter.
type pipelineRun struct {
	r              *result.Result
	err            error
	stdout, stderr string
}

func runPipeline(t *testing.T, p *Plan, st *fakeStarter, m meter.Meter, clock Clock) pipelineRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	d := fakeMachine(Deps{Starter: st, Meter: m, Clock: clock})
	r, err := Run(context.Background(), p, RunConfig{Version: "test", Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" },
		Thresholds: verdict.DefaultThresholds, Deps: d})
	if r == nil {
		t.Fatalf("Run returned no result (error %v)\n%s", err, stderr.String())
	}
	return pipelineRun{r: r, err: err, stdout: stdout.String(), stderr: stderr.String()}
}

// A clean sweep through the whole pipeline: the rung and its A-A repeat
// are measured from the generator's document and the recorded window,
// both sides started pinned to their sets, and every process stopped.
func TestPipelineMeasuresThroughTheFakes(t *testing.T) {
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"server":    func(_ supervise.Spec, p *supervisetest.Proc) { p.Log("listening") },
		"generator": measuringGenerator(50_000),
	}}
	res := runPipeline(t, pipelinePlan(t, "", nil), st, newRecordedMeter(t), newFakeClock(0))
	if res.err != nil {
		t.Fatalf("Run: %v\n%s", res.err, res.stderr)
	}
	if len(res.r.Curve) != 2 {
		t.Fatalf("curve has %d points, want the rung and its A-A repeat", len(res.r.Curve))
	}
	for _, pt := range res.r.Curve {
		if pt.Status != result.StatusOK || pt.ThroughputPerS != 50_000 || pt.Verdict != result.VerdictServerSaturated {
			t.Errorf("point %d: %s %s %v (%s%s)", pt.Index, pt.Status, pt.Verdict, pt.ThroughputPerS, pt.FailReason, pt.VerdictReason)
		}
	}
	if !res.r.Headline.Clean || res.r.Headline.ThroughputPerS != 50_000 {
		t.Errorf("headline %+v", res.r.Headline)
	}
	for _, spec := range st.specs {
		want := pinning.CPUSet{1}
		if spec.Name == "generator" {
			want = pinning.CPUSet{0}
		}
		if spec.CPUs.String() != want.String() {
			t.Errorf("%s pinned to %s, want %s", spec.Name, spec.CPUs, want)
		}
	}
	for _, p := range st.started {
		if !p.Exited() {
			t.Errorf("%s left running", p.Name())
		}
	}
	if n := len(st.named("server")); n != 2 {
		t.Errorf("%d servers booted, want one per point", n)
	}
}

// A server that exits inside the measured window fails its point with
// its last words; the sweep goes on, and the next point is measured.
func TestPipelineServerExitsMidWindow(t *testing.T) {
	m := newRecordedMeter(t)
	var once sync.Once
	var first, firstGen *supervisetest.Proc
	st := &fakeStarter{}
	st.script = map[string]func(supervise.Spec, *supervisetest.Proc){
		"server": func(_ supervise.Spec, p *supervisetest.Proc) {
			p.Log("listening")
			once.Do(func() { first = p })
		},
		// The first point's generator is in its window when the server
		// dies, and exits with its connections lost; the later ones
		// measure.
		"generator": func(spec supervise.Spec, p *supervisetest.Proc) {
			if firstGen == nil {
				firstGen = p
				_ = os.WriteFile(argAfter(spec.Args, "--measure-marker"), nil, 0o644)
				return
			}
			measuringGenerator(40_000)(spec, p)
		},
	}
	m.hook = func() {
		if !first.Exited() {
			first.Log("flaky-server: dying on purpose").Exit(errors.New("exit status 3"))
			firstGen.Log("generator: 2 connections lost").Exit(errors.New("exit status 1"))
		}
	}
	// Two rungs: the sweep goes on past the first.
	plan := pipelinePlan(t, "", func(o *knob.Options) { o.ConnsLadders = knob.ConnsLadders{10: {2, 4}} })
	res := runPipeline(t, plan, st, m, newFakeClock(0))
	if len(res.r.Curve) < 2 {
		t.Fatalf("curve %+v: the sweep stopped at the failed point", res.r.Curve)
	}
	p := res.r.Curve[0]
	if p.Status != result.StatusFailed || p.Verdict != result.VerdictFailed || !strings.Contains(p.FailReason, "server exited during the point (exit status 3)") {
		t.Errorf("first point: %s %s %q, want failed: server exited during the point", p.Status, p.Verdict, p.FailReason)
	}
	if !strings.Contains(p.LogTail, "dying on purpose") {
		t.Errorf("log tail %q lacks the server's last words", p.LogTail)
	}
	if q := res.r.Curve[1]; q.Status != result.StatusOK || q.ThroughputPerS != 40_000 {
		t.Errorf("point after the failure: %s %v %q", q.Status, q.ThroughputPerS, q.FailReason)
	}
	for _, p := range st.started {
		if p.Stops() == 0 {
			t.Errorf("%s was not stopped", p.Name())
		}
	}
}

// A server whose readiness probe never answers fails the point in its
// ready phase with its log; nothing else runs, the result is written and
// the run ends with ErrNoCleanHeadline, the table leading with the error.
func TestPipelineServerNeverReady(t *testing.T) {
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"server": func(_ supervise.Spec, p *supervisetest.Proc) {
			p.Log("listening on a port nobody asked for")
			p.Ready = errors.New("connection refused")
		},
	}}
	plan := pipelinePlan(t, "", nil)
	res := runPipeline(t, plan, st, newRecordedMeter(t), newFakeClock(0))
	if !errors.Is(res.err, ErrNoCleanHeadline) {
		t.Fatalf("error %v, want ErrNoCleanHeadline", res.err)
	}
	if len(res.r.Curve) != 1 || res.r.Curve[0].Status != result.StatusFailed || !strings.Contains(res.r.Curve[0].FailReason, "server never became ready") {
		t.Fatalf("curve %+v", res.r.Curve)
	}
	if !strings.Contains(res.r.Curve[0].LogTail, "nobody asked for") {
		t.Errorf("log tail %q lacks the server's log", res.r.Curve[0].LogTail)
	}
	if len(st.named("generator")) != 0 {
		t.Error("a generator was started for a server that never became ready")
	}
	if res.r.Headline.Clean || res.r.NoiseFloorPct != nil {
		t.Errorf("headline %+v, noise %v", res.r.Headline, res.r.NoiseFloorPct)
	}
	if !strings.Contains(res.stdout, "ERRORS: 1 of 1 points failed") {
		t.Errorf("table does not lead with the failure:\n%s", res.stdout)
	}
	if _, err := os.Stat(plan.Files.Out); err != nil {
		t.Errorf("no result written: %v", err)
	}
}

// A generator that fails before its window fails the point with its own
// output's tail; the server it was pointed at is stopped.
func TestPipelineGeneratorFails(t *testing.T) {
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"generator": func(_ supervise.Spec, p *supervisetest.Proc) {
			p.Log("broken-gen: cannot reach the moon").Exit(errors.New("exit status 3"))
		},
	}}
	res := runPipeline(t, pipelinePlan(t, "", nil), st, newRecordedMeter(t), newFakeClock(0))
	if !errors.Is(res.err, ErrNoCleanHeadline) {
		t.Fatalf("error %v, want ErrNoCleanHeadline", res.err)
	}
	p := res.r.Curve[0]
	if p.Status != result.StatusFailed || !strings.Contains(p.FailReason, "generator exited before creating its measure marker (exit status 3): broken-gen: cannot reach the moon") || !strings.Contains(p.LogTail, "cannot reach the moon") {
		t.Errorf("point: %s %q, tail %q", p.Status, p.FailReason, p.LogTail)
	}
	for _, s := range st.named("server") {
		if s.Stops() == 0 {
			t.Error("the server was not stopped")
		}
	}
}

// The bounds of the phases with no knob: a generator that never writes
// its marker fails after the warm-up and connectTimeout (the Clock's
// timer, which fires at once: nothing else can happen); one that does not exit after its window fails
// after exitTimeout; one that exits 0 without its document fails on the
// missing JSON. Each names its phase.
func TestPipelineGeneratorBounds(t *testing.T) {
	for _, tt := range []struct {
		name    string
		gen     func(supervise.Spec, *supervisetest.Proc)
		horizon time.Duration
		want    string
	}{
		{"no marker", func(supervise.Spec, *supervisetest.Proc) {}, time.Hour,
			"generator created no measure marker within warm-up + " + connectTimeout.String()},
		{"never exits", func(spec supervise.Spec, _ *supervisetest.Proc) {
			_ = os.WriteFile(argAfter(spec.Args, "--measure-marker"), nil, 0o644)
		}, exitTimeout, "generator still running " + exitTimeout.String() + " after its window"},
		{"exit 0 without JSON", func(spec supervise.Spec, p *supervisetest.Proc) {
			_ = os.WriteFile(argAfter(spec.Args, "--measure-marker"), nil, 0o644)
			p.Exit(nil)
		}, 0, "generator result: no JSON written"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){"generator": tt.gen}}
			clock := newFakeClock(tt.horizon)
			res := runPipeline(t, pipelinePlan(t, "", nil), st, newRecordedMeter(t), clock)
			p := res.r.Curve[0]
			if p.Status != result.StatusFailed || !strings.Contains(p.FailReason, tt.want) {
				t.Errorf("point: %s %q, want failed: %q", p.Status, p.FailReason, tt.want)
			}
			for _, g := range st.started {
				if !g.Exited() {
					t.Errorf("%s left running", g.Name())
				}
			}
		})
	}
}

// Of several servers, the one that exits while a later one comes up fails
// the point by its own name; all are stopped, in reverse boot order.
func TestPipelineClusterNodeExitsWhileAnotherBoots(t *testing.T) {
	target := `{"name": "cluster", "echo_url": "ws://{addr}/echo", "servers": [
		{"name": "a", "command": ["/bin/true", "{port}"], "ready": "tcp:{host}:{port}"},
		{"name": "b", "command": ["/bin/true", "{port2}"], "ready": "tcp:{host}:{port2}"}]}`
	var a *supervisetest.Proc
	st := &fakeStarter{
		script: map[string]func(supervise.Spec, *supervisetest.Proc){
			"server a": func(_ supervise.Spec, p *supervisetest.Proc) { a = p.Log("a: up") },
		},
		readying: map[string]func(*supervisetest.Proc){
			"server b": func(*supervisetest.Proc) { a.Log("a: lost quorum").Exit(errors.New("exit status 1")) },
		},
	}
	res := runPipeline(t, pipelinePlan(t, target, nil), st, newRecordedMeter(t), newFakeClock(0))
	p := res.r.Curve[0]
	if want := "server a exited while server b came up (exit status 1)"; p.Status != result.StatusFailed || p.FailReason != want {
		t.Errorf("point: %s %q, want %q", p.Status, p.FailReason, want)
	}
	if !strings.Contains(p.LogTail, "lost quorum") {
		t.Errorf("log tail %q is not server a's", p.LogTail)
	}
	if b := st.named("server b"); len(b) == 0 || b[0].Stops() == 0 {
		t.Error("server b was not stopped")
	}
}

// An interrupt during a point's window: Run returns ErrInterrupted with
// the partial result written (the point cut short is no measurement: a
// warning, not a point of the curve), and the point's processes are
// stopped by the drain.
func TestPipelineInterruptStopsTheProcesses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := newRecordedMeter(t)
	m.hook = cancel // the interrupt arrives as the window starts
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"generator": func(spec supervise.Spec, _ *supervisetest.Proc) {
			_ = os.WriteFile(argAfter(spec.Args, "--measure-marker"), nil, 0o644)
		},
	}}
	plan := pipelinePlan(t, "", nil)
	var stdout, stderr bytes.Buffer
	d := fakeMachine(Deps{Starter: st, Meter: m, Clock: newFakeClock(0)})
	r, err := Run(ctx, plan, RunConfig{Version: "test", Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" },
		Thresholds: verdict.DefaultThresholds, Deps: d})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", err)
	}
	if r == nil || !r.Partial || len(r.Curve) != 0 {
		t.Fatalf("result %+v, want partial with no point", r)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.Contains(w, "point 1 (batch 10, 2 connections, rep 0) was interrupted")
	}) {
		t.Errorf("warnings %q do not say the point was interrupted", r.Warnings)
	}
	if _, err := os.Stat(plan.Files.Out); err != nil {
		t.Errorf("no partial result written: %v", err)
	}
	for _, p := range st.started {
		if !p.Exited() || p.Stops() == 0 {
			t.Errorf("%s not stopped after the interrupt", p.Name())
		}
	}
}

// One of several servers that exits inside the window fails the point by
// its name, with its own log tail; every server is stopped.
func TestPipelineClusterNodeExitsMidWindow(t *testing.T) {
	target := `{"name": "cluster", "echo_url": "ws://{addr}/echo", "servers": [
		{"name": "a", "command": ["/bin/true", "{port}"], "ready": "tcp:{host}:{port}"},
		{"name": "b", "command": ["/bin/true", "{port2}"], "ready": "tcp:{host}:{port2}"},
		{"name": "c", "command": ["/bin/true", "{port3}"], "ready": "tcp:{host}:{port3}"}]}`
	var b, gen *supervisetest.Proc
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"server b": func(_ supervise.Spec, p *supervisetest.Proc) { b = p.Log("b: up") },
		"generator": func(spec supervise.Spec, p *supervisetest.Proc) {
			gen = p
			_ = os.WriteFile(argAfter(spec.Args, "--measure-marker"), nil, 0o644)
		},
	}}
	m := newRecordedMeter(t)
	m.hook = func() {
		b.Log("b-is-going-away").Exit(errors.New("exit status 124"))
		gen.Exit(errors.New("exit status 1"))
	}
	plan := pipelinePlan(t, target, nil)
	res := runPipeline(t, plan, st, m, newFakeClock(0))
	p := res.r.Curve[0]
	if want := "server b exited during the point (exit status 124)"; p.Status != result.StatusFailed || p.FailReason != want {
		t.Errorf("point: %s %q, want %q", p.Status, p.FailReason, want)
	}
	if !strings.Contains(p.LogTail, "b-is-going-away") {
		t.Errorf("log tail %q, want server b's", p.LogTail)
	}
	if _, err := os.Stat(filepath.Join(plan.Point.WorkDir, "point-001-sweep-b10-c2-r0", "server-c.log")); err != nil {
		t.Errorf("server c's log: %v", err)
	}
	for _, s := range st.started {
		if s.Stops() == 0 {
			t.Errorf("%s was not stopped", s.Name())
		}
	}
}

// A resilience point (FAULT) whose point fails before its window (every
// generator's preflight refused): it is stopped like any other, its fault
// never sent, and it cannot conclude, saying the point failed; the sweep
// ends without a headline.
func TestPipelineFaultPointFailedBeforeItsWindow(t *testing.T) {
	target := `{"name": "cluster", "servers": [
		{"name": "node1", "command": ["/bin/true", "{port}"], "ready": "tcp:{host}:{port}"},
		{"name": "node2", "command": ["/bin/true", "{port2}"], "ready": "tcp:{host}:{port2}"}],
		"fanout": {"urls": ["ws://{host}:{port}", "ws://{host}:{port2}"], "app_id": "app-id", "key": "app-key", "secret": "app-secret"}}`
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"generator": func(_ supervise.Spec, p *supervisetest.Proc) {
			p.Log("ceiling load: preflight: the server answered HTTP 401").Exit(errors.New("exit status 1"))
		},
	}}
	plan := pipelinePlan(t, target, func(o *knob.Options) {
		o.Scenario = "fanout"
		o.Fault = knob.Fault{Kind: knob.FaultStop, Server: "node2", Fraction: 0.5}
	})
	res := runPipeline(t, plan, st, newRecordedMeter(t), newFakeClock(0))
	if !errors.Is(res.err, ErrNoCleanHeadline) {
		t.Fatalf("error %v, want ErrNoCleanHeadline", res.err)
	}
	last := res.r.Curve[len(res.r.Curve)-1]
	if last.Role != result.RoleResilience || last.Status != result.StatusFailed || last.Fault == nil {
		t.Fatalf("last point %+v, want the failed resilience point with its fault", last)
	}
	if f := last.Fault; f.Verdict != result.ResilienceCannotConclude || !strings.Contains(f.Reason, "the point failed") || f.Sent {
		t.Errorf("fault %+v, want cannot_conclude because the point failed, nothing sent", f)
	}
	for _, p := range st.started {
		if len(p.Signals()) > 0 {
			t.Errorf("%s was signalled %v", p.Name(), p.Signals())
		}
		if p.Name() != "generator" && p.Stops() == 0 {
			t.Errorf("%s was not stopped", p.Name())
		}
	}
}
