package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/pinning"
)

const sweepUsage = `usage: ceiling sweep [flags]

Boot the server under test pinned to the server CPUs for every point, drive it
with the generator pinned to its own CPUs, sweep batch sizes x connections in
an interleaved order, repeat the headline peak (A-A noise floor) and give each
point a verdict: server-saturated, generator-capped, both, neither or failed.

Every flag has a make variable (env) of the same meaning; a flag overrides it.
See docs/sweep.md.

flags:
`

// durationFlag takes a Go duration ("10s") or bare seconds ("10").
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := harness.ParseSeconds(s)
	if err != nil {
		return err
	}
	*f.d = d
	return nil
}

// sweepFlags binds every knob of o to a flag.
func sweepFlags(o *harness.Options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling sweep", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, sweepUsage)
		fs.PrintDefaults()
	}
	fs.Var(&o.ServerCPUs, "srv-cpuset", "CPUs the server is pinned to, taskset list syntax (SRV_CPUSET; default: all but the first)")
	fs.Var(&o.GeneratorCPUs, "lt-cpuset", "CPUs the generator is pinned to (LT_CPUSET; default: the first CPU)")
	fs.BoolVar(&o.AllowOverlap, "allow-overlap", o.AllowOverlap, "allow the two CPU sets to overlap, with a warning in the result (ALLOW_OVERLAP)")
	fs.Var(&o.BatchLadder, "batch-ladder", "batch sizes to sweep, e.g. \"10 100 512\" (BATCH_LADDER)")
	fs.Var(o.ConnsLadders, "conns-ladder", "`BATCH=LADDER` connection ladder of one batch size, e.g. 10=32,64,128; repeatable (CONNS_LADDER_<batch>)")
	fs.IntVar(&o.RecordSize, "record-size", o.RecordSize, "bytes per message payload (RECORD_SIZE)")
	fs.IntVar(&o.HeadlineBatch, "headline-batch", o.HeadlineBatch, "batch size whose ceiling is the headline; must be in the batch ladder (HEADLINE_BATCH)")
	fs.IntVar(&o.Reps, "reps", o.Reps, "runs of every point (REPS)")
	fs.Var(durationFlag{&o.Duration}, "duration", "measured window of every point, e.g. 10s (DURATION)")
	fs.Var(durationFlag{&o.Warmup}, "warmup", "warm-up before the window, excluded from the figures (WARMUP)")
	fs.StringVar(&o.Scenario, "scenario", o.Scenario, "echo | fanout (SCENARIO)")
	fs.StringVar(&o.Out, "out", o.Out, "result JSON path, written whole at the end (OUT)")
	fs.BoolVar(&o.Quick, "quick", o.Quick, "small ladder and short points, about a minute, for smoke tests (QUICK=1)")
	fs.StringVar(&o.Generator, "generator", o.Generator, "generator command honouring the `ceiling load` flags and JSON (GENERATOR; default: this binary's load)")
	fs.StringVar(&o.TargetFile, "target", o.TargetFile, "target file describing the server under test (TARGET)")
	fs.StringVar(&o.ServerCmd, "server-cmd", o.ServerCmd, "override the target's command line (space separated; {port} {addr} {host} are filled in)")
	fs.StringVar(&o.URL, "url", o.URL, "override the target's URL for the scenario ({addr} is filled in)")
	fs.StringVar(&o.Ready, "ready", o.Ready, "override the target's readiness probe: tcp:{addr}, http://{addr}/health, log:REGEX")
	fs.Var(durationFlag{&o.ReadyTimeout}, "ready-timeout", "override the target's readiness timeout")
	fs.BoolVar(&o.AllowUnpinnedURL, "allow-unpinned-url", o.AllowUnpinnedURL, "run a target URL without {addr} or {port} (a server the harness did not boot or pin), with a warning in the result")
	fs.Var(finiteFloat{&o.HeadroomProbe}, "headroom-probe", "run the headline again with the generator held to this fraction of its cores by a cgroup quota, e.g. 0.5 (HEADROOM_PROBE; 0: off; needs cgroup write access)")
	fs.StringVar(&o.WorkDir, "work-dir", o.WorkDir, "where per-point logs, markers and JSON go (default: a new temp dir)")
	compareFlags(fs, o)
	return fs
}

// sweepOptions layers defaults, env and flags, then resolves and validates
// every knob and the target file: any error here is a usage error (exit 2)
// and nothing has booted yet.
func sweepOptions(args []string, stderr io.Writer) (*harness.Options, harness.TargetSpec, error) {
	// First pass: only to learn whether --quick was given, since QUICK
	// chooses the defaults the other knobs override.
	// Errors are printed once, by main; usage only on -h.
	scratch := harness.DefaultOptions(false)
	if err := sweepFlags(&scratch, io.Discard).Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			sweepFlags(&scratch, stderr).Usage()
			return nil, harness.TargetSpec{}, errHelp
		}
		return nil, harness.TargetSpec{}, usageError{err}
	}
	quick, err := harness.QuickFromEnv(os.LookupEnv)
	if err != nil {
		return nil, harness.TargetSpec{}, usageError{err}
	}
	quick = quick || scratch.Quick

	o := harness.DefaultOptions(quick)
	if scratch.TwoArm() || harness.BaseTargetFromEnv(os.LookupEnv) != "" {
		// Like QUICK, a two-arm sweep lays its own defaults (the short
		// first pass) under the env and flags.
		o.SetTwoArmDefaults()
	}
	if err := o.ApplyEnv(os.LookupEnv, os.Environ()); err != nil {
		return nil, harness.TargetSpec{}, usageError{err}
	}
	fs := sweepFlags(&o, io.Discard)
	if err := fs.Parse(args); err != nil {
		return nil, harness.TargetSpec{}, usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, harness.TargetSpec{}, usagef("ceiling sweep: unexpected argument %q", fs.Arg(0))
	}
	o.Command = append([]string{"ceiling", "sweep"}, args...)

	available, err := pinning.Granted(os.Getpid())
	if err != nil && !errors.Is(err, pinning.ErrUnsupported) {
		return nil, harness.TargetSpec{}, fmt.Errorf("read this process's CPU affinity: %w", err)
	}
	if err := o.Resolve(available); err != nil {
		return nil, harness.TargetSpec{}, usageError{err}
	}
	t, err := loadTarget(&o)
	if err != nil {
		return nil, harness.TargetSpec{}, usageError{err}
	}
	if o.TwoArm() {
		if _, err := loadBaseTarget(&o); err != nil {
			return nil, harness.TargetSpec{}, usageError{err}
		}
	}
	return &o, t, nil
}

// loadTarget reads the target file and applies the flag overrides.
func loadTarget(o *harness.Options) (harness.TargetSpec, error) {
	t, err := harness.LoadTarget(o.TargetFile)
	if err != nil {
		return t, err
	}
	if o.ServerCmd != "" {
		t.Command = strings.Fields(o.ServerCmd)
	}
	if o.URL != "" {
		if o.Scenario == harness.ScenarioFanout {
			if t.Fanout == nil {
				t.Fanout = &harness.FanoutTarget{}
			}
			t.Fanout.URL = o.URL
		} else {
			t.EchoURL = o.URL
		}
	}
	if o.Ready != "" {
		t.Ready = o.Ready
	}
	if o.AllowUnpinnedURL {
		t.AllowUnpinnedURL = true
	}
	if err := t.Check(); err != nil {
		return t, fmt.Errorf("target %s with flag overrides: %w", o.TargetFile, err)
	}
	if err := t.CheckRunnable(o.Scenario); err != nil {
		return t, fmt.Errorf("TARGET %s: %w", o.TargetFile, err)
	}
	if err := t.CheckFor(o); err != nil {
		return t, fmt.Errorf("TARGET %s: %w", o.TargetFile, err)
	}
	return t, nil
}

// errHelp: -h was given and the usage printed; exit 0.
var errHelp = errors.New("help requested")

func runSweep(args []string, stdout, stderr io.Writer) error {
	o, target, err := sweepOptions(args, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	// SIGINT/SIGTERM: stop both children, write what finished, exit 1.
	ctx, stop := supervise.OnSignal(context.Background(), harness.DefaultStopGrace)
	defer stop()
	var base *harness.TargetSpec
	if o.TwoArm() {
		b, err := loadBaseTarget(o) // checked in sweepOptions
		if err != nil {
			return usageError{err}
		}
		base = &b
	}
	_, err = harness.Run(ctx, o, harness.RunConfig{
		BaseTarget: base,
		Target:     target,
		Version:    version,
		Stdout:     stdout,
		Stderr:     stderr,
		Thresholds: harness.DefaultThresholds,
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, harness.ErrNoCleanHeadline), errors.Is(err, harness.ErrInterrupted):
		return exitStatus{1, err}
	}
	return err
}
