package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

var update = flag.Bool("update", false, "rewrite testdata/report.golden.md")

// writeDoc writes a two-arm document whose compare phase at batch 10, 64
// connections ran the given blocks in ABBA order, and returns its path.
func writeDoc(t *testing.T, dir, name string, base, head []float64) string {
	t.Helper()
	r := result.Result{SchemaVersion: result.SchemaVersion, Regime: "synthetic A/A"}
	add := func(arm string, rep int, x float64) {
		r.Curve = append(r.Curve, result.Point{
			Index: len(r.Curve) + 1, Role: result.RoleCompare, Arm: arm,
			Batch: 10, Connections: 64, Rep: rep, Status: result.StatusOK,
			ThroughputPerS: x, Clean: true,
		})
	}
	for i := range base {
		if i%2 == 0 {
			add(result.ArmBase, i, base[i])
			add(result.ArmHead, i, head[i])
		} else {
			add(result.ArmHead, i, head[i])
			add(result.ArmBase, i, base[i])
		}
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// series returns n blocks: both arms level(i) times independent
// log-normal noise of sd sigma.
func series(n int, sigma float64, seed uint64, level func(i int) float64) (base, head []float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range n {
		l := 100000 * level(i)
		base = append(base, l*math.Exp(sigma*r.NormFloat64()))
		head = append(head, l*math.Exp(sigma*r.NormFloat64()))
	}
	return base, head
}

func flat(int) float64 { return 1 }

// sine is a slow drift of ±30% over a period of 24 blocks: a window of 8
// blocks spans a third of it.
func sine(i int) float64 { return 1 + 0.3*math.Sin(2*math.Pi*float64(i)/24) }

func testOptions() options {
	return options{minBlocks: 20, trials: 400, n: 8, max: 16, alpha: 0.05, seed: defaultSeed}
}

func simFile(t *testing.T, path string, o options) *simResult {
	t.Helper()
	seqs, err := loadSequences(path)
	if err != nil {
		t.Fatal(err)
	}
	return simulate(seqs, o)
}

// binomUpper is the smallest k with P(X > k) <= tail for X ~ Bin(n, p).
func binomUpper(n int, p, tail float64) int {
	cdf := 0.0
	for k := 0; k <= n; k++ {
		lg, _ := math.Lgamma(float64(n + 1))
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		cdf += math.Exp(lg - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
		if 1-cdf <= tail {
			return k
		}
	}
	return n
}

// On a stationary A/A recording every rule keeps its false alarms within
// the binomial bound of alpha. The recording is long, so the 400 windows
// seldom overlap and the trials are close to independent.
func TestStationaryFalseAlarms(t *testing.T) {
	base, head := series(2000, 0.03, 1, flat)
	o := testOptions()
	sim := simFile(t, writeDoc(t, t.TempDir(), "aa-stationary.json", base, head), o)
	bound := binomUpper(o.trials, o.alpha, 0.001)
	for r := range nRules {
		k := sim.tally[r][0].calls
		t.Logf("%s: %d false alarms of %d (bound %d)", ruleNames[r], k, o.trials, bound)
		if k > bound {
			t.Errorf("%s: %d false alarms in %d trials, above the binomial bound %d of alpha %g", ruleNames[r], k, o.trials, bound, o.alpha)
		}
	}
	// And the fixed paired rule still sees a 20% change.
	if pw := float64(sim.tally[rulePaired][4].slower) / float64(o.trials); pw < 0.95 {
		t.Errorf("paired power at 20%% with 3%% noise = %.2f, want >= 0.95", pw)
	}
}

// Under a strong slow drift on both arms (a sine of ±30%, the arms
// differing by 1% noise) pairing sees a 10% change that the pooled U test
// mostly misses.
func TestDriftPairedBeatsUnpaired(t *testing.T) {
	base, head := series(96, 0.01, 2, sine)
	o := testOptions()
	sim := simFile(t, writeDoc(t, t.TempDir(), "aa-drift.json", base, head), o)
	power := func(r int) float64 { return float64(sim.tally[r][3].slower) / float64(o.trials) }
	t.Logf("power at 10%%: paired %.2f, mw %.2f, mw+spread %.2f, seq %.2f", power(rulePaired), power(ruleMW), power(ruleMWSpread), power(ruleSeqOBF))
	if p := power(rulePaired); p < 0.8 {
		t.Errorf("paired power at 10%% = %.2f, want >= 0.8", p)
	}
	if p := power(ruleMW); p >= 0.5 {
		t.Errorf("mw power at 10%% = %.2f, want < 0.5", p)
	}
	if p := power(ruleMWSpread); p > power(ruleMW) {
		t.Errorf("mw+spread power %.2f above mw's %.2f: the spread condition can only remove calls", p, power(ruleMW))
	}
}

func TestBadFlagExits2(t *testing.T) {
	dir := t.TempDir()
	base, head := series(30, 0.02, 3, flat)
	doc := writeDoc(t, dir, "aa.json", base, head)
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-trials", "many", doc}, "-trials"},
		{[]string{"-trials", "0", doc}, "-trials"},
		{[]string{"-n", "1", doc}, "-n"},
		{[]string{"-max", "5", doc}, "-max"},
		{[]string{"-alpha", "1.5", doc}, "-alpha"},
		{[]string{"-min-blocks", "0", doc}, "-min-blocks"},
		{[]string{"-seed", "-1", doc}, "-seed"},
		{[]string{"-bogus", doc}, "-bogus"},
		{[]string{}, "FILE"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(tc.args, &stdout, &stderr)
		if err == nil {
			t.Errorf("%q: no error", tc.args)
			continue
		}
		if !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%q: error %q does not name %s", tc.args, err, tc.flag)
		}
		if c := exitCode(err); c != 2 {
			t.Errorf("%q: exit %d, want 2 (%v)", tc.args, c, err)
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: wrote a report: %s", tc.args, stdout.String())
		}
	}
	if err := run([]string{"-h"}, new(bytes.Buffer), new(bytes.Buffer)); exitCode(err) != 0 {
		t.Errorf("-h: exit %d (%v), want 0", exitCode(err), err)
	}
}

func TestNotTwoArmNamesFile(t *testing.T) {
	dir := t.TempDir()
	single := result.Result{SchemaVersion: result.SchemaVersion, Curve: []result.Point{
		{Index: 1, Role: result.RoleSweep, Batch: 10, Connections: 64, Status: result.StatusOK, ThroughputPerS: 1e5, Clean: true},
	}}
	data, _ := json.Marshal(single)
	singlePath := filepath.Join(dir, "single-arm.json")
	os.WriteFile(singlePath, data, 0o644)
	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte(`{"curve": 3`), 0o644)
	calib := filepath.Join(dir, "other.json")
	os.WriteFile(calib, []byte(`{"cap_per_core": {"10": 123}}`), 0o644)
	empty := writeDoc(t, dir, "aa.json", nil, nil) // no curve at all
	base, head := series(30, 0.02, 4, flat)
	ok := writeDoc(t, dir, "aa-ok.json", base, head)
	for _, bad := range []string{singlePath, garbage, calib, filepath.Join(dir, "missing.json")} {
		err := run([]string{ok, bad}, new(bytes.Buffer), new(bytes.Buffer))
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: error %v does not name the file", bad, err)
		}
		if exitCode(err) != 1 {
			t.Errorf("%s: exit %d, want 1", bad, exitCode(err))
		}
	}
	if err := run([]string{empty}, new(bytes.Buffer), new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("a document without arms: error %v does not name it", err)
	}
}

func TestMinBlocks(t *testing.T) {
	dir := t.TempDir()
	base, head := series(12, 0.02, 5, flat)
	doc := writeDoc(t, dir, "aa.json", base, head)
	var stderr bytes.Buffer
	err := run([]string{doc}, new(bytes.Buffer), &stderr)
	if err == nil || !strings.Contains(err.Error(), "-min-blocks 20") {
		t.Errorf("12 blocks at -min-blocks 20: error %v, want one naming -min-blocks", err)
	}
	var stdout bytes.Buffer
	stderr.Reset()
	if err := run([]string{"-min-blocks", "10", "-trials", "20", doc}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "wrap onto themselves") {
		t.Errorf("12 blocks with -max 16: no warning that the windows wrap; stderr: %s", stderr.String())
	}
}

func TestWindowWrapsAndSwaps(t *testing.T) {
	seqs := []sequence{{base: []float64{1, 2, 3}, head: []float64{10, 20, 30}}}
	b, h := window{seq: 0, start: 2}.blocks(seqs, 4)
	if want := []float64{3, 1, 2, 3}; !equal(b, want) {
		t.Errorf("base %v, want %v", b, want)
	}
	if want := []float64{30, 10, 20, 30}; !equal(h, want) {
		t.Errorf("head %v, want %v", h, want)
	}
	b, h = window{seq: 0, start: 1, swap: true}.blocks(seqs, 2)
	if !equal(b, []float64{20, 30}) || !equal(h, []float64{2, 3}) {
		t.Errorf("swapped: base %v head %v", b, h)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The report's layout on a small fixed input, with the common-mode
// model; rewrite with go test ./benchmark/comparesim -run Golden -update.
func TestGoldenReport(t *testing.T) {
	dir := t.TempDir()
	base, head := series(30, 0.02, 6, sine)
	writeDoc(t, dir, "aa-small.json", base, head)
	t.Chdir(dir) // the report names its files as given
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-trials", "60", "-common-mode", "aa-small.json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := run([]string{"-trials", "60", "-common-mode", "aa-small.json"}, &again, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	if again.String() != stdout.String() {
		t.Error("two runs with the same seed printed different reports")
	}
	golden := filepath.Join(testdataDir, "report.golden.md")
	if *update {
		if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); got != string(want) {
		t.Errorf("report differs from %s (rerun with -update to accept):\n%s", golden, got)
	}
}

// testdataDir is the package's testdata, absolute (TestGoldenReport
// changes directory).
var testdataDir = func() string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "testdata")
}()

// The common-mode decomposition reads rho1 near 0 when a block's two runs
// vary independently, and near the shared share when a disturbance hits
// both runs of a block alike; a slow drift does not count.
func TestDecomposeRho1(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var ib, ih, sb, sh []float64
	for i := range 2000 {
		l := 1e5 * (1 + 0.3*math.Sin(2*math.Pi*float64(i)/80)) // slow: a period of 80 blocks
		ib = append(ib, l*math.Exp(0.02*r.NormFloat64()))
		ih = append(ih, l*math.Exp(0.02*r.NormFloat64()))
		shared := 0.03 * r.NormFloat64() // variance 9 of 10 shared
		sb = append(sb, l*math.Exp(shared+0.01*r.NormFloat64()))
		sh = append(sh, l*math.Exp(shared+0.01*r.NormFloat64()))
	}
	indep := decompose(sequence{base: ib, head: ih}, logRatios(ib, ih))
	shared := decompose(sequence{base: sb, head: sh}, logRatios(sb, sh))
	t.Logf("independent: rho1 %.2f fast %.2f%%; shared: rho1 %.2f fast %.2f%%", indep.rho1, indep.fast, shared.rho1, shared.fast)
	if math.Abs(indep.rho1) > 0.1 {
		t.Errorf("independent runs: rho1 = %.2f, want about 0", indep.rho1)
	}
	if shared.rho1 < 0.8 || shared.rho1 > 0.95 {
		t.Errorf("a disturbance shared by a block's runs (9/10 of the variance): rho1 = %.2f, want about 0.9", shared.rho1)
	}
	if k := duetScale(0.5, 0.9); k != 1 {
		t.Errorf("duetScale(0.5, 0.9) = %g: c below rho1 must be raised to it (no gain)", k)
	}
	if k := duetScale(0.9, 0); math.Abs(k-math.Sqrt(0.1)) > 1e-12 {
		t.Errorf("duetScale(0.9, 0) = %g, want sqrt(0.1)", k)
	}
}

func logRatios(b, h []float64) []float64 {
	d := make([]float64, len(b))
	for i := range d {
		d[i] = math.Log(h[i] / b[i])
	}
	return d
}
