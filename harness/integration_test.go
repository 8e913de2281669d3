package harness_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/google/go-cmp/cmp"
)

// bin holds ceiling and refserver, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	pinning.Init() // children started through pinning.Command re-exec this binary
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if runtime.GOOS == "linux" && !testing.Short() {
		dir, err := os.MkdirTemp("", "ceiling-harness-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		cmd := exec.Command("go", "build", "-o", dir+"/", "../cmd/ceiling", "../cmd/refserver")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build ceiling and refserver:", err)
			return 1
		}
		bin = dir
	}
	return m.Run()
}

// needProcs skips where the real processes cannot run: not Linux, -short,
// or fewer than two CPUs to pin the sides apart.
func needProcs(t *testing.T) {
	t.Helper()
	if bin == "" {
		t.Skip("needs Linux and the built binaries (not -short)")
	}
	if set, err := pinning.Granted(os.Getpid()); err != nil || !set.Contains(0) || !set.Contains(1) {
		t.Skipf("needs CPUs 0 and 1 (have %v, %v)", set, err)
	}
}

// refTarget is benchmark/targets/refserver.json with bin/refserver from
// the test build.
func refTarget(t *testing.T) target.Spec {
	t.Helper()
	tg, err := target.Load("../benchmark/targets/refserver.json")
	if err != nil {
		t.Fatal(err)
	}
	tg.Command[0] = filepath.Join(bin, "refserver")
	tg.ReadyTimeout = "10s"
	tg.StopGrace = "3s"
	return tg
}

// miniOptions: server on CPU 1, generator on CPU 0, short points.
func miniOptions(t *testing.T, batches knob.Ladder, conns knob.ConnsLadders) *testSweep {
	t.Helper()
	o := knob.DefaultOptions(false)
	o.ServerCPUs, o.GeneratorCPUs = pinning.CPUSet{1}, pinning.CPUSet{0}
	o.BatchLadder, o.ConnsLadders, o.HeadlineBatch = batches, conns, batches[0]
	o.Duration, o.Warmup = time.Second, 300*time.Millisecond
	o.Out = filepath.Join(t.TempDir(), "ceiling.json")
	o.WorkDir = t.TempDir()
	o.Generator = filepath.Join(bin, "ceiling") + " load"
	if _, err := harness.ResolveKnobs(o, pinning.CPUSet{0, 1}); err != nil {
		t.Fatal(err)
	}
	return &testSweep{Options: o}
}

// testSweep is a sweep as a test builds it: the knobs, and what its run
// gets beyond them (the agents' network and seams).
type testSweep struct {
	knob.Options
	AgentsEnv harness.AgentsEnv
}

// plan resolves o as the CLI does, with the target files given as read:
// BASE_TARGET's path gets base, any other path head.
func plan(t *testing.T, o *testSweep, head target.Spec, base *target.Spec) *harness.Plan {
	t.Helper()
	p, err := harness.Resolve(o.Options, harness.Env{
		Available: pinning.CPUSet{0, 1},
		LoadTarget: func(path string) (target.Spec, error) {
			if base != nil && path == o.BaseTargetFile {
				return *base, nil
			}
			return head, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
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

// quietAttempts bounds how many times a sweep that found its pinned CPUs
// shared with other work (ErrContended) is run again before the test
// gives up (skipIfContended: a skip outside CI, a failure under CI=true).
const quietAttempts = 3

func runSweep(t *testing.T, ctx context.Context, o *testSweep, tg target.Spec) (*harness.Result, string, error) {
	t.Helper()
	return retryContended(t, func() (*harness.Result, string, error) { return runSweepOnce(t, ctx, o, tg) })
}

// runSweepOnce is runSweep without the retry: for sweeps that cannot be
// run twice (AGENTS_LISTEN's agents serve one sweep, then exit).
func runSweepOnce(t *testing.T, ctx context.Context, o *testSweep, tg target.Spec) (*harness.Result, string, error) {
	t.Helper()
	return func() (*harness.Result, string, error) {
		var stdout, stderr bytes.Buffer
		p := plan(t, o, tg, nil)
		defer checkPlanUnchanged(t, p, plan(t, o, tg, nil))
		_, err := harness.Run(ctx, p, harness.RunConfig{
			Agents: o.AgentsEnv, Version: "test", Stdout: &stdout, Stderr: &stderr,
			Thresholds: harness.DefaultThresholds, Getenv: func(string) string { return "" },
		})
		t.Logf("stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
		data, rerr := os.ReadFile(o.Out)
		if rerr != nil {
			t.Fatalf("result not written: %v (sweep error %v)", rerr, err)
		}
		var r harness.Result
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("result: %v", err)
		}
		return &r, stdout.String(), err
	}()
}

// retryContended runs a sweep again, up to quietAttempts in all, while it
// ends in ErrContended (the machine was busy: the contended points name
// who with), pausing between attempts; it returns the last attempt.
func retryContended(t *testing.T, run func() (*harness.Result, string, error)) (*harness.Result, string, error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r, table, err := run()
		if !errors.Is(err, harness.ErrContended) || attempt == quietAttempts {
			return r, table, err
		}
		var why []string
		for _, p := range r.Curve {
			if p.Contended {
				why = append(why, fmt.Sprintf("point %d: %s", p.Index, harness.Contention(p.ServerCPU, p.GeneratorCPU)))
			}
		}
		t.Logf("attempt %d of %d ran on contended CPUs, again in 5 s:\n%s", attempt, quietAttempts, strings.Join(why, "\n"))
		time.Sleep(5 * time.Second)
	}
}

// skipIfContended skips a test whose sweep had no publishable headline
// because the harness found its pinned CPUs shared with other work (this
// machine is shared with other builds): what the test checks next needs a
// quiet machine, and the harness did its job by refusing the headline.
func skipIfContended(t *testing.T, r *harness.Result, err error) {
	t.Helper()
	if !errors.Is(err, harness.ErrContended) {
		return
	}
	var why []string
	for _, p := range r.Curve {
		if p.Contended {
			why = append(why, fmt.Sprintf("point %d: %s", p.Index, harness.Contention(p.ServerCPU, p.GeneratorCPU)))
		}
	}
	notQuiet(t, "the machine was not quiet, no uncontended headline (%v):\n%s", err, strings.Join(why, "\n"))
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

func TestMiniSweep(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10, 100}, knob.ConnsLadders{10: {4, 8}, 100: {2, 4}})
	r, table, err := runSweep(t, context.Background(), o, refTarget(t))
	skipIfContended(t, r, err)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}

	if diff := cmp.Diff(
		harness.Pinning{Supported: true, ServerRequested: []int{1}, ServerGranted: []int{1}, GeneratorRequested: []int{0}, GeneratorGranted: []int{0}, SMTSiblings: [][2]int{}},
		r.Meta.Pinning, cmpIgnoreNoFile); diff != "" {
		t.Errorf("pinning (-want +got):\n%s", diff)
	}
	if r.Meta.Pinning.NoFileLimit < 1024 {
		t.Errorf("nofile limit %d, want raised", r.Meta.Pinning.NoFileLimit)
	}
	key := func(b, c int) harness.PointKey { return harness.PointKey{Batch: b, Connections: c} }
	if diff := cmp.Diff([]harness.PointKey{key(10, 4), key(100, 2), key(10, 8), key(100, 4)}, r.Config.Order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got, want := r.Regime, "echo, batch 10, 256 B, 1 server core, 1 generator core"; got != want {
		t.Errorf("regime %q, want %q", got, want)
	}
	if len(r.Curve) != 5 {
		t.Fatalf("curve has %d points, want 4 + the A-A repeat", len(r.Curve))
	}
	verdicts := []string{harness.VerdictServerSaturated, harness.VerdictGeneratorCapped, harness.VerdictBoth, harness.VerdictNeither}
	// CPU is charged in 10 ms ticks: a side starved by other work on this
	// shared machine can read 0 cores for a whole point. So every point
	// must be sampled, and each side must read some CPU over the sweep.
	cpuSum := map[string]float64{}
	for i, p := range r.Curve {
		if p.Status != harness.StatusOK {
			t.Errorf("point %d failed: %s\n%s", p.Index, p.FailReason, p.LogTail)
			continue
		}
		if p.Index != i+1 {
			t.Errorf("point %d has index %d", i+1, p.Index)
		}
		contended := p.Contended
		if contended != (harness.Contention(p.ServerCPU, p.GeneratorCPU) != "") || contended && p.Clean {
			t.Errorf("point %d: contended %v, clean %v, from cpus %+v %+v", p.Index, p.Contended, p.Clean, p.ServerCPU, p.GeneratorCPU)
		}
		for side, c := range map[string]harness.CPUStats{"server": p.ServerCPU, "generator": p.GeneratorCPU} {
			if c.StealFraction != -1 && (c.StealFraction < 0 || c.StealFraction > 1) {
				t.Errorf("point %d %s steal fraction %v: want -1 (unknown) or a fraction", p.Index, side, c.StealFraction)
			}
		}
		switch {
		case p.ThroughputPerS > 0 && (p.LatencyNs.Count == 0 || p.LatencyNs.P99 <= 0):
			t.Errorf("point %d: throughput %v without latency %+v", p.Index, p.ThroughputPerS, p.LatencyNs)
		case p.ThroughputPerS <= 0 && (p.Clean || !contended):
			t.Errorf("point %d: nothing measured (clean %v) on CPUs not busy with other work", p.Index, p.Clean)
		case p.ThroughputPerS <= 0:
			t.Logf("point %d measured nothing: its CPUs were full of other work (%s)", p.Index, p.VerdictReason)
		}
		for side, c := range map[string]harness.CPUStats{"server": p.ServerCPU, "generator": p.GeneratorCPU} {
			if c.Samples < 2 || c.PinnedCores != 1 || c.MeanCores < 0 || c.FractionMean != c.MeanCores {
				t.Errorf("point %d %s cpu %+v: want samples of 1 pinned core", p.Index, side, c)
			}
			cpuSum[side] += c.MeanCores
		}
		if !slices.Contains(verdicts, p.Verdict) || p.VerdictReason == "" {
			t.Errorf("point %d verdict %q (%q)", p.Index, p.Verdict, p.VerdictReason)
		}
		if p.LowerBound != harness.IsLowerBound(p.Verdict) {
			t.Errorf("point %d lower_bound %v with verdict %s", p.Index, p.LowerBound, p.Verdict)
		}
	}
	for _, side := range []string{"server", "generator"} {
		if cpuSum[side] <= 0 {
			t.Errorf("the %s read no CPU in any point", side)
		}
	}
	aa := r.Curve[4]
	if aa.Role != harness.RoleAARepeat || aa.Batch != r.Headline.Batch || aa.Connections != r.Headline.Connections {
		t.Errorf("last point %+v is not the A-A repeat of the headline %+v", aa, r.Headline)
	}
	if !r.Headline.Clean || r.Headline.Batch != 10 || r.Headline.ThroughputPerS <= 0 || r.Headline.LatencyNs.P99 <= 0 {
		t.Errorf("headline %+v", r.Headline)
	}
	switch {
	case r.NoiseFloorPct != nil:
		if want := *harness.NoiseFloorPct(r.Headline.ThroughputPerS, aa.ThroughputPerS); *r.NoiseFloorPct != want {
			t.Errorf("noise floor %v, want %v", *r.NoiseFloorPct, want)
		}
	case aa.Clean || !aa.Contended:
		t.Errorf("no noise floor from the A-A repeat %+v", aa)
	default:
		t.Logf("no noise floor: the A-A repeat was starved by other work on its CPUs (%s)", aa.VerdictReason)
	}
	if len(r.Ceilings) != 2 {
		t.Errorf("ceilings %+v", r.Ceilings)
	}
	for _, c := range r.Ceilings {
		if c.Found {
			continue
		}
		// Only contention may leave a batch without a ceiling here.
		for _, p := range r.Curve {
			if p.Batch == c.Batch && p.Role == harness.RoleSweep && !p.Contended {
				t.Errorf("batch %d has no ceiling, yet point %d ran uncontended: %+v", c.Batch, p.Index, p)
			}
		}
	}
	if r.Meta.Generator != "ceiling" || r.Meta.Target.Name != "refserver" || r.Meta.GitRef == "" || r.Meta.FinishedAt.IsZero() {
		t.Errorf("meta %+v", r.Meta)
	}
	// The publisher must accept the document as written.
	data, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := publish.Read(data, o.Out); err != nil {
		t.Errorf("publish.Read rejects the sweep document: %v", err)
	}
	if !strings.Contains(table, "noise floor (A-A)") || !strings.Contains(table, "errors: none") {
		t.Errorf("table lacks the noise floor or the errors line:\n%s", table)
	}
}

var cmpIgnoreNoFile = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".NoFileLimit" }, cmp.Ignore())

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServerExitsMidPoint(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	// The first boot dies 0.8 s in (inside the measured window); later
	// boots serve normally.
	srv := script(t, dir, "flaky-server", fmt.Sprintf(`flag=%s/died-once
if [ -e "$flag" ]; then exec %s/refserver --addr "$1"; fi
touch "$flag"
%s/refserver --addr "$1" & pid=$!
sleep 0.8
echo "flaky-server: dying on purpose"
kill -9 $pid
exit 3
`, dir, bin, bin))
	tg := refTarget(t)
	tg.Command = []string{srv, "{addr}"}
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2, 4}})
	r, _, err := runSweep(t, context.Background(), o, tg)
	wantPoints := 3 // two rungs and the A-A repeat
	if err != nil {
		if !errors.Is(err, harness.ErrNoCleanHeadline) {
			t.Fatalf("sweep: %v (want it to go on past the failed point)", err)
		}
		// Only other work starving the later points on this shared
		// machine may leave them unclean; then there is no repeat.
		wantPoints = 2
		for _, p := range r.Curve[1:] {
			if !p.Contended {
				t.Errorf("no clean headline, yet point %d ran on quiet CPUs: %+v", p.Index, p)
			}
		}
	}
	if len(r.Curve) != wantPoints {
		t.Fatalf("curve has %d points, want %d", len(r.Curve), wantPoints)
	}
	p := r.Curve[0]
	if p.Status != harness.StatusFailed || p.Verdict != harness.VerdictFailed || !strings.Contains(p.FailReason, "server exited") {
		t.Errorf("first point: status %s verdict %s reason %q, want failed: server exited", p.Status, p.Verdict, p.FailReason)
	}
	if !strings.Contains(p.LogTail, "dying on purpose") {
		t.Errorf("log tail %q lacks the server's last words", p.LogTail)
	}
	for _, p := range r.Curve[1:] {
		if p.Status != harness.StatusOK {
			t.Errorf("point %d after the failure: %s %s", p.Index, p.Status, p.FailReason)
		}
	}
}

func TestServerNeverReady(t *testing.T) {
	needProcs(t)
	tg := refTarget(t)
	tg.Ready = "log:this line is never printed"
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	o.ReadyTimeout = 3 * time.Second // long enough for a loaded machine to start refserver and log its first line
	r, table, err := runSweep(t, context.Background(), o, tg)
	if !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatalf("error %v, want ErrNoCleanHeadline (exit 1) with the result written", err)
	}
	if len(r.Curve) != 1 || r.Curve[0].Status != harness.StatusFailed || !strings.Contains(r.Curve[0].FailReason, "never became ready") {
		t.Fatalf("curve %+v", r.Curve)
	}
	if !strings.Contains(r.Curve[0].LogTail, "listening") {
		t.Errorf("log tail %q lacks the server's log", r.Curve[0].LogTail)
	}
	if r.Headline.Clean || r.NoiseFloorPct != nil {
		t.Errorf("headline %+v, noise %v", r.Headline, r.NoiseFloorPct)
	}
	if !strings.Contains(table, "ERRORS: 1 of 1 points failed") {
		t.Errorf("table does not lead with the failure:\n%s", table)
	}
}

// TestThrottledGeneratorIsCapped runs the generator through a GENERATOR
// wrapper that shares the generator's core with a busy loop at normal
// priority while the generator runs at nice 19: its threads wait for the
// CPU most of the time, which must read as generator-capped (a lower
// bound), never as the server's ceiling.
func TestThrottledGeneratorIsCapped(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	wrap := script(t, dir, "throttled-gen", fmt.Sprintf(`( while :; do :; done ) & hog=$!
trap 'kill $hog 2>/dev/null' EXIT
nice -n 19 %s/ceiling load "$@"
`, bin))
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {8}})
	o.Generator = wrap
	r, table, err := runSweep(t, context.Background(), o, refTarget(t))
	if err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatal(err)
	}
	for _, p := range r.Curve {
		if p.Status != harness.StatusOK {
			t.Errorf("point %d failed: %s", p.Index, p.FailReason)
			continue
		}
		if p.Verdict != harness.VerdictGeneratorCapped && p.Verdict != harness.VerdictBoth || !p.LowerBound {
			t.Errorf("point %d: verdict %s (%s), lower bound %v; want generator-capped", p.Index, p.Verdict, p.VerdictReason, p.LowerBound)
		}
	}
	if !strings.Contains(table, "(lower bound)") || !strings.Contains(table, ">=") {
		t.Errorf("table does not mark the lower bound:\n%s", table)
	}
}

// sweepCommand is `ceiling sweep` as a process (server on CPU 1,
// generator on CPU 0, the test build's refserver), its knob variables
// cleared so the host's cannot leak in.
func sweepCommand(t *testing.T, dir, out string, args ...string) *exec.Cmd {
	t.Helper()
	return ceilingSweep(t, refTarget(t), dir, out, nil, args...)
}

// TestSIGINTMidSweep interrupts `ceiling sweep` during its second point:
// it must exit 1 with a partial result, and leave no process behind.
func TestSIGINTMidSweep(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	cmd := sweepCommand(t, dir, out, "--batch-ladder", "10 100",
		"--conns-ladder", "10=2,4", "--conns-ladder", "100=2,4", "--duration", "2s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// Read progress until point 2 starts, then wait for its measure marker:
	// both children are up and in the window (a fixed sleep raced the
	// boot on a loaded machine).
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "point 2/") {
			break
		}
	}
	waitMarker(t, dir, "point-002-*")
	kids, _ := supervise.Descendants(cmd.Process.Pid)
	if len(kids) < 2 {
		t.Errorf("before SIGINT the harness has children %v, want the server and the generator", kids)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	t.Logf("harness stderr:\n%s", log.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want status 1", err)
	}
	for _, pid := range kids {
		if supervise.Alive(pid) {
			t.Errorf("process %d outlived the harness", pid)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no partial result: %v", err)
	}
	var r harness.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if !r.Partial || !strings.Contains(r.PartialReason, "interrupted") {
		t.Errorf("partial %v (%q), want marked partial", r.Partial, r.PartialReason)
	}
	if len(r.Curve) < 1 || len(r.Curve) > 2 || r.Curve[0].Status != harness.StatusOK {
		t.Errorf("curve %+v: want the first point done and at most the interrupted one", r.Curve)
	}
}

// TestHeadroomProbe caps the generator at half its core through a real
// cgroup: the probe point must exist, and the generator's sampled CPU must
// show the cap took hold.
func TestHeadroomProbe(t *testing.T) {
	needProcs(t)
	if os.Geteuid() != 0 {
		t.Skip("the headroom probe writes to the cgroup tree: needs root here")
	}
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {8}})
	o.HeadroomProbe = 0.5
	r, table, err := runSweep(t, context.Background(), o, refTarget(t))
	if errors.Is(err, harness.ErrNoCleanHeadline) && len(r.Curve) == 1 && r.Curve[0].Contended {
		// No headline, no probe: say so rather than pass.
		notQuiet(t, "the only point was starved by other work on the generator's CPU (%s): nothing to probe", r.Curve[0].VerdictReason)
	}
	if err != nil {
		t.Fatal(err)
	}
	h := r.HeadroomProbe
	if h == nil || len(r.Curve) != 3 || r.Curve[2].Role != harness.RoleHeadroom {
		t.Fatalf("probe %+v, curve of %d", h, len(r.Curve))
	}
	if h.Status != harness.StatusOK || h.Cgroup == "" || h.ThroughputPerS <= 0 {
		t.Fatalf("probe %+v", h)
	}
	// A 50% quota: the tree cannot average much more than half a core.
	if g := r.Curve[2].GeneratorCPU; g.Samples == 0 || g.MeanCores > 0.6 {
		t.Errorf("generator under a 50%% quota used %.2f cores (%d samples)", g.MeanCores, g.Samples)
	}
	if !strings.Contains(table, "headroom probe (point 3)") {
		t.Errorf("table lacks the probe's conclusion:\n%s", table)
	}
	// Wherever pinning put it (v1 or v2, under our own cgroup or a root):
	// a check of one fixed path passes whenever it is elsewhere.
	var left []string
	prefix := "ceiling-headroom-" + supervise.RunID() + "-"
	_ = filepath.WalkDir("/sys/fs/cgroup", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), prefix) {
			left = append(left, path)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("cgroups left behind: %v", left)
	}
}

// waitMarker waits until a point directory matching pattern under dir has
// its generator's measure marker: server and generator are both up.
func waitMarker(t *testing.T, dir, pattern string) {
	t.Helper()
	waitFile(t, dir, filepath.Join(pattern, "measure.marker"))
}

// TestSIGKILLHarnessTakesChildren kills `ceiling sweep` outright during a
// point: nothing can run in the harness then, so only the parent-death
// signal set on its children can take them down.
func TestSIGKILLHarnessTakesChildren(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	cmd := sweepCommand(t, dir, filepath.Join(dir, "out.json"), "--batch-ladder", "10", "--conns-ladder", "10=2", "--duration", "3s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	waitMarker(t, dir, "point-*")
	kids, _ := supervise.Descendants(cmd.Process.Pid)
	if len(kids) < 2 {
		t.Fatalf("the harness has children %v, want the server and the generator", kids)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range kids {
		for supervise.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if supervise.Alive(pid) {
			t.Errorf("process %d outlived the killed harness", pid)
		}
	}
}

// TestFanoutMiniSweep drives the Pusher fan-out scenario through the
// target file's fanout block (URL and app credentials).
func TestFanoutMiniSweep(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {8}})
	o.Scenario = "fanout"
	r, _, err := runSweep(t, context.Background(), o, refTarget(t))
	skipIfContended(t, r, err)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Scenario != "fanout" || !strings.HasPrefix(r.Regime, "fanout, batch 10") {
		t.Errorf("scenario %q, regime %q", r.Config.Scenario, r.Regime)
	}
	for _, p := range r.Curve {
		if p.Status != harness.StatusOK || p.Errors != 0 {
			t.Errorf("point %d: %s %q, errors %d", p.Index, p.Status, p.FailReason, p.Errors)
		}
	}
	// The headline exists, so some point delivered (a starved repeat on a
	// busy machine may deliver nothing, and is then not clean).
	if !r.Headline.Clean || r.Headline.ThroughputPerS <= 0 {
		t.Errorf("headline %+v", r.Headline)
	}
	data, _ := os.ReadFile(o.Out)
	if strings.Contains(string(data), "app-secret") {
		t.Error("the result records the app secret")
	}
}

// TestNoCleanHeadlineExits1 runs the binary against a server that never
// becomes ready: the result is still written, and the exit status is 1
// (not publishable), not 0 and not 2.
func TestNoCleanHeadlineExits1(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	cmd := sweepCommand(t, dir, out, "--batch-ladder", "10", "--conns-ladder", "10=2", "--duration", "1s",
		"--ready", "log:never printed", "--ready-timeout", "500ms")
	msg, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no result written: %v", err)
	}
	var r harness.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Headline.Clean || len(r.Curve) != 1 || r.Curve[0].Verdict != harness.VerdictFailed {
		t.Errorf("headline %+v, curve %+v", r.Headline, r.Curve)
	}
	if !strings.Contains(string(msg), "no clean point at the headline batch") {
		t.Errorf("output does not say why:\n%s", msg)
	}
}

// TestGeneratorFailsIsAFailedPoint: a GENERATOR that dies before its
// window fails the point with its own output's tail; the server it was
// pointed at is stopped and the sweep writes its result.
func TestGeneratorFailsIsAFailedPoint(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	o.Generator = script(t, dir, "broken-gen", "echo 'broken-gen: cannot reach the moon' >&2\nexit 3\n")
	r, _, err := runSweep(t, context.Background(), o, refTarget(t))
	if !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatalf("error %v, want ErrNoCleanHeadline", err)
	}
	p := r.Curve[0]
	if p.Status != harness.StatusFailed || !strings.Contains(p.FailReason, "generator") || !strings.Contains(p.LogTail, "cannot reach the moon") {
		t.Errorf("point: %s %q, tail %q", p.Status, p.FailReason, p.LogTail)
	}
}
