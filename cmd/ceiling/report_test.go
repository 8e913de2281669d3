package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/publish"
)

func TestReportExitStatus(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"report", "--format", "svg", "x.json"}, 2, `--format: "svg"`},
		{[]string{"report", "x.json"}, 2, "--out: required"},
		{[]string{"report", "--out", t.TempDir()}, 2, "give RESULT.json files"},
		{[]string{"report", "--format", "benchstat"}, 2, "want at least one RESULT.json"},
		{[]string{"report", "--format", "benchstat", "--out", "d", publishFixtures + "base.json"}, 2, "--out and --history are for html"},
		{[]string{"report", "--format", "benchstat", publishFixtures + "base.json", publishFixtures + "bad_missing_verdict.json"}, 2, "curve[3].verdict: missing"},
		{[]string{"report", "--format", "benchstat", publishFixtures + "absent.json"}, 2, "absent.json"},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, "", tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("ceiling %s: status %d, stderr %q; want %d and %q", strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
		}
	}
}

func TestReportBenchstat(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "report", "--format", "benchstat", publishFixtures+"base.json", publishFixtures+"two_arm_real.json")
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr)
	}
	for _, want := range []string{
		"# ceiling sweep result " + publishFixtures + "base.json",
		"BenchmarkCeiling/scenario=echo/batch=10/conns=64 1 150000 msg/s 4000000 p99-ns\n",
		"# ceiling sweep result " + publishFixtures + "two_arm_real.json",
		"/arm=head 1 ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
}

func TestHistoryCommand(t *testing.T) {
	hist := publishFixtures + "history.jsonl"
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"git_ref\":\"a\"}\n{oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"history", "--file", filepath.Join(dir, "absent.jsonl")}, 2, "--file: open"},
		{[]string{"history", "--file", bad}, 0, "skipped a line that is not a history entry: " + bad + ":2: "},
		{[]string{"history", "--file", hist, "--last", "-1"}, 2, "--last: -1 is negative"},
		{[]string{"history", "--file", hist, "extra"}, 2, `unexpected argument "extra"`},
	} {
		_, stderr, code := runCLI(t, "", tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("ceiling %s: status %d, stderr %q; want %d and %q", strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
		}
	}
	stdout, stderr, code := runCLI(t, "", "history", "--file", hist, "--last", "3")
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr)
	}
	// The newest three: the real sweep (a regime change, lower bounds),
	// the two-arm sweep and the rooms sweep; not the oldest entry.
	for _, want := range []string{"unknown", "da4f75ed66fd", "e5d20d59cb76-dirty", "≥134,020 @4", "▲", "objective (newest): kinds.op.latency_ns.p99"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "0f0f0f0f0f0f") {
		t.Errorf("--last 3 printed the oldest entry:\n%s", stdout)
	}
}

// history --changes lists the fixture's one change point and the
// commits it lies between.
func TestHistoryChanges(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "history", "--file", publishFixtures+"history_change.jsonl", "--changes")
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr)
	}
	for _, want := range []string{"1 change point in 24 entries", "headline", "9e8adf58ef5b", "2e5f2917a754"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
}

func TestReportSite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "site")
	stdout, stderr, code := runCLI(t, "", "report", "--out", out, "--history", publishFixtures+"history.jsonl",
		publishFixtures+"sweep_real.json", publishFixtures+"two_arm_real.json")
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote 3 page(s)") {
		t.Errorf("stdout %q", stdout)
	}
	index, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(out, "run-*.html"))
	if len(pages) != 2 {
		t.Fatalf("run pages %v, want 2", pages)
	}
	for _, p := range pages {
		if !strings.Contains(string(index), `href="`+filepath.Base(p)+`"`) {
			t.Errorf("index does not link %s", filepath.Base(p))
		}
	}
	_, stderr, code = runCLI(t, "", "report", "--out", out, "--history", filepath.Join(out, "absent.jsonl"), publishFixtures+"base.json")
	if code != 2 || !strings.Contains(stderr, "--history: open") {
		t.Errorf("missing --history: status %d, stderr %q", code, stderr)
	}
}

func TestSweepSummary(t *testing.T) {
	data, err := os.ReadFile(publishFixtures + "sweep_real.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := publish.Read(data, "sweep_real.json")
	if err != nil {
		t.Fatal(err)
	}
	// A secret the document still holds is masked on its way out.
	r.Warnings = append(r.Warnings, "token s3cr3t-value-0123456789 leaked")
	path := filepath.Join(t.TempDir(), "summary.md")
	var stderr strings.Builder
	sweepSummary("", &stderr, r, nil) // no summary file: nothing
	sweepSummary(path, &stderr, r, redact.New("s3cr3t-value-0123456789"))
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### ceiling sweep&#58; ceiling\\-load", "```mermaid", "| 10 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("no %q in the summary:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "s3cr3t") {
		t.Error("the secret reached the job summary")
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	// An unwritable summary is a warning, not a failure.
	sweepSummary(filepath.Join(t.TempDir(), "no", "dir", "summary.md"), &stderr, r, nil)
	if !strings.Contains(stderr.String(), "job summary") {
		t.Errorf("no warning for an unwritable summary: %q", stderr.String())
	}
}

func TestPublishCommentSiteURL(t *testing.T) {
	_, stderr, code := runCLI(t, "", "publish", "comment", "--head", publishFixtures+"head_mixed.json", "--dry-run", "--site-url", "javascript:alert(1)")
	if code != 2 || !strings.Contains(stderr, "--site-url") {
		t.Errorf("bad --site-url: status %d, stderr %q", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "", "publish", "comment", "--head", publishFixtures+"head_mixed.json", "--base", publishFixtures+"base.json",
		"--dry-run", "--summary-file", "", "--site-url", "https://o.github.io/ceiling/")
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "(https://o.github.io/ceiling/run-111111111111-ceiling-load-20261129T101600Z.html)") {
		t.Errorf("no link to the baseline run's page:\n%s", stdout)
	}
}
