package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/outfile"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

const sweepUsage = `usage: ceiling sweep [flags]

Boot the server under test pinned to the server CPUs for every point, drive it
with the generator pinned to its own CPUs, sweep batch sizes x connections in
an interleaved order, repeat the headline peak (A-A noise floor) and give each
point a verdict: server-saturated, generator-capped, both, neither or failed.

  ceiling sweep --target bench/target.json --srv-cpuset 1-3 --lt-cpuset 0
  ceiling sweep --quick --out /tmp/quick.json              # a smoke test: about a minute
  ceiling sweep --base-target base.json --target head.json # two arms, one verdict

A flag with a make variable names it in its help; the flag overrides the
variable. docs/sweep.md has every knob, docs/compare.md the comparison's.
`

// sweepSections are the sections of sweep's help, each with its flags in
// order. Every flag of the knob table is in one (TestSweepHelpSections).
var sweepSections = []struct {
	title string
	flags []string
}{
	{"the server and the CPUs", []string{"target", "srv-cpuset", "lt-cpuset", "quick", "reps", "duration", "warmup", "allow-long", "server-cmd", "url", "ready", "ready-timeout", "allow-unpinned-url", "srv-user", "allow-overlap"}},
	{"ladders and the search", []string{"batch-ladder", "conns-ladder", "search", "headline-batch", "record-size", "objective", "headroom-probe"}},
	{"comparing two servers (docs/compare.md)", []string{"base-target", "compare-budget", "compare-scope", "compare-stop", "compare-reps", "alpha", "fail-on", "compare-prefer", "compare-mode", "compare-profile", "duet-cpusets", "compare-arms", "compare-reboot-every", "server-costs", "compare-duration", "compare-warmup"}},
	{"the workload and the generator", []string{"scenario", "scenario-file", "generator", "io-pattern", "calibrate", "calibration", "source-addrs", "fault", "drop"}},
	{"generator agents (docs/agents.md)", []string{"agents", "agents-listen", "agents-token-file", "agents-tls-cert", "agents-tls-key", "agents-tls-ca", "agents-join-timeout", "agents-netns", "agents-port-range"}},
	{"output", []string{"out", "work-dir", "keep-work-dir", "profile"}},
}

// sweepFlags binds one flag per row of the knob table (knob.Knobs) to o;
// the usage is printed from the same rows, each flag with its variable and
// its default.
func sweepFlags(o *knob.Options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling sweep", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, sweepUsage)
		byFlag := map[string]knob.Knob{}
		for _, k := range knob.Knobs {
			byFlag[k.Flag] = k
		}
		for _, sec := range sweepSections {
			fmt.Fprintf(out, "\n%s:\n", sec.title)
			for _, f := range sec.flags {
				k := byFlag[f]
				name := "--" + k.Flag
				if k.Arg != "" {
					name += " " + k.Arg
				}
				fmt.Fprintf(out, "  %s\n", name)
				for _, line := range wrapWords(k.FlagUsage(), 100-6) {
					fmt.Fprintf(out, "      %s\n", line)
				}
			}
		}
	}
	for _, k := range knob.Knobs {
		if k.Flag != "" {
			fs.Var(knob.KnobValue{K: k, O: o}, k.Flag, k.FlagUsage())
		}
	}
	return fs
}

// sweepSetup is sweepOptions plus the check that OUT can be written:
// the plan (with its secrets, gathered and checked before anything boots:
// a secret too short to redact is exit 2).
func sweepSetup(args []string, stderr io.Writer) (*harness.Plan, error) {
	p, err := sweepOptions(args, stderr)
	if err != nil {
		return nil, err
	}
	if err := outfile.Check(p.Files.Out); err != nil {
		return nil, usageError{err}
	}
	if dir := filepath.Dir(p.Files.Out); dir != "" {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			// Made when the result is written: said now, not silently.
			fmt.Fprintf(stderr, "ceiling sweep: OUT %s: the directory %s does not exist; it will be made for the result\n", p.Files.Out, dir)
		}
	}
	return p, nil
}

// sweepOptions layers defaults, env and flags, then resolves them into
// the plan, reading each target file once: any error here is a usage
// error (exit 2) and nothing has booted yet.
func sweepOptions(args []string, stderr io.Writer) (*harness.Plan, error) {
	o, err := sweepKnobs(args, stderr)
	if err != nil {
		return nil, err
	}
	available, err := pinning.Granted(os.Getpid())
	if err != nil && !errors.Is(err, pinning.ErrUnsupported) {
		return nil, fmt.Errorf("read this process's CPU affinity: %w", err)
	}
	p, err := harness.Resolve(o, harness.Env{Available: available, Environ: os.Environ()})
	if err != nil {
		return nil, usageError{err}
	}
	return p, nil
}

// sweepKnobs layers the defaults, the environment and the flags args
// into the sweep's options, reading no file (ceiling compare checks a
// sweep's flags with it before it builds anything).
func sweepKnobs(args []string, stderr io.Writer) (knob.Options, error) {
	// First pass: only to learn whether --quick was given, since QUICK
	// chooses the defaults the other knobs override.
	// Errors are printed once, by main; usage only on -h.
	scratch := knob.DefaultOptions(false)
	first := sweepFlags(&scratch, io.Discard)
	if err := first.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			sweepFlags(&scratch, stderr).Usage()
			return scratch, errHelp
		}
		return scratch, usageError{flagError(first, err)}
	}
	quick, err := knob.QuickFromEnv(os.LookupEnv)
	if err != nil {
		return scratch, usageError{err}
	}
	quick = quick || scratch.Quick

	o := knob.DefaultOptions(quick)
	if scratch.TwoArm() || knob.BaseTargetFromEnv(os.LookupEnv) != "" {
		// Like QUICK, a two-arm sweep lays its own defaults (the short
		// first pass, the compare windows of its scope) under the env
		// and flags.
		scope := knob.CompareScopeFromEnv(os.LookupEnv)
		first.Visit(func(f *flag.Flag) {
			if f.Name == "compare-scope" {
				scope = scratch.CompareScope
			}
		})
		o.SetTwoArmDefaults(scope)
	}
	if err := o.ApplyEnv(os.LookupEnv, os.Environ()); err != nil {
		return o, usageError{err}
	}
	fs := sweepFlags(&o, io.Discard)
	if err := fs.Parse(args); err != nil {
		return o, usageError{flagError(fs, err)}
	}
	if fs.NArg() > 0 {
		return o, usagef("ceiling sweep: unexpected argument %q", fs.Arg(0))
	}
	o.Command = append([]string{"ceiling", "sweep"}, args...)
	return o, nil
}

// errHelp: -h was given and the usage printed; exit 0.
var errHelp = errors.New("help requested")

func runSweep(args []string, rawStdout, rawStderr io.Writer) error {
	// Every line within 100 columns (lines.go).
	stdout, stderr := newLineWriter(rawStdout, os.Getenv), newLineWriter(rawStderr, os.Getenv)
	defer stdout.Flush()
	defer stderr.Flush()
	p, err := sweepSetup(args, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	ag, done, err := agentsNetwork(p.Agents, p.Target.External, stderr)
	if done {
		return err
	}
	// SIGINT/SIGTERM: write what finished, stop both children with a
	// short bounded grace (CI gives a cancelled job seconds), exit 1.
	_, grace := p.Target.Durations()
	ctx, stop := supervise.OnSignal(context.Background(), harness.InterruptGrace(grace))
	defer stop()
	r, err := harness.Run(ctx, p, harness.RunConfig{
		Version:    version,
		Stdout:     stdout,
		Stderr:     stderr,
		Thresholds: verdict.DefaultThresholds,
		Agents:     ag,
	})
	sweepSummary(os.Getenv("GITHUB_STEP_SUMMARY"), stderr, r, p.Secrets)
	switch {
	case err == nil:
		return sweepGate(r, p.Compare.FailOn)
	case errors.Is(err, harness.ErrNoCleanHeadline), errors.Is(err, harness.ErrInterrupted), errors.Is(err, harness.ErrResilience), errors.Is(err, harness.ErrRefused):
		return exitStatus{1, err}
	}
	return err
}

// sweepGate applies FAIL_ON to a finished two-arm sweep: exit 1 when
// the headline's verdict is one the policy names, saying so after the
// result was written (the reason stays with the reviewer).
func sweepGate(r *result.Result, policy string) error {
	slower, inconclusive, _ := result.ParseFailOn(policy) // checked before anything booted
	if r == nil || r.Comparison == nil || !slower && !inconclusive {
		return nil
	}
	h := r.Comparison.Headline
	switch {
	case slower && h.Verdict == result.CompareSlower, inconclusive && h.Verdict == result.CompareCannotConclude:
		return exitStatus{1, fmt.Errorf("FAIL_ON (--fail-on) %s: %s", policy, gateWhy(r.Comparison, h))}
	}
	return nil
}

// gateWhy is why FAIL_ON failed the run, in the table's words: a verdict
// the table above gave with its figures, said once more only by its
// test's level, and why that level is below ALPHA when a sequential look
// lowered it (the level of 0.0479 once came with no word on why it was
// not 0.05); a headline that could not conclude points to the reason
// the comparison gave, rather than print it again.
func gateWhy(c *result.Comparison, h result.ComparedPoint) string {
	switch {
	case h.Verdict == result.CompareCannotConclude:
		return fmt.Sprintf("the headline %s: why is under the comparison above", result.Phrase(h.Verdict))
	case h.PValue == nil:
		return "the headline is " + result.VerdictPhrase(h)
	}
	why := fmt.Sprintf("the headline is %s: %s, below the level %s", result.VerdictPhrase(h), result.FormatP(h.PValue), result.FormatLevel(h.Level))
	if lw := result.LevelWhy(c.Stop, h.NPairs, c.Reps, c.Alpha, h.Level); lw != "" {
		why += " of " + lw
	}
	return why
}

// sweepSummary writes the sweep's table and chart to the job summary when
// there is one (GITHUB_STEP_SUMMARY), also without a clean headline: the
// summary says why. r was redacted by harness.Run; the Markdown passes
// through the secrets again on its way out. A failure is a warning.
func sweepSummary(path string, stderr io.Writer, r *result.Result, secrets *redact.Set) {
	if path == "" || r == nil {
		return
	}
	publish.WriteSummary(stderr, path, r, "ceiling sweep: "+r.Meta.Generator, secrets)
}
