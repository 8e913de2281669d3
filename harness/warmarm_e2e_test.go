//go:build e2e

package harness_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

// slowTarget is refserver made slow to boot and to stop, as a Pusher or
// Node server is: it listens ready after 1 s, and drains 2 s after
// SIGTERM (--ready-delay, --stop-delay; the server takes 2 s and
// 4 s, halved here for the lane's time).
func slowTarget(t *testing.T) target.Spec {
	t.Helper()
	tg := refTarget(t)
	tg.Name = "refserver-slow"
	tg.Command = append(slices.Clone(tg.Command), "--ready-delay", "1s", "--stop-delay", "2s")
	tg.StopGrace = "6s"
	return tg
}

// slowOptions is the default comparison (the headline's rung, COMPARE_
// ARMS=auto, sized windows) on a two-rung ladder, under budget.
func slowOptions(t *testing.T, budget time.Duration) *testSweep {
	t.Helper()
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {16, 32}})
	o.BaseTargetFile = "base"
	o.SetTwoArmDefaults(result.ScopeHeadline)
	o.Duration, o.Warmup = time.Second, 300*time.Millisecond
	o.CompareBudget = budget
	return o
}

// A server that boots in 1 s and drains for 2 s, compared with itself
// and with a planted regression under the default rule: the first block
// times its boot and stop, the arms run warm (kept up, frozen between
// their points, booted afresh after the first pass and every few
// blocks), the run ends within its budget with the verdict the servers
// deserve, the slower one profiled after its verdict, and no server
// outlives it.
func TestTwoArmSlowServerWarmArms(t *testing.T) {
	needProcs(t)
	slow := slowTarget(t)
	spin := slow
	spin.Name = "refserver-slow-spin"
	spin.Command = append(slices.Clone(slow.Command), "--spin", "30us")
	for _, tc := range []struct {
		name   string
		head   target.Spec
		slower bool
	}{{"A/A", slow, false}, {"A/B --spin 30us", spin, true}} {
		t.Run(tc.name, func(t *testing.T) {
			// A slower head ends when the paired test decides, and
			// its profiled blocks (about 16 s) follow within the
			// budget: 90 s leave them room after a few blocks lost to
			// the hypervisor's steal are run again (a CI machine's
			// decided at 68 s of 75 s). An unchanged head runs its
			// whole budget: 60 s buy the blocks the test needs (a
			// fresh CI machine's first pair priced the first pass and
			// 6 blocks at 50 s, and 45 s was refused as it should be),
			// and keep the lane short.
			budget := 60 * time.Second
			if tc.slower {
				budget = 90 * time.Second
			}
			o := slowOptions(t, budget)
			r, table, err := runTwoArm(t, o, slow, tc.head)
			skipIfContended(t, r, err)
			a := r.Arms
			if a == nil || a.Mode != result.ArmsWarm || a.CostsFrom != "measured" {
				t.Fatalf("arms %+v: want warm, on measured costs", a)
			}
			// Lower bounds only: a busy machine makes them later.
			if a.Base.ReadyNs < int64(time.Second) || a.Head.StopNs < int64(2*time.Second) || a.Base.Boots < 2 {
				t.Errorf("costs base %+v head %+v: want ready 1 s and stop 2 s or more, booted twice or more", a.Base, a.Head)
			}
			// The budget holds the whole run (the last attempt's, when
			// contention made the test run it again); the harness's own
			// start and the result's last write lie outside it.
			if d, ok := r.Took(); !ok || d > o.CompareBudget+5*time.Second {
				t.Errorf("the run took %s of its %s budget", d, o.CompareBudget)
			}
			for _, p := range r.Curve {
				if p.Role == result.RoleCompare && (p.ReadyNs != 0 || p.StopNs != 0) {
					t.Errorf("point %d booted its own server in warm arms", p.Index)
				}
			}
			h := r.Comparison.Headline
			t.Logf("%s: %s; %s", tc.name, result.ComparedLine(h, r.Comparison.Confidence), result.WhyStopped(r))
			if h.Ended == nil || !strings.Contains(flatText(table), "stopped: "+h.Ended.Text[:20]) {
				t.Errorf("why the blocks stopped is not in the table: %+v\n%s", h.Ended, table)
			}
			switch {
			case h.NPairs < 6 && contendedAt(r, 10):
				notQuiet(t, "%s: %d pairs, the others on contended CPUs: %s", tc.name, h.NPairs, contendedReasons(r))
			case tc.slower && h.Verdict != result.CompareSlower:
				t.Errorf("A/B called %s: %s", h.Verdict, h.Reason)
			case !tc.slower && (h.Verdict == result.CompareCannotConclude || h.ChangePct == nil || math.Abs(*h.ChangePct) > 10):
				// An A/A call at alpha is allowed; a change of 10% is no
				// false alarm but a broken arm (frozen while measured,
				// or measured cold).
				t.Errorf("A/A: %s", h.Reason)
			}
			// A slower headline is profiled (COMPARE_PROFILE=auto) in
			// blocks after those that decided, on the warm arms: the
			// planted spin grows most.
			d := h.ProfileDiff
			switch {
			case !tc.slower:
				if d != nil {
					t.Errorf("A/A profiled: %+v", d)
				}
			case cpuprof.Check(cpuprof.Real()).Reason != "":
				notQuiet(t, "perf cannot profile here: %s (.ci/run installs linux-perf)", cpuprof.Check(cpuprof.Real()).Reason)
			case d != nil && strings.Contains(d.Reason, "did not fit") && contendedAt(r, 10):
				// Blocks lost to other work spent the budget the
				// profiled blocks would have had: rightly none.
				notQuiet(t, "A/B: %s, the blocks having run on contended CPUs: %s", d.Reason, contendedReasons(r))
			case d == nil || d.Reason != "":
				t.Errorf("A/B: no profile diff: %+v", d)
			default:
				grew := d.Listed(result.FrameGrew, 3)
				if !slices.ContainsFunc(grew, func(f result.ProfileFrame) bool { return strings.HasSuffix(f.Function, "refserver.spin") }) {
					t.Errorf("spin is not among the 3 frames that grew most: %+v", grew)
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(o.Out), d.FlamegraphFile)); err != nil {
					t.Errorf("flame graph: %v", err)
				}
				if n := slices.IndexFunc(r.Curve, func(p result.Point) bool { return p.Role == result.RoleProfile }); n < 0 ||
					slices.ContainsFunc(r.Curve[n:], func(p result.Point) bool { return p.Role == result.RoleCompare }) {
					t.Errorf("the profiled points do not follow the compared blocks")
				}
			}
			checkNoneLeft(t, "--stop-delay")
		})
	}
}

// checkNoneLeft fails when a process whose command line holds mark is
// still running.
func checkNoneLeft(t *testing.T, mark string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), mark) {
			t.Errorf("%s outlived the sweep: %s", filepath.Dir(f), strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}
