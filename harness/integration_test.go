//go:build e2e

package harness_test

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/publish/schema"
	"github.com/ceiling-bench/ceiling/result"

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
	AgentsEnv agentside.Env
	// Planted: the test itself put other work on the pinned CPUs, so
	// contention is what it checks, and runSweep never runs it again.
	Planted bool
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

// TestMiniSweep is the single-arm sweep, with what a sweep can add to
// its points: before the first, the generator calibrated against the
// null sink (CALIBRATE=1, meta.calibration); around each window, the
// target's profile fetched (a sidecar on loopback answering as pprof
// does) and the server's own metrics read (its count checked against the
// generator's); and, as root, after the A-A repeat, the headroom probe
// with the generator capped at half its core through a real cgroup. Its
// table, its document as publish reads it and the schema, and the
// points' order, pinning and verdicts are checked.
func TestMiniSweep(t *testing.T) {
	needProcs(t)
	var mu sync.Mutex
	var profileSeconds []string
	sidecar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		profileSeconds = append(profileSeconds, r.URL.Query().Get("seconds"))
		mu.Unlock()
		select { // as pprof does: answer after the profile's seconds
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "a profile")
	}))
	defer sidecar.Close()
	root := os.Geteuid() == 0
	o := miniOptions(t, knob.Ladder{10, 100}, knob.ConnsLadders{10: {4, 8}, 100: {2, 4}})
	o.Calibrate = true
	o.ProfileDir = filepath.Join(t.TempDir(), "profiles")
	if root {
		o.HeadroomProbe = 0.5
	} else {
		t.Log("not root: no headroom probe (it writes to the cgroup tree)")
	}
	tg := refTarget(t)
	tg.Profile = &target.ProfileSpec{URL: sidecar.URL + "/debug/pprof/profile?seconds={seconds}"}
	if err := tg.Check(); err != nil {
		t.Fatal(err)
	}
	r, table, err := runSweep(t, context.Background(), o, tg)
	skipIfContended(t, r, err)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	probed := root && len(r.Curve) == 6

	if diff := cmp.Diff(
		result.Pinning{Supported: true, ServerRequested: []int{1}, ServerGranted: []int{1}, GeneratorRequested: []int{0}, GeneratorGranted: []int{0}, SMTSiblings: [][2]int{}},
		r.Meta.Pinning, cmpIgnoreNoFile); diff != "" {
		t.Errorf("pinning (-want +got):\n%s", diff)
	}
	if r.Meta.Pinning.NoFileLimit < 1024 {
		t.Errorf("nofile limit %d, want raised", r.Meta.Pinning.NoFileLimit)
	}
	key := func(b, c int) result.PointKey { return result.PointKey{Batch: b, Connections: c} }
	if diff := cmp.Diff([]result.PointKey{key(10, 4), key(100, 2), key(10, 8), key(100, 4)}, r.Config.Order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got, want := r.Regime, "echo, batch 10, 256 B, 1 server core, 1 generator core"; got != want {
		t.Errorf("regime %q, want %q", got, want)
	}
	if len(r.Curve) != 5 && !probed {
		t.Fatalf("curve has %d points, want 4 + the A-A repeat (+ the headroom probe as root)", len(r.Curve))
	}
	verdicts := []string{result.VerdictServerSaturated, result.VerdictGeneratorCapped, result.VerdictBoth, result.VerdictNeither}
	// CPU is charged in 10 ms ticks: a side starved by other work on this
	// shared machine can read 0 cores for a whole point. So every point
	// must be sampled, and each side must read some CPU over the sweep.
	cpuSum := map[string]float64{}
	for i, p := range r.Curve {
		if p.Status != result.StatusOK {
			t.Errorf("point %d failed: %s\n%s", p.Index, p.FailReason, p.LogTail)
			continue
		}
		if p.Index != i+1 {
			t.Errorf("point %d has index %d", i+1, p.Index)
		}
		contended := p.Contended
		if contended != (result.Contention(p.ServerCPU, p.GeneratorCPU) != "") || contended && p.Clean {
			t.Errorf("point %d: contended %v, clean %v, from cpus %+v %+v", p.Index, p.Contended, p.Clean, p.ServerCPU, p.GeneratorCPU)
		}
		for side, c := range map[string]result.CPUStats{"server": p.ServerCPU, "generator": p.GeneratorCPU} {
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
		for side, c := range map[string]result.CPUStats{"server": p.ServerCPU, "generator": p.GeneratorCPU} {
			if c.Samples < 2 || c.PinnedCores != 1 || c.MeanCores < 0 || c.FractionMean != c.MeanCores {
				t.Errorf("point %d %s cpu %+v: want samples of 1 pinned core", p.Index, side, c)
			}
			cpuSum[side] += c.MeanCores
		}
		if !slices.Contains(verdicts, p.Verdict) || p.VerdictReason == "" {
			t.Errorf("point %d verdict %q (%q)", p.Index, p.Verdict, p.VerdictReason)
		}
		if p.LowerBound != result.IsLowerBound(p.Verdict) {
			t.Errorf("point %d lower_bound %v with verdict %s", p.Index, p.LowerBound, p.Verdict)
		}
		// Each side's memory, with a figure per connection (issue 49).
		if m := p.ServerMemory; m == nil || m.PeakBytes == 0 || m.BaselineBytes == nil || m.PerConnectionBytes == nil || m.Measure != result.MemoryPSS {
			t.Errorf("point %d server memory %+v", p.Index, m)
		}
		if _, ok := p.GeneratorMemory.PerConnection(); !ok {
			t.Errorf("point %d generator memory %+v", p.Index, p.GeneratorMemory)
		}
	}
	for _, side := range []string{"server", "generator"} {
		if cpuSum[side] <= 0 {
			t.Errorf("the %s read no CPU in any point", side)
		}
	}
	aa := r.Curve[4]
	if aa.Role != result.RoleAARepeat || aa.Batch != r.Headline.Batch || aa.Connections != r.Headline.Connections {
		t.Errorf("last point %+v is not the A-A repeat of the headline %+v", aa, r.Headline)
	}
	if !r.Headline.Clean || r.Headline.Batch != 10 || r.Headline.ThroughputPerS <= 0 || r.Headline.LatencyNs.P99 <= 0 {
		t.Errorf("headline %+v", r.Headline)
	}
	switch {
	case r.NoiseFloorPct != nil:
		if want := *result.NoiseFloorPct(r.Headline.ThroughputPerS, aa.ThroughputPerS); *r.NoiseFloorPct != want {
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
			if p.Batch == c.Batch && p.Role == result.RoleSweep && !p.Contended {
				t.Errorf("batch %d has no ceiling, yet point %d ran uncontended: %+v", c.Batch, p.Index, p)
			}
		}
	}
	if r.Meta.Generator != "ceiling" || r.Meta.Target.Name != "refserver" || r.Meta.GitRef == "" || r.Meta.FinishedAt.IsZero() {
		t.Errorf("meta %+v", r.Meta)
	}
	// The ceiling is stated with the client pattern that produced it.
	if r.Meta.ClientIO != "loop, batch-wake" {
		t.Errorf("meta.client_io %q, want %q (ceiling load's default engine and pattern)", r.Meta.ClientIO, "loop, batch-wake")
	}
	// The publisher must accept the document as written.
	data, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := publish.Read(data, o.Out); err != nil {
		t.Errorf("publish.Read rejects the sweep document: %v", err)
	}
	if !strings.Contains(flatText(table), "noise floor (A-A)") || !strings.Contains(table, "errors: none") {
		t.Errorf("table lacks the noise floor or the errors line:\n%s", table)
	}
	s, err := schema.Compile(schema.Sweep)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := schema.Decode(data); err != nil {
		t.Error(err)
	} else if p := s.Validate(v); len(p) > 0 {
		t.Errorf("the result fails sweep.schema.json: %v", p)
	}

	// CALIBRATE=1: one positive cap, for echo at the headline's batch
	// (speed is not asserted).
	if d := r.Meta.Calibration; d == nil || !slices.ContainsFunc(d.Caps, func(c wire.Cap) bool {
		return c.Scenario == "echo" && c.Batch == 10 && c.PerCorePerS > 0
	}) {
		t.Errorf("meta.calibration %+v, want a positive cap for echo at batch 10 (warnings %q)", d, r.Warnings)
	}
	for _, p := range r.Curve {
		// The profile, fetched over the window, saved under --profile.
		want := scrape.ProfilePath(o.ProfileDir, p.Index, result.PointKey{Batch: p.Batch, Connections: p.Connections, Rep: p.Rep})
		if p.ProfileFile != want || p.ProfileError != "" {
			t.Errorf("point %d: profile_file %q, profile_error %q; want %q", p.Index, p.ProfileFile, p.ProfileError, want)
		} else if b, err := os.ReadFile(want); err != nil || string(b) != "a profile" {
			t.Errorf("point %d: profile %q, %v", p.Index, b, err)
		}
		// The server's own metrics, read around the window, and its
		// count against the generator's.
		if sm := p.ServerMetrics; sm == nil || sm.Error != "" || len(sm.Series) == 0 {
			t.Errorf("point %d: server_metrics %+v", p.Index, sm)
		}
		if c := p.CountCheck; c == nil || (c.Verdict != "agree" && !p.Contended) {
			t.Errorf("point %d: count check %+v", p.Index, c)
		}
	}
	// Each point's profile asked for its 1 s window (a sweep run again
	// on contended CPUs asked for its own too).
	mu.Lock()
	if len(profileSeconds) < len(r.Curve) || slices.ContainsFunc(profileSeconds, func(s string) bool { return s != "1" }) {
		t.Errorf("profiles asked for seconds %v for %d points, want the 1 s window each", profileSeconds, len(r.Curve))
	}
	mu.Unlock()

	// The headroom probe: its point exists, the generator's sampled CPU
	// shows the cap took hold, the table concludes, and no cgroup is
	// left, wherever pinning put it (v1 or v2, under our own cgroup or a
	// root: a check of one fixed path passes whenever it is elsewhere).
	if !root {
		return
	}
	if !probed {
		notQuiet(t, "no headroom probe after a headline on contended CPUs (%d points)", len(r.Curve))
	}
	h := r.HeadroomProbe
	if h == nil || r.Curve[5].Role != result.RoleHeadroom || h.Status != result.StatusOK || h.Cgroup == "" || h.ThroughputPerS <= 0 {
		t.Fatalf("probe %+v, last point %+v", h, r.Curve[5])
	}
	// A 50% quota: the tree cannot average much more than half a core.
	if g := r.Curve[5].GeneratorCPU; g.Samples == 0 || g.MeanCores > 0.6 {
		t.Errorf("generator under a 50%% quota used %.2f cores (%d samples)", g.MeanCores, g.Samples)
	}
	if !strings.Contains(flatText(table), "headroom probe (point 6)") {
		t.Errorf("table lacks the probe's conclusion:\n%s", table)
	}
	var left []string
	prefix := "ceiling-headroom-" + supervise.RunID() + "-"
	_ = filepath.WalkDir("/sys/fs/cgroup", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), prefix) {
			left = append(left, path)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("cgroups left behind: %v", left)
	}
}

var cmpIgnoreNoFile = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".NoFileLimit" }, cmp.Ignore())

// flatText is s with every run of white space one space: the table
// wraps its prose at result.TableWidth, so a phrase may span two lines.
func flatText(s string) string { return strings.Join(strings.Fields(s), " ") }
