package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish"
)

const sweepUsage = `usage: ceiling sweep [flags]

Boot the server under test pinned to the server CPUs for every point, drive it
with the generator pinned to its own CPUs, sweep batch sizes x connections in
an interleaved order, repeat the headline peak (A-A noise floor) and give each
point a verdict: server-saturated, generator-capped, both, neither or failed.

A flag with a make variable (env) names it in its help below; the flag
overrides the variable. See docs/sweep.md.

flags:
`

// sweepFlags binds one flag per row of the knob table (harness.Knobs) to o;
// the usage is printed from the same rows, each flag with its variable and
// its default.
func sweepFlags(o *harness.Options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling sweep", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, sweepUsage)
		for _, k := range harness.Knobs {
			if k.Flag == "" {
				continue
			}
			name := "--" + k.Flag
			if k.Arg != "" {
				name += " " + k.Arg
			}
			fmt.Fprintf(out, "  %s\n    \t%s\n", name, k.FlagUsage())
		}
	}
	for _, k := range harness.Knobs {
		if k.Flag != "" {
			fs.Var(harness.KnobValue{K: k, O: o}, k.Flag, k.FlagUsage())
		}
	}
	return fs
}

// sweepSetup is sweepOptions plus the secrets to redact (gathered and
// checked before anything boots: a secret too short to redact is exit 2)
// and the check that OUT can be written.
func sweepSetup(args []string, stderr io.Writer) (*harness.Options, harness.TargetSpec, *redact.Set, error) {
	o, t, err := sweepOptions(args, stderr)
	if err != nil {
		return nil, t, nil, err
	}
	if err := harness.CheckOut(o.Out); err != nil {
		return nil, t, nil, usageError{err}
	}
	secrets, notes, err := harness.SweepSecrets(o, t, os.Environ())
	if err != nil {
		return nil, t, nil, usageError{err}
	}
	o.Notes = append(o.Notes, notes...)
	return o, t, secrets, nil
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
	srvGiven := len(o.ServerCPUs) > 0 // before Resolve picks one
	if err := o.Resolve(available); err != nil {
		return nil, harness.TargetSpec{}, usageError{err}
	}
	t, err := loadTarget(&o)
	if err != nil {
		return nil, harness.TargetSpec{}, usageError{err}
	}
	if t.External && srvGiven {
		// Refused, not ignored: whoever set it expects the server pinned.
		return nil, harness.TargetSpec{}, usagef("SRV_CPUSET: does not apply to an external target (TARGET %s has \"external\": true: the harness boots and pins no server); unset it", o.TargetFile)
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
		// Indexes into the file's command say nothing about another
		// one; its secrets are its secret flags' values, or "secrets".
		t.SecretArgs = nil
	}
	if o.URL != "" {
		t.OverrideURL(o.Scenario, o.URL)
	}
	if o.Ready != "" {
		t.Ready = o.Ready
	}
	if err := t.ForSweep(o); err != nil {
		return t, fmt.Errorf("TARGET %s: %w", o.TargetFile, err)
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
	o, target, secrets, err := sweepSetup(args, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if done, err := agentsNetwork(o, target.External, stderr); done {
		return err
	}
	// SIGINT/SIGTERM: write what finished, stop both children with a
	// short bounded grace (CI gives a cancelled job seconds), exit 1.
	_, grace := target.Durations()
	ctx, stop := supervise.OnSignal(context.Background(), harness.InterruptGrace(grace))
	defer stop()
	var base *harness.TargetSpec
	if o.TwoArm() {
		b, err := loadBaseTarget(o) // checked in sweepOptions
		if err != nil {
			return usageError{err}
		}
		base = &b
	}
	r, err := harness.Run(ctx, o, harness.RunConfig{
		BaseTarget: base,
		Target:     target,
		Version:    version,
		Stdout:     stdout,
		Stderr:     stderr,
		Thresholds: harness.DefaultThresholds,
		Secrets:    secrets,
	})
	sweepSummary(os.Getenv("GITHUB_STEP_SUMMARY"), stderr, r, secrets)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, harness.ErrNoCleanHeadline), errors.Is(err, harness.ErrInterrupted):
		return exitStatus{1, err}
	}
	return err
}

// sweepSummary writes the sweep's table and chart to the job summary when
// there is one (GITHUB_STEP_SUMMARY), also without a clean headline: the
// summary says why. r was redacted by harness.Run; the Markdown passes
// through the secrets again on its way out. A failure is a warning.
func sweepSummary(path string, stderr io.Writer, r *harness.Result, secrets *redact.Set) {
	if path == "" || r == nil {
		return
	}
	publish.WriteSummary(stderr, path, r, "ceiling sweep: "+r.Meta.Generator, secrets)
}
