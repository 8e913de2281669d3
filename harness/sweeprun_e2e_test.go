//go:build e2e

package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/testenv"
	"github.com/ceiling-bench/ceiling/result"
)

// quietAttempts bounds how many times a sweep that lost its outcome to
// pinned CPUs shared with other work is run again before the test gives
// up (skipIfContended: a skip outside CI, a failure under CI=true that
// names who took the CPUs). Before each retry the test waits while the
// hypervisor steals more than quietStealPct of the CPUs' time
// (testenv.WaitForSteal, bounded for the whole package), as its steal
// on a shared VM comes in bursts of minutes.
const (
	quietAttempts = 4
	quietStealPct = 3
)

// retryContended runs a sweep again, up to quietAttempts in all, while
// its points ran on contended CPUs and that cost it its outcome
// (contendedRun), waiting out the steal first; it returns the last attempt.
func retryContended(t *testing.T, run func() (*result.Result, string, error)) (*result.Result, string, error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r, table, err := run()
		if !contendedRun(r, err) || attempt == quietAttempts {
			return r, table, err
		}
		var why []string
		for _, p := range r.Curve {
			if c := result.Contention(p.ServerCPU, p.GeneratorCPU); c != "" {
				why = append(why, fmt.Sprintf("point %d (%s): %s", p.Index, p.Status, c))
			}
		}
		t.Logf("attempt %d of %d ran on contended CPUs, trying again:\n%s", attempt, quietAttempts, strings.Join(why, "\n"))
		testenv.WaitForSteal(t, quietStealPct)
	}
}

// contendedRun reports whether a sweep lost its outcome to contention:
// its headline batch was contended (ErrContended), a point failed while
// its CPUs were contended (a count check, say, whose window the
// hypervisor cut), or its comparison could not conclude (or had no time
// left to profile a slower head) and some of its points were contended.
// A sweep that failed on quiet CPUs is not run again: the tests that
// plant a failure expect one.
func contendedRun(r *result.Result, err error) bool {
	if errors.Is(err, harness.ErrContended) {
		return true
	}
	if r == nil {
		return false
	}
	if slices.ContainsFunc(r.Curve, func(p result.Point) bool {
		return p.Status == result.StatusFailed && result.Contention(p.ServerCPU, p.GeneratorCPU) != ""
	}) {
		return true
	}
	if r.Comparison == nil {
		return false
	}
	// A verdict, or the profile after it, that contended blocks' re-runs
	// left no time for.
	h := r.Comparison.Headline
	lost := h.Verdict == result.CompareCannotConclude || h.ProfileDiff != nil && strings.Contains(h.ProfileDiff.Reason, "did not fit")
	return lost && slices.ContainsFunc(r.Curve, func(p result.Point) bool { return p.Contended })
}

// skipIfContended skips a test whose sweep had no publishable headline
// because the harness found its pinned CPUs shared with other work (this
// machine is shared with other builds): what the test checks next needs a
// quiet machine, and the harness did its job by refusing the headline.
func skipIfContended(t *testing.T, r *result.Result, err error) {
	t.Helper()
	if !errors.Is(err, harness.ErrContended) {
		return
	}
	var why []string
	for _, p := range r.Curve {
		if p.Contended {
			why = append(why, fmt.Sprintf("point %d: %s", p.Index, result.Contention(p.ServerCPU, p.GeneratorCPU)))
		}
	}
	notQuiet(t, "the machine was not quiet, no uncontended headline (%v):\n%s", err, strings.Join(why, "\n"))
}

// contentionIsNotTheSubject is for the tests of a mechanism (a
// placeholder, a scenario's blocks, a third party's process tree) that
// every point shows, clean or not: a sweep that found its CPUs contended
// ran all its points all the same, so it is no failure, and no reason to
// run again. It logs who took the CPUs and says whether the sweep was
// contended; the error it returns is err without ErrContended. Tests of
// a verdict, a ceiling or a comparison need clean points and use
// retryContended and skipIfContended instead.
func contentionIsNotTheSubject(t *testing.T, r *result.Result, err error) (contended bool, rest error) {
	t.Helper()
	if !errors.Is(err, harness.ErrContended) {
		return false, err
	}
	for _, p := range r.Curve {
		if p.Contended {
			t.Logf("point %d ran on contended CPUs (not this test's subject): %s", p.Index, result.Contention(p.ServerCPU, p.GeneratorCPU))
		}
	}
	return true, nil
}

// notQuiet ends a test that found the machine busy: outside CI it skips,
// saying why; under CI=true it fails, saying why (the reasons name the
// foreign processes that took the pinned CPUs), since CI's machine runs
// nothing else and a test that passes by skipping tests nothing.
func notQuiet(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true: "+format, args...)
	}
	t.Skipf(format, args...)
}

// checkPlanUnchanged fails the test when Run wrote into its Plan: was
// is the same plan resolved again from the same knobs and targets.
func checkPlanUnchanged(t *testing.T, p, was *harness.Plan) {
	t.Helper()
	// The secrets compare by what they hold: their replacer is built
	// lazily, on first use.
	if p.Secrets.Len() != was.Secrets.Len() {
		t.Errorf("Run changed its plan's secrets: %d, was %d", p.Secrets.Len(), was.Secrets.Len())
	}
	a, b := *p, *was
	a.Secrets, b.Secrets = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("Run changed its plan:\n%+v\nwas\n%+v", a, b)
	}
}

func runSweep(t *testing.T, ctx context.Context, o *testSweep, tg target.Spec) (*result.Result, string, error) {
	t.Helper()
	if o.Planted {
		return runSweepOnce(t, ctx, o, tg)
	}
	return retryContended(t, func() (*result.Result, string, error) { return runSweepOnce(t, ctx, o, tg) })
}

// runSweepOnce is runSweep without the retry: for sweeps that cannot be
// run twice (AGENTS_LISTEN's agents serve one sweep, then exit).
func runSweepOnce(t *testing.T, ctx context.Context, o *testSweep, tg target.Spec) (*result.Result, string, error) {
	t.Helper()
	return func() (*result.Result, string, error) {
		var stdout, stderr bytes.Buffer
		p := plan(t, o, tg, nil)
		defer checkPlanUnchanged(t, p, plan(t, o, tg, nil))
		_, err := harness.Run(ctx, p, harness.RunConfig{
			Agents: o.AgentsEnv, Version: "test", Stdout: &stdout, Stderr: &stderr,
			Thresholds: verdict.DefaultThresholds, Getenv: func(string) string { return "" },
			Ceiling: filepath.Join(bin, "ceiling"), // CALIBRATE's null sink
		})
		t.Logf("stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
		data, rerr := os.ReadFile(o.Out)
		if rerr != nil {
			t.Fatalf("result not written: %v (sweep error %v)", rerr, err)
		}
		var r result.Result
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("result: %v", err)
		}
		return &r, stdout.String(), err
	}()
}
