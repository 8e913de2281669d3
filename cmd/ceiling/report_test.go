package main

import (
	"strings"
	"testing"
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
