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
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/load"
)

// fakeSide is a generator side without processes: each step says what
// the test set.
type fakeSide struct {
	markerFailed, noMarker, ended, failed string
	tail                                  supervise.Process
	markerWait, collectWait               time.Duration
	finished                              chan struct{}
	overdue                               []bool // NoMarker's, in order
	steps                                 []string
}

func (f *fakeSide) Start(context.Context, string, []string, string) (supervise.Process, error) {
	return nil, nil
}
func (f *fakeSide) Procs() []supervise.Process { return nil }
func (f *fakeSide) Group() bool                { return false }
func (f *fakeSide) MarkerWait() time.Duration  { return f.markerWait }
func (f *fakeSide) MarkerFailed() (string, supervise.Process) {
	return f.markerFailed, f.tail
}
func (f *fakeSide) NoMarker(overdue bool, _ time.Duration) (string, supervise.Process) {
	f.overdue = append(f.overdue, overdue)
	if overdue {
		return f.noMarker, f.tail
	}
	return "", nil
}
func (f *fakeSide) Finished() <-chan struct{}  { return f.finished }
func (f *fakeSide) CollectWait() time.Duration { return f.collectWait }
func (f *fakeSide) StillRunning(wait time.Duration) (string, supervise.Process) {
	return "still running " + wait.String(), f.tail
}
func (f *fakeSide) Ended(*verdict.Outcome) (string, supervise.Process) {
	f.steps = append(f.steps, "ended")
	return f.ended, f.tail
}
func (f *fakeSide) Failed() (string, supervise.Process) {
	f.steps = append(f.steps, "failed")
	return f.failed, f.tail
}
func (f *fakeSide) ResultFailed(err error) (string, supervise.Process) {
	return "result: " + err.Error(), f.tail
}
func (f *fakeSide) Release() {}

// fakePoint is a point between its generator side's start and its end,
// with no server (none to have exited) and a fresh directory.
func fakePoint(t *testing.T, side generatorSide) *pointRun {
	dir := t.TempDir()
	return &pointRun{
		// Timers of a millisecond fire at once, longer ones never.
		pr:   &ProcRunner{o: planOf(knob.DefaultOptions(false)), Clock: newFakeClock(time.Millisecond)},
		side: side,
		f:    pointFiles{dir: dir, marker: filepath.Join(dir, "measure.marker"), json: filepath.Join(dir, "load.json")},
	}
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
	p := &pointRun{pr: &ProcRunner{o: planOf(o), generator: []string{"/bin/ceiling", "load"}}}
	if _, ok := p.newSide().(*genProc); !ok {
		t.Errorf("AGENTS unset: %T, want the generator process", p.newSide())
	}
	o.Agents, o.AgentsJoinTimeout = 3, 2*time.Minute
	p.pr.o = planOf(o)
	side, ok := p.newSide().(*agentside.Run)
	if !ok {
		t.Fatalf("AGENTS=3: %T, want the agents", p.newSide())
	}
	// The point's bounds reach the agents.
	if got, want := side.MarkerWait(), 2*time.Minute+5*time.Second; got != want {
		t.Errorf("agents' marker wait %s, want %s (AGENTS_JOIN_TIMEOUT + 5s)", got, want)
	}
	if got, want := side.CollectWait(), exitTimeout+5*time.Second; got != want {
		t.Errorf("agents' collect wait %s, want %s", got, want)
	}
}

// TestGenProcCollectWait: with --drop the generator may take the drop
// check's timeout too.
func TestGenProcCollectWait(t *testing.T) {
	o := knob.DefaultOptions(false)
	g := &genProc{p: &pointRun{pr: &ProcRunner{o: planOf(o)}}}
	if got := g.CollectWait(); got != exitTimeout {
		t.Errorf("%s, want %s", got, exitTimeout)
	}
	o.Drop = true
	g.p.pr.o = planOf(o)
	if got := g.CollectWait(); got != exitTimeout+load.DropTimeout {
		t.Errorf("--drop: %s, want %s", got, exitTimeout+load.DropTimeout)
	}
}

// TestWaitMarkerAsksTheSide: the side's own failure fails the marker
// phase at once; an overdue marker is the side's to explain; a marker
// that came ends the wait.
func TestWaitMarkerAsksTheSide(t *testing.T) {
	ctx := context.Background()
	f := &fakeSide{markerFailed: "agent 1 exited before the measured window (exit status 2)", markerWait: time.Hour}
	phase, why := phaseOf(t, fakePoint(t, f).waitMarker(ctx))
	if phase != PhaseMarker || why != f.markerFailed {
		t.Errorf("side failed: %s %q", phase, why)
	}
	if len(f.overdue) != 0 {
		t.Errorf("NoMarker asked after the side failed: %v", f.overdue)
	}

	f = &fakeSide{noMarker: "no marker within warm-up + 0s"}
	phase, why = phaseOf(t, fakePoint(t, f).waitMarker(ctx))
	if phase != PhaseMarker || why != f.noMarker {
		t.Errorf("overdue: %s %q", phase, why)
	}

	f = &fakeSide{noMarker: "never", markerWait: time.Hour}
	p := fakePoint(t, f)
	if err := os.WriteFile(p.f.marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.waitMarker(ctx); err != nil {
		t.Errorf("marker present: %v", err)
	}

	f = &fakeSide{noMarker: "never", markerWait: time.Hour}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := fakePoint(t, f).waitMarker(cancelled); !errors.Is(err, ErrPointInterrupted) {
		t.Errorf("interrupted: %v", err)
	}
}

// TestCollectAsksTheSide: the pipeline waits for the side, judges its end
// before and after the servers, then reads the JSON.
func TestCollectAsksTheSide(t *testing.T) {
	ctx := context.Background()
	done := make(chan struct{})
	close(done)

	f := &fakeSide{finished: make(chan struct{}), collectWait: time.Millisecond}
	phase, why := phaseOf(t, fakePoint(t, f).collect(ctx, &verdict.Outcome{}))
	if phase != PhaseCollect || why != "still running 1ms" {
		t.Errorf("never finished: %s %q", phase, why)
	}

	f = &fakeSide{finished: done, collectWait: time.Hour, ended: "agents: agent 0: lost"}
	if phase, why = phaseOf(t, fakePoint(t, f).collect(ctx, &verdict.Outcome{})); why != f.ended || len(f.steps) != 1 {
		t.Errorf("ended badly: %s %q after %v", phase, why, f.steps)
	}

	f = &fakeSide{finished: done, collectWait: time.Hour, failed: "generator failed (exit status 1)"}
	if phase, why = phaseOf(t, fakePoint(t, f).collect(ctx, &verdict.Outcome{})); why != f.failed || len(f.steps) != 2 {
		t.Errorf("failed: %s %q after %v", phase, why, f.steps)
	}

	f = &fakeSide{finished: done, collectWait: time.Hour}
	p := fakePoint(t, f)
	phase, why = phaseOf(t, p.collect(ctx, &verdict.Outcome{}))
	if want := "result: no JSON written"; phase != PhaseCollect || len(why) < len(want) || why[:len(want)] != want {
		t.Errorf("no JSON: %s %q", phase, why)
	}

	if err := os.WriteFile(p.f.json, []byte(`{"schema_version":`+strconv.Itoa(load.SchemaVersion)+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out verdict.Outcome
	if err := p.collect(ctx, &out); err != nil || out.Load == nil {
		t.Errorf("collected: %v, load %v", err, out.Load)
	}
}
