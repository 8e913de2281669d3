package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/side"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/notify"
	"github.com/ceiling-bench/ceiling/load"
)

// fakeSide is a generator side without processes: each step says what
// the test set.
type fakeSide struct {
	unready, overdue, ended string
	tail                    supervise.Process
	bounds                  side.Bounds
	done                    chan struct{}
	asked                   []side.Step
}

func (f *fakeSide) Start(context.Context, string, []string, string) (supervise.Process, error) {
	return nil, nil
}
func (f *fakeSide) Procs() []supervise.Process { return nil }
func (f *fakeSide) Done() <-chan struct{}      { return f.done }
func (f *fakeSide) Bounds() side.Bounds        { return f.bounds }
func (f *fakeSide) Why(step side.Step, wait time.Duration, err error) (string, supervise.Process) {
	f.asked = append(f.asked, step)
	switch step {
	case side.Unready:
		return f.unready, f.tail
	case side.Overdue:
		return f.overdue, f.tail
	case side.StillRunning:
		return "still running " + wait.String(), f.tail
	}
	return "result: " + err.Error(), f.tail
}
func (f *fakeSide) Ended(*verdict.Outcome) (string, supervise.Process) { return f.ended, f.tail }
func (f *fakeSide) Release()                                           {}

var _ side.Generator = (*fakeSide)(nil)

// fakeGeneration is a generation of side f in a fresh directory, watched
// for its marker, under a clock whose timers of a millisecond fire at
// once and longer ones never.
func fakeGeneration(t *testing.T, f *fakeSide) (*generation, pointFiles) {
	t.Helper()
	dir := t.TempDir()
	files := pointFiles{dir: dir, marker: filepath.Join(dir, "measure.marker"), json: filepath.Join(dir, "load.json")}
	w, err := notify.Watch(dir, "measure.marker", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return &generation{side: f, ready: w, clock: newFakeClock(time.Millisecond), json: files.json}, files
}

func phaseOf(t *testing.T, err error) (phase, reason string) {
	t.Helper()
	var pe *PointError
	if !errors.As(err, &pe) {
		t.Fatalf("%v: no PointError", err)
	}
	return pe.Phase, pe.Error()
}

// TestNewSideChoosesTheStrategy: AGENTS=N gives the point agents, else
// the one generator process.
func TestNewSideChoosesTheStrategy(t *testing.T) {
	o := knob.DefaultOptions(false)
	e := &procEnv{plan: planOf(o), generator: []string{"/bin/ceiling", "load"}}
	set := &serverSet{}
	if g, ok := newSide(e, e.setup(PointSpec{}), pointFiles{}, set, noFault{}).(*genProc); !ok {
		t.Errorf("AGENTS unset: %T, want the generator process", g)
	}
	o.Agents, o.AgentsJoinTimeout = 3, 2*time.Minute
	e.plan = planOf(o)
	g, ok := newSide(e, e.setup(PointSpec{}), pointFiles{}, set, noFault{}).(*agentside.Run)
	if !ok {
		t.Fatalf("AGENTS=3: %T, want the agents", g)
	}
	// The point's bounds reach the agents.
	b := g.Bounds()
	if want := 2*time.Minute + 5*time.Second; b.Window != want {
		t.Errorf("agents' window wait %s, want %s (AGENTS_JOIN_TIMEOUT + 5s)", b.Window, want)
	}
	if want := exitTimeout + 5*time.Second; b.End != want {
		t.Errorf("agents' end wait %s, want %s", b.End, want)
	}
	if !b.Group {
		t.Error("the agents' trees are not sampled as one side")
	}
}

// TestGenProcEndWait: with --drop the generator may take the drop
// check's timeout too.
func TestGenProcEndWait(t *testing.T) {
	o := knob.DefaultOptions(false)
	e := &procEnv{plan: planOf(o), generator: []string{"/bin/ceiling", "load"}}
	if got := newGenProc(e, e.setup(PointSpec{}), pointFiles{}, &serverSet{}, noFault{}).Bounds().End; got != exitTimeout {
		t.Errorf("%s, want %s", got, exitTimeout)
	}
	o.Drop = true
	e.plan = planOf(o)
	if got := newGenProc(e, e.setup(PointSpec{}), pointFiles{}, &serverSet{}, noFault{}).Bounds().End; got != exitTimeout+load.DropTimeout {
		t.Errorf("--drop: %s, want %s", got, exitTimeout+load.DropTimeout)
	}
}

// TestOpenWindowAsksTheSide: a side that ended says why at once; an
// overdue window is the side's to explain; a marker that came opens it,
// even when the side ended with it; an interrupt is one.
func TestOpenWindowAsksTheSide(t *testing.T) {
	ctx := context.Background()
	closed := make(chan struct{})
	close(closed)
	s := pointSetup{}

	f := &fakeSide{unready: "agent 1 exited before the measured window (exit status 2)", done: closed, bounds: side.Bounds{Window: time.Hour}}
	gen, _ := fakeGeneration(t, f)
	_, err := openWindow(ctx, s, gen, &serverSet{})
	if phase, why := phaseOf(t, err); phase != PhaseMarker || why != f.unready {
		t.Errorf("side failed: %s %q", phase, why)
	}
	if len(f.asked) != 1 {
		t.Errorf("asked %v after the side failed, want Unready only", f.asked)
	}

	f = &fakeSide{overdue: "no marker within warm-up + 0s", done: make(chan struct{})}
	gen, _ = fakeGeneration(t, f)
	_, err = openWindow(ctx, s, gen, &serverSet{})
	if phase, why := phaseOf(t, err); phase != PhaseMarker || why != f.overdue {
		t.Errorf("overdue: %s %q", phase, why)
	}

	for name, done := range map[string]chan struct{}{"running": make(chan struct{}), "ended": closed} {
		f = &fakeSide{overdue: "never", done: done, bounds: side.Bounds{Window: time.Hour}}
		gen, files := fakeGeneration(t, f)
		if err := os.WriteFile(files.marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := openWindow(ctx, s, gen, &serverSet{}); err != nil {
			t.Errorf("marker present, side %s: %v", name, err)
		}
	}

	f = &fakeSide{overdue: "never", done: make(chan struct{}), bounds: side.Bounds{Window: time.Hour}}
	gen, _ = fakeGeneration(t, f)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := openWindow(cancelled, s, gen, &serverSet{}); !errors.Is(err, ErrPointInterrupted) {
		t.Errorf("interrupted: %v", err)
	}
}

// TestCollectAsksTheSide: the pipeline waits for the side, judges its
// end, then reads the JSON.
func TestCollectAsksTheSide(t *testing.T) {
	ctx := context.Background()
	done := make(chan struct{})
	close(done)

	f := &fakeSide{done: make(chan struct{}), bounds: side.Bounds{End: time.Millisecond}}
	gen, _ := fakeGeneration(t, f)
	phase, why := phaseOf(t, collect(ctx, gen, &serverSet{}, noFault{}, &verdict.Outcome{}))
	if phase != PhaseCollect || why != "still running 1ms" {
		t.Errorf("never finished: %s %q", phase, why)
	}

	f = &fakeSide{done: done, bounds: side.Bounds{End: time.Hour}, ended: "agents: agent 0: lost"}
	gen, _ = fakeGeneration(t, f)
	if phase, why = phaseOf(t, collect(ctx, gen, &serverSet{}, noFault{}, &verdict.Outcome{})); why != f.ended {
		t.Errorf("ended badly: %s %q", phase, why)
	}

	f = &fakeSide{done: done, bounds: side.Bounds{End: time.Hour}}
	gen, files := fakeGeneration(t, f)
	phase, why = phaseOf(t, collect(ctx, gen, &serverSet{}, noFault{}, &verdict.Outcome{}))
	if want := "result: no JSON written"; phase != PhaseCollect || len(why) < len(want) || why[:len(want)] != want {
		t.Errorf("no JSON: %s %q", phase, why)
	}

	if err := os.WriteFile(files.json, []byte(`{"schema_version":`+strconv.Itoa(load.SchemaVersion)+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out verdict.Outcome
	if err := collect(ctx, gen, &serverSet{}, noFault{}, &out); err != nil || out.Load == nil {
		t.Errorf("collected: %v, load %v", err, out.Load)
	}
}
