package publish

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/perf/benchfmt"

	"github.com/ceiling-bench/ceiling/result"
)

// goldenFile compares got with testdata/<file>, or rewrites it (-update).
func goldenFile(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./publish -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got), refresh with -update if intended:\n%s", path, diff)
	}
}

func benchText(t *testing.T, r *result.Result, name string) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteBenchfmt(&b, r, name); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// parseBench reads text with benchfmt, the parser benchstat uses, and
// fails on any syntax error.
func parseBench(t *testing.T, text string) []*benchfmt.Result {
	t.Helper()
	var out []*benchfmt.Result
	rd := benchfmt.NewReader(strings.NewReader(text), "in")
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			out = append(out, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// withFailure is sweep_real.json with its second point failed and a
// hostile reason: a failed point must be a comment, never a number.
func withFailure(t *testing.T) *result.Result {
	r := mustRead(t, "sweep_real.json")
	r.Curve[1].Status = "failed"
	r.Curve[1].Verdict = result.VerdictFailed
	r.Curve[1].FailReason = "server exited\nBenchmarkCeiling/evil 1 999 msg/s"
	return r
}

func TestBenchfmtGolden(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sweep_real", "two_arm_real", "rooms_real", "head_hostile"} {
		r := mustRead(t, name+".json")
		got := benchText(t, r, name+".json")
		goldenFile(t, name+".bench.golden", got)
		// One result per ok point that is a sample of its point.
		want := 0
		for _, p := range r.Curve {
			if p.Status == "ok" {
				want++
			}
		}
		res := parseBench(t, got)
		if len(res) != want {
			t.Errorf("%s: %d results, want %d (one per ok point)", name, len(res), want)
		}
		for _, x := range res {
			if len(x.Values) == 0 || x.Values[0].OrigUnit != UnitThroughput && x.Values[0].Unit != UnitThroughput {
				t.Errorf("%s: %s: first value %+v, want %s", name, x.Name, x.Values, UnitThroughput)
			}
			if x.GetConfig("pkg") != BenchPkg || x.GetConfig("regime") == "" {
				t.Errorf("%s: %s: config pkg=%q regime=%q", name, x.Name, x.GetConfig("pkg"), x.GetConfig("regime"))
			}
		}
	}
}

func TestBenchfmtFailedPointIsAComment(t *testing.T) {
	t.Parallel()
	r := withFailure(t)
	got := benchText(t, r, "failed.json")
	res := parseBench(t, got)
	if len(res) != len(r.Curve)-1 {
		t.Errorf("%d results, want %d: the failed point is not a number\n%s", len(res), len(r.Curve)-1, got)
	}
	for _, x := range res {
		if strings.Contains(string(x.Name), "evil") {
			t.Errorf("a reason became a benchmark line: %s", x.Name)
		}
	}
	if !strings.Contains(got, "# BenchmarkCeiling/scenario=echo/batch=100/conns=2 point 2 (sweep, rep 0) failed, not a number: server exited BenchmarkCeiling/evil") {
		t.Errorf("no comment line for the failed point:\n%s", got)
	}
}

func TestBenchKeySanitises(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"echo": "echo", "a b/c=d": "a_b_c_d", "": "unknown", "é\n": "__"} {
		if got := benchKey(in); got != want {
			t.Errorf("benchKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBenchstatCompares runs golang.org/x/perf's benchstat command (the
// module's own pinned version) on two runs, as a user would.
func TestBenchstatCompares(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds benchstat")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build benchstat with")
	}
	dir := t.TempDir()
	write := func(name, fixture string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(benchText(t, mustRead(t, fixture), fixture)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, nw := write("old.txt", "base.json"), write("new.txt", "head_mixed.json")
	two := write("two.txt", "two_arm_real.json")
	run := func(args ...string) string {
		cmd := exec.Command(goTool, append([]string{"run", "golang.org/x/perf/cmd/benchstat"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("benchstat %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run(old, nw)
	for _, want := range []string{"vs base", "msg/s", "p99-sec", "Ceiling/scenario=echo/batch=10/conns=64", "Ceiling/scenario=echo/batch=100/conns=32", "regime: echo, batch 10"} {
		if !strings.Contains(out, want) {
			t.Errorf("benchstat old new: no %q in\n%s", want, out)
		}
	}
	// Batch 10, 64 connections has two samples in each (sweep + A-A).
	if !strings.Contains(out, "n=2") {
		t.Errorf("benchstat old new: the A-A repeat is not a second sample:\n%s", out)
	}
	out = run("-col", "/arm", two)
	for _, want := range []string{"base", "head", "vs base", "n=6", "Ceiling/scenario=echo/batch=1024/conns=8"} {
		if !strings.Contains(out, want) {
			t.Errorf("benchstat -col /arm: no %q in\n%s", want, out)
		}
	}
}
