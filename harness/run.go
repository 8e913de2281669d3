package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/meta"
	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/outfile"
	"github.com/ceiling-bench/ceiling/harness/secrets"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// RunConfig is what Run needs beyond the Plan: where it writes, and the
// environment the caller built for the run.
type RunConfig struct {
	Version    string
	Getenv     func(string) string
	Stdout     io.Writer // the table
	Stderr     io.Writer // progress, warnings
	Thresholds verdict.Thresholds
	// Agents is the network local agents run in (AGENTS=N), and the
	// tests' seams into them.
	Agents agentside.Env

	// Ceiling is the ceiling binary whose `calibrate --serve-sink` is the
	// null sink of CALIBRATE=1; empty: this executable.
	Ceiling string

	// Deps are the parts of the run that touch the machine; the zero
	// value is the real ones.
	Deps Deps
}

// SweepRunner is what Run sweeps with: one point at a time (PointRunner),
// and what the run asks of it around its points. ProcRunner, with real
// processes, is the one `ceiling sweep` uses.
type SweepRunner interface {
	PointRunner
	// BootArm and StopArm keep a two-arm sweep's warm arms' servers up
	// between points; ProfileDiff compares its profiled points.
	twoArmSide
	// SetBase gives a two-arm sweep's runner its base arm.
	SetBase(target.Spec)
	// Drain waits, at most limit, for what points left running after an
	// interrupt, and returns the warnings that came too late for the
	// result already written.
	Drain(limit time.Duration) []string
	// RecordGranted writes into r what the machine granted the run (the
	// affinities, the file limit), with the warnings that go with it.
	RecordGranted(r *result.Result)
	// Close ends what the runner kept for the whole sweep.
	Close()
}

var _ SweepRunner = (*ProcRunner)(nil)

// Deps are the seams between Run and the machine. Each nil field is the
// real part; a test gives fakes, and Run's own rules (the checkpoints,
// the result written whatever happens, the interrupt, the exit errors)
// are then tested without a process.
type Deps struct {
	// NewRunner makes the sweep's runner (default: NewProcRunner, with
	// the run's secrets to redact from each point's files).
	NewRunner func(p *Plan, ag agentside.Env, secrets *redact.Set) (SweepRunner, error)
	// Clock is the run's time and the default runner's points' (default:
	// the wall clock).
	Clock Clock
	// KeepSelfOff moves the harness's own threads off the pinned sets
	// and returns where they went and how to undo it (default:
	// pinning.KeepSelfOff).
	KeepSelfOff func(sets ...pinning.CPUSet) (pinning.CPUSet, func(), error)
	// CleanLeftovers stops what an earlier harness left running and
	// says what it found (default: the supervisors' leftovers).
	CleanLeftovers func() []string
	// Meter measures each point's window for the default runner (nil:
	// the real one, over /proc and the process trees).
	Meter meter.Meter
	// Starter starts the default runner's servers and generators, and
	// waits for the servers' readiness (nil: supervise's).
	Starter Starter
	// Meta is what the result says of where its numbers came from: the
	// command, the work tree's git ref (two `git` runs), the version, the
	// machine (default: load.CollectMeta). Its StartedAt is replaced by
	// the Clock's.
	Meta func(load.Options) load.Meta
	// FreePorts gives each of the default runner's points its free
	// loopback ports (default: target.FreePortsN).
	FreePorts func(n int) ([]int, error)
}

// withDefaults fills the run's own nil seams with the real parts; the
// default runner's (Meter, Starter, FreePorts) are ProcOptions' to fill.
func (d Deps) withDefaults() Deps {
	if d.Clock == nil {
		d.Clock = wallClock{}
	}
	if d.Meta == nil {
		d.Meta = load.CollectMeta
	}
	if d.NewRunner == nil {
		opts := ProcOptions{Meter: d.Meter, Clock: d.Clock, Starter: d.Starter, FreePorts: d.FreePorts}
		d.NewRunner = func(p *Plan, ag agentside.Env, set *redact.Set) (SweepRunner, error) {
			o := opts
			o.Secrets = set
			return NewProcRunner(p, ag, o)
		}
	}
	if d.KeepSelfOff == nil {
		d.KeepSelfOff = pinning.KeepSelfOff
	}
	if d.CleanLeftovers == nil {
		d.CleanLeftovers = cleanLeftovers
	}
	return d
}

// ResultFileName is the name of the result Run saves in the work dir when
// OUT cannot be written at the end.
const ResultFileName = "ceiling-result.json"

// Run is `ceiling sweep` after its knobs are valid: it sweeps with the real
// processes (ProcRunner; rc.Deps replaces them in tests), writes the result to OUT (always, also when
// interrupted or without a clean headline) and prints the table. Its error
// is ErrInterrupted, ErrNoCleanHeadline, a *target.ShortSecretError (nothing
// booted), or an *outfile.Error (the result was saved elsewhere, or lost).
//
// Everything it writes passes through the secrets (RedactResult, and a
// redacting writer for stdout and stderr); each point's files are
// redacted when the point ends.
//
// OUT never holds an earlier run's document once the sweep has begun:
// before every point Run rewrites it as this run's partial document
// (partial: true, "sweep in progress"), so a harness killed outright
// leaves a document that says so — and the points done so far — rather
// than an old one that looks complete. On an interrupt the partial result
// is written first, then Run waits (bounded) for the interrupted point's
// processes to stop and writes it again if that stop had something to
// add (a SIGKILL).
//
// A work dir Run made itself (/tmp/ceiling-sweep-*) is removed after a
// successful run unless KEEP_WORK_DIR; a given --work-dir is kept.
func Run(ctx context.Context, p *Plan, rc RunConfig) (*result.Result, error) {
	if !p.targeted {
		return nil, errNoTarget
	}
	if rc.Getenv == nil {
		rc.Getenv = os.Getenv
	}
	rc.Deps = rc.Deps.withDefaults()
	// The run's own copy: only the work dir it makes is filled in; the
	// caller's Plan is never written.
	run := *p
	s := &sweepRun{o: &run, rc: rc, secrets: p.Secrets}
	s.stderr = secrets.NewWriter(rc.Stderr, p.Secrets)
	s.stdout = secrets.NewWriter(rc.Stdout, p.Secrets)
	if err := s.workDir(); err != nil {
		return nil, err
	}
	r := s.newResult()
	// The harness's own threads off both pinned sets, where a CPU is free
	// of them; else they share, and attribution counts their share.
	o := s.o
	kept, restore, err := rc.Deps.KeepSelfOff(o.CPUs.Server, o.CPUs.Generator, o.CPUs.DuetServer, o.CPUs.DuetGenerator)
	defer restore()
	switch {
	case err != nil:
		r.Warn(fmt.Sprintf("the harness could not move its own threads off the pinned CPUs: %v", err))
	case len(kept) > 0:
		r.Meta.Pinning.HarnessCPUs = kept.Ints()
		fmt.Fprintf(s.stderr, "ceiling sweep: the harness itself on CPUs %s, off both pinned sets\n", kept)
	}
	s.beforeFirstPoint(ctx, r)

	runner, err := rc.Deps.NewRunner(o, rc.Agents, s.secrets)
	if err != nil {
		return nil, err
	}
	defer runner.Close()
	sweepErr := s.sweep(ctx, runner, r)
	return r, s.finish(runner, r, sweepErr)
}

// sweepRun is one Run: its copy of the plan, its writers, and the work dir
// it made, if it made one.
type sweepRun struct {
	o              *Plan
	rc             RunConfig
	secrets        *redact.Set
	stdout, stderr io.Writer
	madeWorkDir    bool
}

// workDir makes the work dir, or clears the point directories an earlier
// run left in a given one, and says where the server and generator run.
func (s *sweepRun) workDir() error {
	o := s.o
	for _, n := range o.Notes {
		fmt.Fprintf(s.stderr, "ceiling sweep: %s\n", n)
	}
	if o.Point.WorkDir == "" {
		d, err := os.MkdirTemp("", "ceiling-sweep-")
		if err != nil {
			return fmt.Errorf("work dir: %w", err)
		}
		o.Point.WorkDir, s.madeWorkDir = d, true
	} else if n, err := clearStalePoints(o.Point.WorkDir); err != nil {
		return fmt.Errorf("--work-dir %s: %w", o.Point.WorkDir, err)
	} else if n > 0 {
		fmt.Fprintf(s.stderr, "ceiling sweep: removed %d point directories an earlier run left in %s\n", n, o.Point.WorkDir)
	}
	if o.Target.External {
		fmt.Fprintf(s.stderr, "ceiling sweep: server external (not booted, pinned or stopped), generator on CPUs %s; logs in %s\n", o.CPUs.Generator, o.Point.WorkDir)
		return nil
	}
	fmt.Fprintf(s.stderr, "ceiling sweep: server on CPUs %s, generator on CPUs %s; logs in %s\n", o.CPUs.Server, o.CPUs.Generator, o.Point.WorkDir)
	if o.Compare.Mode == knob.ModeDuet {
		fmt.Fprintf(s.stderr, "ceiling sweep: duet: the arms run at once, half a as above, half b server on CPUs %s, generator on CPUs %s, swapping from block to block\n", o.CPUs.DuetServer, o.CPUs.DuetGenerator)
	}
	return nil
}

// newResult is the document with its meta, taken once before the first
// point; the result is written outside the tree, so the run itself
// cannot make the ref dirty. It starts at the Clock's now, as it
// finishes at the Clock's (finish).
func (s *sweepRun) newResult() *result.Result {
	o := s.o
	r := &result.Result{Warnings: []string{}}
	r.Meta.Meta = s.rc.Deps.Meta(load.Options{Command: o.Files.Command, Version: s.rc.Version})
	r.Meta.StartedAt = s.rc.Deps.Clock.Now().UTC()
	r.Meta.Runner = meta.Runner(s.rc.Getenv)
	r.Meta.Generator = meta.Generator(o.Point.Generator)
	r.Meta.Target = meta.Target(o.Target, o.Point.Scenario)
	if o.RunAs != nil {
		r.Meta.Target.User = o.RunAs.Name
	}
	r.Meta.Pinning = meta.Pinning(o.CPUs, o.noFile())
	for _, w := range meta.PinningWarnings(o.CPUs) {
		r.Warn(w)
	}
	return r
}

// beforeFirstPoint clears what an earlier harness left behind, records
// the target's warnings, and calibrates (CALIBRATE=1).
func (s *sweepRun) beforeFirstPoint(ctx context.Context, r *result.Result) {
	o := s.o
	// Warnings, which the table prints once at the end.
	for _, w := range s.rc.Deps.CleanLeftovers() {
		r.Warn(w)
	}
	for _, w := range o.Target.Warnings(o.Point.Scenario) {
		r.Warn(w)
	}
	result.RedactResult(r, s.secrets)
	r.Meta.Calibration = o.Calibration
	if o.Schedule.Calibrate {
		r.Meta.Calibration = runCalibration(ctx, o, s.rc.Ceiling, s.stderr, r)
	}
	if s.rc.Agents.Note != "" {
		r.Warn(s.rc.Agents.Note)
	}
}

// sweep runs the points, each behind a checkpoint of OUT: the two-arm
// sweep when the plan has a base, else the single-arm one.
func (s *sweepRun) sweep(ctx context.Context, runner SweepRunner, r *result.Result) error {
	o := s.o
	cp := &checkpointRunner{PointRunner: runner, r: r, out: o.Files.Out, secrets: s.secrets, stderr: s.stderr}
	if b := o.BaseTarget; b != nil {
		bt := meta.Target(*b, o.Point.Scenario)
		r.Meta.BaseTarget = &bt
		result.RedactTargetArgs(r.Meta.BaseTarget, s.secrets)
		runner.SetBase(*b)
		return SweepTwoArm(ctx, o, checkpointArms{cp, runner}, r, s.stderr, s.rc.Thresholds, s.rc.Deps.Clock)
	}
	return Sweep(ctx, o, cp, r, s.stderr, s.rc.Thresholds, s.rc.Deps.Clock)
}

// finish summarizes and writes the result (first, then the late warnings
// of an interrupted point's processes), prints the table and removes the
// work dir it made after a clean run.
func (s *sweepRun) finish(runner SweepRunner, r *result.Result, sweepErr error) error {
	o := s.o
	interrupted := errors.Is(sweepErr, ErrInterrupted)
	if !interrupted {
		for _, w := range runner.Drain(time.Second) {
			r.Warn(w)
		}
	}
	runner.RecordGranted(r)
	r.Meta.FinishedAt = s.rc.Deps.Clock.Now().UTC()
	r.Summarize()
	result.RedactResult(r, s.secrets)

	where := o.Files.Out
	writeErr := outfile.WriteOrSave(o.Files.Out, r, filepath.Join(o.Point.WorkDir, ResultFileName),
		filepath.Join(os.TempDir(), fmt.Sprintf("ceiling-result-%d.json", os.Getpid())))
	var oe *outfile.Error
	if errors.As(writeErr, &oe) {
		where = oe.SavedAt
		fmt.Fprintf(s.stderr, "ceiling sweep: %v\n", oe)
	}
	if interrupted {
		// The interrupted point's processes were left stopping so the
		// result could be written first; wait for them, bounded.
		if late := runner.Drain(3*MaxInterruptGrace + 5*time.Second); len(late) > 0 && where != "" {
			for _, w := range late {
				r.Warn(w)
			}
			result.RedactResult(r, s.secrets)
			if err := outfile.Write(where, r); err != nil {
				fmt.Fprintf(s.stderr, "ceiling sweep: rewrite %s with the late warnings: %v\n", where, err)
			}
		}
	}
	if err := result.WriteTable(s.stdout, r); err != nil {
		return errors.Join(sweepErr, writeErr, err)
	}
	if writeErr != nil {
		return errors.Join(sweepErr, writeErr)
	}
	fmt.Fprintf(s.stderr, "ceiling sweep: result written to %s\n", o.Files.Out)
	if sweepErr == nil && s.madeWorkDir && !o.Point.KeepWorkDir {
		if err := os.RemoveAll(o.Point.WorkDir); err != nil {
			fmt.Fprintf(s.stderr, "ceiling sweep: remove work dir %s: %v\n", o.Point.WorkDir, err)
		}
	} else {
		fmt.Fprintf(s.stderr, "ceiling sweep: logs kept in %s\n", o.Point.WorkDir)
	}
	if line := result.OutcomeLine(r.Comparison); line != "" {
		// Last, after the paths: what a person scrolling back looks for.
		fmt.Fprintln(s.stdout, line)
	}
	return sweepErr
}
