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
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/outfile"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// fakeRunner is a SweepRunner over a scripted PointRunner: it boots
// nothing, and records what Run asked of it around the points. Before
// each point it reads OUT, which Run must have rewritten as this run's
// partial document.
type fakeRunner struct {
	*scripted
	fakeArms
	t        *testing.T
	out      string
	seen     []result.Result // OUT as each point began
	late     [][]string
	drained  []time.Duration
	granted  bool
	closed   bool
	base     *target.Spec
	secrets  *redact.Set
	blockOut func() // run after the first point, if set
}

func (f *fakeRunner) RunPoint(ctx context.Context, spec PointSpec) verdict.Outcome {
	var r result.Result
	b, err := os.ReadFile(f.out)
	if f.blockOut != nil && len(f.seen) > 0 {
		// OUT was taken away after the first point: nothing to read.
	} else if err != nil {
		f.t.Errorf("point %d: OUT not written before it: %v", spec.Index, err)
	} else if err := json.Unmarshal(b, &r); err != nil {
		f.t.Errorf("point %d: OUT: %v", spec.Index, err)
	}
	f.seen = append(f.seen, r)
	out := f.scripted.RunPoint(ctx, spec)
	if f.blockOut != nil && len(f.seen) == 1 {
		f.blockOut()
	}
	return out
}

func (f *fakeRunner) SetBase(t target.Spec) { f.base = &t }
func (f *fakeRunner) Drain(limit time.Duration) []string {
	f.drained = append(f.drained, limit)
	if len(f.late) == 0 {
		return nil
	}
	w := f.late[0]
	f.late = f.late[1:]
	return w
}
func (f *fakeRunner) RecordGranted(r *result.Result) {
	f.granted = true
	r.Meta.Pinning.ServerGranted = []int{1}
}
func (f *fakeRunner) Close() { f.closed = true }

// runPlan is a targeted plan (a target file read as the CLI reads it;
// its server is never booted) with the ladder of sweepOpts and OUT in a
// temp dir.
func runPlan(t *testing.T, workDir string) *Plan {
	t.Helper()
	o := knob.DefaultOptions(false)
	o.BatchLadder, o.ConnsLadders = knob.Ladder{10, 100}, knob.ConnsLadders{10: {4, 8}, 100: {2}}
	o.HeadlineBatch = 10
	o.ServerCPUs, o.GeneratorCPUs = pinning.CPUSet{1}, pinning.CPUSet{0}
	o.Out = filepath.Join(t.TempDir(), "ceiling.json")
	o.WorkDir = workDir
	o.TargetFile = filepath.Join(t.TempDir(), "target.json")
	spec := `{"name": "never-booted", "command": ["/bin/sh", "-c", "exit 1", "{addr}"], "echo_url": "ws://{addr}/echo", "ready": "http://{addr}/health"}`
	if err := os.WriteFile(o.TargetFile, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(o, Env{Available: pinning.CPUSet{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeDeps are Run's seams with f as the runner, a fixed clock, and a
// machine whose leftovers and self-pinning are recorded, not done.
func fakeDeps(t *testing.T, f *fakeRunner, selfOff *[]pinning.CPUSet) Deps {
	return fakeMachine(Deps{
		NewRunner: func(p *Plan, _ agentside.Env, secrets *redact.Set) (SweepRunner, error) {
			f.out, f.secrets = p.Files.Out, secrets
			return f, nil
		},
		Clock: newFakeClock(0),
		KeepSelfOff: func(sets ...pinning.CPUSet) (pinning.CPUSet, func(), error) {
			*selfOff = append(*selfOff, sets...)
			return nil, func() {}, nil
		},
		CleanLeftovers: func() []string { return []string{"stopped 1 leftover process of an earlier harness"} },
	})
}

func readResult(t *testing.T, path string) result.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Run with every point measured: OUT is this run's partial document
// before each point (never an older one), the final document is whole,
// and Run asked the machine what it should, once.
func TestRunCheckpointsEachPointThenWritesTheResult(t *testing.T) {
	k := func(b, c int) result.PointKey { return result.PointKey{Batch: b, Connections: c} }
	f := &fakeRunner{t: t, scripted: &scripted{thr: map[result.PointKey]float64{k(10, 4): 100, k(10, 8): 180, k(100, 2): 50}}}
	var selfOff []pinning.CPUSet
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p := runPlan(t, "")
	var stdout, stderr bytes.Buffer
	r, err := Run(context.Background(), p, RunConfig{Version: "test", Stdout: &stdout, Stderr: &stderr,
		Thresholds: verdict.DefaultThresholds, Getenv: func(string) string { return "" }, Deps: fakeDeps(t, f, &selfOff)})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	if len(f.seen) != 4 {
		t.Fatalf("%d points run, want 3 on the ladder and the A-A repeat", len(f.seen))
	}
	for i, doc := range f.seen {
		want := "point " + string(rune('1'+i)) + " running"
		if !doc.Partial || !strings.Contains(doc.PartialReason, want) || len(doc.Curve) != i {
			t.Errorf("OUT before point %d: partial %v, %q, %d points; want this run's partial document with %d points", i+1, doc.Partial, doc.PartialReason, len(doc.Curve), i)
		}
	}
	got := readResult(t, p.Files.Out)
	if got.Partial || len(got.Curve) != 4 || got.Headline.ThroughputPerS != 180 {
		t.Errorf("result: partial %v, %d points, headline %v", got.Partial, len(got.Curve), got.Headline.ThroughputPerS)
	}
	// What an earlier run left is said once, with the warnings.
	if n := strings.Count(stdout.String()+stderr.String(), "stopped 1 leftover process"); n != 1 {
		t.Errorf("the leftovers' warning is printed %d times, want once:\n%s\n%s", n, stderr.String(), stdout.String())
	}
	if !got.Meta.FinishedAt.Equal(time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)) {
		t.Errorf("finished at %v, want the clock's", got.Meta.FinishedAt)
	}
	if !slices.Contains(got.Warnings, "stopped 1 leftover process of an earlier harness") {
		t.Errorf("warnings %q: the leftovers are not in the result", got.Warnings)
	}
	if !f.granted || !f.closed || f.secrets == nil {
		t.Errorf("runner: granted %v, closed %v, secrets %v", f.granted, f.closed, f.secrets)
	}
	if len(selfOff) != 4 || selfOff[0].String() != "1" || selfOff[1].String() != "0" {
		t.Errorf("KeepSelfOff(%v): want the server's and the generator's sets (and the duet's, empty)", selfOff)
	}
	if r.Headline.ThroughputPerS != 180 || !strings.Contains(stdout.String(), "headline: ") {
		t.Errorf("table:\n%s", stdout.String())
	}
	// A work dir Run made is removed after a clean run (and Run left
	// its plan alone: the dir is found under TMPDIR).
	if made, _ := filepath.Glob(filepath.Join(tmp, "ceiling-sweep-*")); len(made) != 0 || strings.Contains(stderr.String(), "logs kept in") {
		t.Errorf("a clean run kept its work dir %q:\n%s", made, stderr.String())
	}
}

// KEEP_WORK_DIR keeps the work dir Run made, after a clean run too.
func TestRunKeepsItsWorkDirWhenAsked(t *testing.T) {
	k := func(b, c int) result.PointKey { return result.PointKey{Batch: b, Connections: c} }
	f := &fakeRunner{t: t, scripted: &scripted{thr: map[result.PointKey]float64{k(10, 4): 100, k(10, 8): 180, k(100, 2): 50}}}
	var selfOff []pinning.CPUSet
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p := runPlan(t, "")
	p.Point.KeepWorkDir = true
	var stdout, stderr bytes.Buffer
	if _, err := Run(context.Background(), p, RunConfig{Version: "test", Stdout: &stdout, Stderr: &stderr,
		Thresholds: verdict.DefaultThresholds, Getenv: func(string) string { return "" }, Deps: fakeDeps(t, f, &selfOff)}); err != nil {
		t.Fatal(err)
	}
	if made, _ := filepath.Glob(filepath.Join(tmp, "ceiling-sweep-*")); len(made) != 1 || !strings.Contains(stderr.String(), "logs kept in "+made[0]) {
		t.Errorf("work dirs %q, want the one Run made, kept and named:\n%s", made, stderr.String())
	}
}

// An interrupt: ErrInterrupted, the partial result written first, then
// Run waits (bounded) for the interrupted point's stop and rewrites the
// result with what it found late.
func TestRunInterruptedRewritesTheLateWarnings(t *testing.T) {
	k := func(b, c int) result.PointKey { return result.PointKey{Batch: b, Connections: c} }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeRunner{t: t, scripted: &scripted{thr: map[result.PointKey]float64{k(10, 4): 100, k(10, 8): 180, k(100, 2): 50}, cancel: cancel, at: 2},
		late: [][]string{{"point 2: server did not exit within its grace after SIGTERM and was SIGKILLed"}}}
	var selfOff []pinning.CPUSet
	p := runPlan(t, t.TempDir())
	var stdout, stderr bytes.Buffer
	_, err := Run(ctx, p, RunConfig{Version: "test", Stdout: &stdout, Stderr: &stderr,
		Thresholds: verdict.DefaultThresholds, Getenv: func(string) string { return "" }, Deps: fakeDeps(t, f, &selfOff)})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Run: %v, want ErrInterrupted", err)
	}
	if len(f.drained) != 1 || f.drained[0] < 3*MaxInterruptGrace {
		t.Errorf("Drain called with %v: want once, bounded by the interrupt's grace", f.drained)
	}
	got := readResult(t, p.Files.Out)
	if !got.Partial || !slices.Contains(got.Warnings, "point 2: server did not exit within its grace after SIGTERM and was SIGKILLed") {
		t.Errorf("result: partial %v, warnings %q; want partial with the late warning", got.Partial, got.Warnings)
	}
	if !strings.Contains(stderr.String(), "logs kept in") {
		t.Errorf("an interrupted run keeps its logs:\n%s", stderr.String())
	}
}

// No clean headline point: ErrNoCleanHeadline, the result written all
// the same, and the work dir kept for the logs.
func TestRunNoCleanHeadlineStillWrites(t *testing.T) {
	f := &fakeRunner{t: t, scripted: &scripted{thr: map[result.PointKey]float64{}}} // every point fails
	var selfOff []pinning.CPUSet
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p := runPlan(t, "")
	var stdout, stderr bytes.Buffer
	_, err := Run(context.Background(), p, RunConfig{Version: "test", Stdout: &stdout, Stderr: &stderr,
		Thresholds: verdict.DefaultThresholds, Getenv: func(string) string { return "" }, Deps: fakeDeps(t, f, &selfOff)})
	if !errors.Is(err, ErrNoCleanHeadline) {
		t.Fatalf("Run: %v, want ErrNoCleanHeadline", err)
	}
	got := readResult(t, p.Files.Out)
	if got.Partial || len(got.Curve) == 0 || got.Curve[0].FailReason != "server exited during the point" {
		t.Errorf("result: partial %v, curve %+v", got.Partial, got.Curve)
	}
	if made, _ := filepath.Glob(filepath.Join(tmp, "ceiling-sweep-*")); len(made) != 1 || !strings.Contains(stderr.String(), "logs kept in "+made[0]) {
		t.Errorf("work dirs %q: a run without a clean headline keeps the one it made, and names it:\n%s", made, stderr.String())
	}
}

// OUT cannot be written at the end: the result is saved in the work dir,
// Run's error says where, and nothing is lost.
func TestRunSavesTheResultWhenOutIsGone(t *testing.T) {
	k := func(b, c int) result.PointKey { return result.PointKey{Batch: b, Connections: c} }
	f := &fakeRunner{t: t, scripted: &scripted{thr: map[result.PointKey]float64{k(10, 4): 100, k(10, 8): 180, k(100, 2): 50}}}
	var selfOff []pinning.CPUSet
	work := t.TempDir()
	p := runPlan(t, work)
	// After the first point, OUT's directory is replaced by a file: no
	// write to OUT can succeed any more.
	f.blockOut = func() {
		dir := filepath.Dir(p.Files.Out)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	_, err := Run(context.Background(), p, RunConfig{Version: "test", Stdout: &stdout, Stderr: &stderr,
		Thresholds: verdict.DefaultThresholds, Getenv: func(string) string { return "" }, Deps: fakeDeps(t, f, &selfOff)})
	var oe *outfile.Error
	if !errors.As(err, &oe) {
		t.Fatalf("Run: %v, want an *outfile.Error", err)
	}
	saved := filepath.Join(work, ResultFileName)
	if oe.SavedAt != saved {
		t.Errorf("saved at %q, want %q", oe.SavedAt, saved)
	}
	if got := readResult(t, saved); got.Partial || len(got.Curve) != 4 {
		t.Errorf("saved result: partial %v, %d points", got.Partial, len(got.Curve))
	}
	if !strings.Contains(stderr.String(), "cannot write the in-progress result") {
		t.Errorf("the lost checkpoint is not said:\n%s", stderr.String())
	}
}
