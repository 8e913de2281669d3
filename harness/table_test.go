package harness

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func tableFixture() *result.Result {
	r := &result.Result{
		Regime: result.Regime("echo", 10, 256, 1, 1),
		Config: result.Config{
			BatchLadder:   []int{10, 1024},
			ConnsLadders:  map[string][]int{"10": {32, 64}, "1024": {8, 16}},
			HeadlineBatch: 10,
		},
	}
	mk := func(i int, role string, b, c int, thr float64, p99 int64, srv, gen float64, verdict string) result.Point {
		p := pt(role, b, c, thr, verdict)
		p.Index = i
		p.LatencyNs.P99 = p99
		p.ServerCPU, p.GeneratorCPU = cpuFrac(srv, 1), cpuFrac(gen, 1)
		return p
	}
	failed := result.Point{Index: 4, Role: result.RoleSweep, Batch: 1024, Connections: 16, Status: result.StatusFailed, Verdict: result.VerdictFailed, FailReason: "server exited during the point"}
	r.Curve = []result.Point{
		mk(1, result.RoleSweep, 10, 32, 181234.4, 1_800_000, 0.93, 0.71, result.VerdictServerSaturated),
		mk(2, result.RoleSweep, 1024, 8, 1_250_000, 45_000_000, 0.62, 0.97, result.VerdictGeneratorCapped),
		mk(3, result.RoleSweep, 10, 64, 176000, 3_900_000, 0.95, 0.74, result.VerdictServerSaturated),
		failed,
		mk(5, result.RoleAARepeat, 10, 32, 170000, 1_950_000, 0.94, 0.70, result.VerdictServerSaturated),
	}
	r.Summarize()
	return r
}

func TestWriteTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := result.WriteTable(&b, tableFixture()); err != nil {
		t.Fatal(err)
	}
	golden(t, "table.txt", b.Bytes())
}

func TestWriteTablePartialNoHeadline(t *testing.T) {
	r := tableFixture()
	r.Curve = r.Curve[3:4] // only the failed point
	r.Partial, r.PartialReason = true, "interrupted after 1 of 5 points: interrupt"
	r.Summarize()
	var b bytes.Buffer
	if err := result.WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "table_partial.txt", b.Bytes())
}

// A point without errors that is still not clean (here: a connection lost)
// must not read as a candidate ceiling.
func TestWriteTableMarksUncleanPoints(t *testing.T) {
	r := tableFixture()
	r.Curve[2].Clean = false // batch 10, 64 connections: say it dropped one
	r.Summarize()
	var b bytes.Buffer
	if err := result.WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"NOT CLEAN: 1 points without errors", "server-saturated [1]", "[1] point 3: not clean"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "not clean:"); n != 1 {
		t.Errorf("%d rows marked not clean, want 1:\n%s", n, out)
	}
}

// TestWriteTableFits is issue 33's terminal test: a two-arm table with a
// contended point whose foreign process has a long name, a lower bound
// and a comparison that could not conclude keeps every line within 100
// columns, and the contention is a numbered note under the points' table
// (one contended row once widened two columns of every row).
func TestWriteTableFits(t *testing.T) {
	r := tableFixture()
	mk := func(i int, arm string, thr float64) result.Point {
		p := pt(result.RoleCompare, 10, 32, thr, result.VerdictServerSaturated)
		p.Index, p.Arm, p.Rep, p.Half = i, arm, i, "a"
		p.LatencyNs.P99 = 12_345_678
		p.Errors = 12
		p.ServerCPU, p.GeneratorCPU = cpuFrac(0.97, 3), cpuFrac(0.34, 1)
		return p
	}
	contended := mk(13, result.ArmHead, 1_234_567)
	contended.Contended, contended.Clean = true, false
	contended.GeneratorCPU.PinnedBusy = 0.54
	contended.GeneratorCPU.Attribution = &result.Attribution{Foreign: 0.2, Tasks: []result.ForeignTask{
		{Comm: "a-process-with-a-long-name", Pid: 4194304, Fraction: 0.12}, {Comm: "kworker/u4:2-events_unbound", Pid: 77, Fraction: 0.08}}}
	contended.GeneratorCPU.StealFraction = 0.31
	r.Curve = append(r.Curve, mk(12, result.ArmBase, 1_250_000), contended)
	pct := func(v float64) *float64 { return &v }
	cp := result.ComparedPoint{Batch: 10, Connections: 32, Verdict: result.CompareCannotConclude,
		Reason:    "cannot conclude: 3 pairs with both arms clean, the paired test needs 6 at ALPHA 0.05; left out: point 13 (head): contended",
		ChangePct: pct(-12.3), CILowPct: pct(-12.3), CIHighPct: pct(+25.5), PValue: pct(0.0078), NPairs: 13, Blocks: 26, MDCPct: pct(11.0),
		P99Verdict: result.CompareCannotConclude, P99ChangePct: pct(-5),
		Base: result.ArmStats{N: 13, MedianPerS: 1_234_567, LowerBound: true}, Head: result.ArmStats{N: 13, MedianPerS: 1_111_111}}
	r.Comparison = &result.Comparison{Alpha: 0.05, Confidence: 0.95, Reps: 13, Gate: "headline: only the headline batch's compared point gates",
		Method: strings.Repeat("a long method description ", 8), Headline: cp, Points: []result.ComparedPoint{cp, cp}}
	// A lower bound's verdict is "at least" (the widest verdict cell).
	r.Comparison.Points[1].Verdict, r.Comparison.Points[1].AtLeast = result.CompareSlower, true
	var b bytes.Buffer
	if err := result.WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Logf("\n%s", out)
	for i, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > result.TableWidth {
			t.Errorf("line %d is %d columns, want at most %d: %q", i+1, n, result.TableWidth, line)
		}
	}
	for _, want := range []string{"[1] point 13 cmp head/a: contended: ", "a-process-with-a-long-name (pid 4194304)", "hypervisor stole 31.0%"} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("the table lacks %q", want)
		}
	}
	// The rows fit whole: none was wrapped to fit.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "13 cmp head/a") && !strings.HasPrefix(line, "[") && !strings.HasSuffix(line, "server-saturated [1]") {
			t.Errorf("the contended row does not end with its verdict and note on one line: %q", line)
		}
	}
}

// flat is s with every run of white space one space: prose the table
// wrapped at TableWidth reads as one line.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
