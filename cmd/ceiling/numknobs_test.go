package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
)

// badNumbers are what strconv and flag happily parse as numbers but no
// knob means: NaN and the infinities (which pass any range check written
// with < and >), plus a negative.
var badNumbers = []string{"NaN", "nan", "Inf", "+Inf", "-Inf", "infinity", "-1"}

// TestSweepNumberKnobsRefuseNaNInf: every number knob of `ceiling sweep`,
// as a variable and as a flag, refuses each of badNumbers with exit 2 and
// a message naming it, before anything boots (no work dir, no result).
func TestSweepNumberKnobsRefuseNaNInf(t *testing.T) {
	type numKnob struct {
		env, flag string // either may be empty
		want      string // in the message when set by env; the flag's name otherwise
		prefix    string // before the bad value, e.g. "10=" for --conns-ladder
	}
	knobs := []numKnob{
		{env: "RECORD_SIZE", flag: "--record-size", want: "RECORD_SIZE"},
		{env: "HEADLINE_BATCH", flag: "--headline-batch", want: "HEADLINE_BATCH"},
		{env: "REPS", flag: "--reps", want: "REPS"},
		{env: "DURATION", flag: "--duration", want: "DURATION"},
		{env: "WARMUP", flag: "--warmup", want: "WARMUP"},
		{env: "HEADROOM_PROBE", flag: "--headroom-probe", want: "HEADROOM_PROBE"},
		{env: "BATCH_LADDER", flag: "--batch-ladder", want: "BATCH_LADDER"},
		{env: "CONNS_LADDER_10", flag: "--conns-ladder", want: "CONNS_LADDER_10", prefix: "10="},
		{env: "SRV_CPUSET", flag: "--srv-cpuset", want: "SRV_CPUSET"},
		{env: "LT_CPUSET", flag: "--lt-cpuset", want: "LT_CPUSET"},
		{flag: "--ready-timeout", want: "ready-timeout"},
		{env: "AGENTS", flag: "--agents", want: "AGENTS"},
		{env: "AGENTS_JOIN_TIMEOUT", flag: "--agents-join-timeout", want: "AGENTS_JOIN_TIMEOUT"},
		// The connection-scale sweep's.
		{env: "CONN_RAMP", flag: "--conn-ramp", want: "CONN_RAMP"},
		{env: "CONN_INTERVAL", flag: "--conn-interval", want: "CONN_INTERVAL"},
		{env: "SERVER_CONN_BYTES", flag: "--server-conn-bytes", want: "SERVER_CONN_BYTES"},
		// The two-arm sweep's (docs/compare.md).
		{env: "COMPARE_REPS", flag: "--compare-reps", want: "COMPARE_REPS"},
		{env: "ALPHA", flag: "--alpha", want: "ALPHA"},
		{env: "COMPARE_DURATION", flag: "--compare-duration", want: "COMPARE_DURATION"},
		{env: "COMPARE_WARMUP", flag: "--compare-warmup", want: "COMPARE_WARMUP"},
		{env: "COMPARE_PREFER", flag: "--compare-prefer", want: "COMPARE_PREFER"},
		{env: "COMPARE_BUDGET", flag: "--compare-budget", want: "COMPARE_BUDGET"},
		{env: "COMPARE_REBOOT_EVERY", flag: "--compare-reboot-every", want: "COMPARE_REBOOT_EVERY"},
		{env: "SERVER_COSTS", flag: "--server-costs", want: "SERVER_COSTS", prefix: "1s/"},
	}
	// Every number knob of the knob table is in the list above, so a new
	// one is not left out of this test.
	listed := map[string]bool{}
	for _, k := range knobs {
		listed[strings.TrimLeft(k.flag, "-")] = true
	}
	for _, k := range knob.Knobs {
		switch k.Arg {
		case "N", "BYTES", "DURATION", "FRACTION", "LEVEL", "LIST", "LADDER", "BATCH=LADDER", "READY/STOP":
			if !listed[k.Flag] {
				t.Errorf("--%s takes a number (%s) but is not in this test's list", k.Flag, k.Arg)
			}
		}
	}
	dir := t.TempDir()
	for _, k := range knobs {
		for _, v := range append(badNumbers, "1e400") {
			check := func(t *testing.T, args []string, env []string, want string) {
				sweepEnv(t, env...)
				work := filepath.Join(dir, "never")
				out := filepath.Join(t.TempDir(), "out.json")
				var stdout, stderr bytes.Buffer
				err := run(append([]string{"sweep", "--out", out, "--work-dir", work}, args...), &stdout, &stderr)
				if code := exitCode(err); code != 2 {
					t.Fatalf("exit %d (%v), want 2", code, err)
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not name %q", err, want)
				}
				if v != "-1" && strings.Contains(err.Error(), "negative") {
					t.Errorf("message %q calls %s negative", err, v)
				}
				for _, p := range []string{work, out} {
					if _, err := os.Stat(p); err == nil {
						t.Errorf("%s exists: something ran", p)
					}
				}
			}
			if k.env != "" {
				t.Run(k.env+"="+v, func(t *testing.T) { check(t, nil, []string{k.env, v}, k.want) })
			}
			if k.flag != "" {
				want := strings.TrimLeft(k.flag, "-")
				t.Run(k.flag+"="+v, func(t *testing.T) { check(t, []string{k.flag + "=" + k.prefix + v}, nil, want) })
			}
		}
	}
	// Durations too long for a time.Duration would wrap to anything.
	for _, k := range []string{"DURATION", "WARMUP"} {
		t.Run(k+"=1e12", func(t *testing.T) {
			sweepEnv(t, k, "1e12")
			err := run([]string{"sweep", "--out", filepath.Join(t.TempDir(), "o.json")}, new(bytes.Buffer), new(bytes.Buffer))
			if exitCode(err) != 2 || !strings.Contains(err.Error(), k) {
				t.Errorf("%s=1e12: %v (exit %d), want exit 2 naming it", k, err, exitCode(err))
			}
		})
	}
}

// TestLoadNumberKnobsRefuseNaNInf: the same for every number flag of
// `ceiling load`. The URL is a dead port, so a value that slipped through
// would fail to connect (exit 1) rather than pass.
func TestLoadNumberKnobsRefuseNaNInf(t *testing.T) {
	const dead = "--url=ws://127.0.0.1:1/echo"
	fanout := []string{"--scenario", "fanout", "--url", "ws://127.0.0.1:1"}
	knobs := []struct {
		flag string
		base []string
	}{
		{"--rate", nil},
		{"--duration", nil},
		{"--warmup", nil},
		{"--connections", nil},
		{"--batch", nil},
		{"--record-size", nil},
		{"--max-inflight", []string{"--rate", "10"}},
		{"--connect-concurrency", nil},
		{"--connect-stagger-ms", []string{"--connect-strategy", "stagger"}},
		{"--payload-seed", []string{"--payload", "json"}},
		{"--channels", fanout},
		{"--publishers", fanout},
	}
	for _, k := range knobs {
		for _, v := range badNumbers {
			t.Run(k.flag+"="+v, func(t *testing.T) {
				args := []string{"load", "--duration", "100ms", "--warmup", "0s", "--quiet"}
				if !slices.Contains(k.base, "--url") {
					args = append(args, dead) // a repeated --url is several servers, which fanout refuses
				}
				args = append(append(args, k.base...), k.flag+"="+v)
				var stdout, stderr bytes.Buffer
				err := run(args, &stdout, &stderr)
				if code := exitCode(err); code != 2 {
					t.Fatalf("exit %d (%v), want 2", code, err)
				}
				if !strings.Contains(err.Error(), strings.TrimLeft(k.flag, "-")) {
					t.Errorf("message %q does not name %s", err, k.flag)
				}
				if stdout.Len() != 0 {
					t.Errorf("a report was written:\n%s", stdout.String())
				}
			})
		}
	}
}
