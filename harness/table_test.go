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
	for _, want := range []string{"NOT CLEAN: 1 points without errors", "server-saturated (not clean)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "(not clean)"); n != 1 {
		t.Errorf("%d rows marked not clean, want 1:\n%s", n, out)
	}
}
