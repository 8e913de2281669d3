//go:build e2e

package harness_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// The closed-loop verdict against real processes: refserver on CPU 1,
// `ceiling load` on CPU 0 with GOMAXPROCS=1, judged by the harness from
// what it sampled and what the generator reported (generator.load_threads).

// TestGeneratorStarvedByOutsideHogIsCapped shares the generator's CPU with
// busy loops that are no part of its process tree (the test starts them,
// not the harness): its load threads wait for the CPU most of their
// runnable time, and the point must read as generator-capped (or both), a
// lower bound, on that evidence. Bounded: one 2 s point, the hog killed
// at cleanup and by timeout(1).
func TestGeneratorStarvedByOutsideHogIsCapped(t *testing.T) {
	needProcs(t)
	startHog(t, pinning.CPUSet{0}, time.Minute)
	o, r := onePoint(t, 10, 16, true)
	for _, p := range measuredPoints(t, r) {
		lt := p.Generator.LoadThreads
		t.Logf("point %d: generator %.0f%% of its core, CPU 0 %.0f%% busy; load threads %+v; old all-thread run delay %.1f%% of the window; %s: %s",
			p.Index, p.GeneratorCPU.FractionMean*100, p.GeneratorCPU.PinnedBusy*100, lt,
			100*float64(p.Generator.OSRunDelayNs)/float64(o.Duration), p.Verdict, p.VerdictReason)
		if lt == nil || lt.Threads < 1 || lt.RunDelayFraction <= verdict.DefaultThresholds.RunDelayFrac {
			t.Errorf("point %d: load threads %+v beside a hog on their CPU: want a run delay fraction above %.2f", p.Index, lt, verdict.DefaultThresholds.RunDelayFrac)
		}
		if !result.IsLowerBound(p.Verdict) || !p.LowerBound || !strings.Contains(p.VerdictReason, "load threads waited") {
			t.Errorf("point %d: verdict %s (%s), lower bound %v: want generator-capped or both on the load threads' run delay", p.Index, p.Verdict, p.VerdictReason, p.LowerBound)
		}
		if p.Clean {
			t.Errorf("point %d measured beside a hog is clean", p.Index)
		}
	}
}

// onePoint sweeps one point (and its A-A repeat when it is clean) of
// refserver at batch and conns, a 2 s window, bounded at 45 s with its
// retries; a result that is not publishable is still a result here.
// planted: the test put a hog on a pinned CPU, and the sweep runs once.
func onePoint(t *testing.T, batch, conns int, planted bool) (*testSweep, *result.Result) {
	t.Helper()
	o := miniOptions(t, knob.Ladder{batch}, knob.ConnsLadders{batch: {conns}})
	o.Duration = 2 * time.Second
	o.Planted = planted
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	r, _, err := runSweep(t, ctx, o, refTarget(t))
	if err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatal(err)
	}
	return o, r
}

// measuredPoints is the sweep's points that measured, each failed one
// logged; a sweep where none did fails the test: nothing was judged.
func measuredPoints(t *testing.T, r *result.Result) []result.Point {
	t.Helper()
	var ok []result.Point
	for _, p := range r.Curve {
		if p.Status != result.StatusOK {
			t.Logf("point %d failed: %s", p.Index, p.FailReason)
			continue
		}
		ok = append(ok, p)
	}
	if len(ok) == 0 {
		t.Fatal("no point measured: nothing was judged")
	}
	return ok
}

// TestEagerReaderThatKeepsUpIsNotCapped runs batch 1, where the generator
// reads every reply as it comes and spends about as much CPU per echo as
// the server (issue 11 measured 4.25 µs on the event loops against
// refserver's 4.6 to 4.9): near 90% of its core, and still waiting for the
// server part of the time. With nothing else on its CPU its load threads
// do not wait for it, and the point must not read as generator-capped.
//
// A point whose threads waited (either of the verdict's two signs: the
// load threads' run delay, or the goroutines' runnable p99) while other
// work shared the generator's CPU beyond quietMargin (this machine runs
// other builds) cannot say that and is passed over, named (a fresh-clone
// run: 19% of CPU 0 not the generator's, runnable p99 1.05 ms): an eager reader at 84% of its core lost 13%
// of its runnable time to 12% of other work there, waiting truly, but not
// this test's subject. A point that did not wait is judged even when the
// harness calls it contended: the busy-but-unattributed part of the CPU
// may be the generator's own softirq time, which /proc/stat does not
// charge to its process (a run at 80% of its core on a CPU 95% busy
// waited 1.7%; after the loops got cheaper, 74% on a CPU 94% busy). The
// test skips when every point (the headline and its A-A repeat) was
// passed over.
func TestEagerReaderThatKeepsUpIsNotCapped(t *testing.T) {
	const quietMargin = 0.05
	needProcs(t)
	// 32 connections: enough to keep the server at its core, few enough
	// that with --io goroutines the goroutines queued on the reader's one P
	// stay well under the 1 ms runnable p99 (at 64 a quiet run read 0.5 to
	// 0.66 ms, one bucket under it).
	o, r := onePoint(t, 1, 32, false)
	var passed []string
	checked := 0
	for _, p := range measuredPoints(t, r) {
		lt := p.Generator.LoadThreads
		th := verdict.DefaultThresholds
		runnable := time.Duration(p.Generator.RunnableP99Ns)
		if other := p.GeneratorCPU.PinnedBusy - p.GeneratorCPU.FractionMean; other > quietMargin &&
			(lt != nil && lt.RunDelayFraction > th.RunDelayFrac || runnable > th.RunnableP99) {
			waited := 0.0
			if lt != nil {
				waited = lt.RunDelayFraction * 100
			}
			passed = append(passed, fmt.Sprintf("point %d: the load threads waited %.1f%% of their runnable time (goroutines runnable p99 %s) on a CPU %.0f%% busy, %.0f%% of it the generator's",
				p.Index, waited, runnable, p.GeneratorCPU.PinnedBusy*100, p.GeneratorCPU.FractionMean*100))
			continue
		}
		checked++
		t.Logf("point %d: generator %.0f%% of its core, CPU 0 %.0f%% busy, server %.0f%%; engine %q, loops %+v; load threads %+v; old all-thread run delay %.1f%% of the window; %s: %s",
			p.Index, p.GeneratorCPU.FractionMean*100, p.GeneratorCPU.PinnedBusy*100, p.ServerCPU.FractionMean*100, p.Generator.Engine, p.Generator.Loops, lt,
			100*float64(p.Generator.OSRunDelayNs)/float64(o.Duration), p.Verdict, p.VerdictReason)
		if lt == nil || lt.Threads < 1 {
			t.Fatalf("point %d: no load threads reported (%+v)", p.Index, lt)
		}
		if lt.RunDelayFraction > verdict.DefaultThresholds.RunDelayFrac {
			t.Errorf("point %d: load threads waited %.1f%% of their runnable time with their CPU to themselves", p.Index, lt.RunDelayFraction*100)
		}
		if result.IsLowerBound(p.Verdict) {
			t.Errorf("point %d: verdict %s (%s): an eager reader that kept up read as capped", p.Index, p.Verdict, p.VerdictReason)
		}
		if f := p.GeneratorCPU.FractionMean; f < 0.75 {
			t.Logf("point %d: the generator used %.0f%% of its core, below the ~90%% this test is about: the verdict above holds, but it did not exercise a busy reader", p.Index, f*100)
		}
	}
	if checked == 0 {
		notQuiet(t, "the machine was not quiet, no point had its CPU to itself:\n%s", strings.Join(passed, "\n"))
	}
	for _, why := range passed {
		t.Logf("passed over (not quiet): %s", why)
	}
}
