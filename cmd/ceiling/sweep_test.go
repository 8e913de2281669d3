package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/result"
)

// sweepEnv clears every knob variable (the knob table's) so the host's
// environment cannot leak into a case; set lists NAME, VALUE pairs to set
// after.
func sweepEnv(t *testing.T, set ...string) {
	t.Helper()
	for _, k := range knob.Knobs {
		if k.Env == "" {
			continue
		}
		if prefix, ok := k.Pattern(); ok {
			for _, kv := range os.Environ() {
				if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, prefix) {
					t.Setenv(name, "")
				}
			}
			continue
		}
		t.Setenv(k.Env, "")
	}
	for i := 0; i+1 < len(set); i += 2 {
		t.Setenv(set[i], set[i+1])
	}
}

// TestSweepKnobValidation: every invalid knob exits 2 before anything
// boots, with a message naming the knob.
func TestSweepKnobValidation(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.json")
	os.WriteFile(typo, []byte(`{"name":"x","comand":["x"]}`), 0o644)
	noBinary := filepath.Join(dir, "nobin.json")
	os.WriteFile(noBinary, []byte(`{"name":"x","command":["./no/such/server","{addr}"],"echo_url":"ws://{addr}/echo","ready":"tcp:{addr}"}`), 0o644)
	okTarget := filepath.Join(dir, "ok.json")
	os.WriteFile(okTarget, []byte(`{"name":"x","command":["/bin/true","{addr}"],"echo_url":"ws://{addr}/echo","ready":"tcp:{addr}"}`), 0o644)
	badCal := filepath.Join(dir, "badcal.json")
	os.WriteFile(badCal, []byte(`{"calibration_version":1,"generator_cpus":[0],"record_size":256,"caps":[{"scenario":"echo","batch":0,"msgs_per_s_per_core":1}]}`), 0o644)
	goodCal := filepath.Join(dir, "cal.json")
	os.WriteFile(goodCal, []byte(`{"calibration_version":1,"generator_cpus":[0],"record_size":256,"caps":[]}`), 0o644)
	noPort := filepath.Join(dir, "noport.json")
	os.WriteFile(noPort, []byte(`{"name":"x","command":["/bin/true"],"echo_url":"ws://{addr}/echo","ready":"tcp:{addr}"}`), 0o644)

	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"batch ladder flag", nil, []string{"--batch-ladder", "10 x"}, "batch-ladder"},
		{"batch ladder env", []string{"BATCH_LADDER", "abc"}, nil, "BATCH_LADDER"},
		{"conns ladder env", []string{"CONNS_LADDER_10", "32 0"}, nil, "CONNS_LADDER_10"},
		{"conns ladder flag", nil, []string{"--conns-ladder", "10:32"}, "conns-ladder"},
		{"headline not in ladder", nil, []string{"--headline-batch", "7"}, "HEADLINE_BATCH"},
		{"offline cpu", []string{"SRV_CPUSET", "999"}, nil, "SRV_CPUSET"},
		{"malformed cpu list flag", nil, []string{"--lt-cpuset", "0-"}, "lt-cpuset"},
		{"overlap", nil, []string{"--srv-cpuset", "0", "--lt-cpuset", "0"}, "overlap"},
		{"reps zero", []string{"REPS", "0"}, nil, "REPS"},
		{"record size", []string{"RECORD_SIZE", "big"}, nil, "RECORD_SIZE"},
		{"duration", []string{"DURATION", "soon"}, nil, "DURATION"},
		{"warmup flag", nil, []string{"--warmup", "-1s"}, "warmup"},
		{"scenario", nil, []string{"--scenario", "pubsub"}, "SCENARIO"},
		{"quick", []string{"QUICK", "maybe"}, nil, "QUICK"},
		{"generator missing", []string{"GENERATOR", "/no/such/generator"}, nil, "GENERATOR"},
		{"target missing", nil, []string{"--target", filepath.Join(dir, "none.json")}, "TARGET"},
		{"target typo field", nil, []string{"--target", typo}, `unknown field "comand"`},
		{"target command missing", nil, []string{"--target", noBinary}, "command: ./no/such/server"},
		{"target without port placeholder", nil, []string{"--target", noPort}, "{port} or {addr}"},
		{"bad probe override", nil, []string{"--target", noBinary, "--ready", "udp:x"}, "ready"},
		{"headroom fraction", []string{"HEADROOM_PROBE", "1.5"}, nil, "HEADROOM_PROBE"},
		{"headroom not a number", nil, []string{"--headroom-probe", "half"}, "headroom-probe"},
		{"compare reps env", []string{"COMPARE_REPS", "1"}, nil, "COMPARE_REPS"},
		{"compare reps flag", nil, []string{"--compare-reps", "1"}, "COMPARE_REPS (--compare-reps)"},
		{"alpha env", []string{"ALPHA", "0.05x"}, nil, "ALPHA"},
		{"alpha flag", nil, []string{"--alpha", "1"}, "ALPHA (--alpha)"},
		{"compare duration", []string{"COMPARE_DURATION", "-2"}, nil, "COMPARE_DURATION"},
		{"compare warmup flag", nil, []string{"--compare-warmup", "later"}, "compare-warmup"},
		{"base target missing", nil, []string{"--target", okTarget, "--base-target", filepath.Join(dir, "none.json")}, "BASE_TARGET (--base-target)"},
		{"base target env typo field", []string{"BASE_TARGET", typo}, []string{"--target", okTarget}, `unknown field "comand"`},
		{"base target command missing", []string{"BASE_TARGET", noBinary}, []string{"--target", okTarget}, "BASE_TARGET " + noBinary + ": command: ./no/such/server"},
		{"headroom probe in two-arm", []string{"BASE_TARGET", okTarget}, []string{"--target", okTarget, "--headroom-probe", "0.5"}, "not available in a two-arm sweep"},
		{"search env", []string{"SEARCH", "binary"}, nil, `SEARCH: "binary" is not a search`},
		{"search flag", nil, []string{"--search", "nope"}, "SEARCH (--search)"},
		{"bisect in two-arm", []string{"BASE_TARGET", okTarget}, []string{"--target", okTarget, "--search", "bisect"}, "SEARCH (--search): bisect is not available in a two-arm sweep"},
		{"compare mode env", []string{"COMPARE_MODE", "both"}, nil, `COMPARE_MODE: "both" is not a comparison mode (auto | interleaved | duet)`},
		{"duet halves overlap", []string{"BASE_TARGET", okTarget}, []string{"--target", okTarget, "--srv-cpuset", "1", "--lt-cpuset", "0", "--compare-mode", "duet", "--duet-cpusets", "0/1"}, "DUET_CPUSETS (--duet-cpusets) 0/1 shares CPUs 0-1"},
		{"duet half not SRV/LT", nil, []string{"--duet-cpusets", "2,3"}, "duet-cpusets"},
		{"duet half sizes", []string{"BASE_TARGET", okTarget}, []string{"--target", okTarget, "--srv-cpuset", "1", "--lt-cpuset", "0", "--compare-mode", "duet", "--duet-cpusets", "0-1/0", "--allow-overlap"}, "as many CPUs per side"},
		{"calibration missing", []string{"CALIBRATION", filepath.Join(dir, "none.json")}, nil, "CALIBRATION (--calibration)"},
		{"calibration bad field", nil, []string{"--calibration", badCal}, "caps[0].batch"},
		{"calibrate and calibration", []string{"CALIBRATE", "1"}, []string{"--calibration", goodCal}, "set one"},
		{"calibrate not a boolean", []string{"CALIBRATE", "please"}, nil, "CALIBRATE"},
		{"unknown flag", nil, []string{"--conns", "3"}, "conns"},
		{"stray argument", nil, []string{"now"}, `unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sweepEnv(t, tt.env...)
			var stdout, stderr bytes.Buffer
			args := append([]string{"sweep", "--out", filepath.Join(t.TempDir(), "out.json"), "--work-dir", filepath.Join(dir, "never")}, tt.args...)
			err := run(args, &stdout, &stderr)
			if code := exitCode(err); code != 2 {
				t.Fatalf("exit %d (%v), want 2", code, err)
			}
			if msg := err.Error() + stderr.String(); !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not name %q", msg, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "never")); err == nil {
				t.Errorf("the work dir was created: something ran")
			}
		})
	}
}

func TestSweepHelp(t *testing.T) {
	sweepEnv(t)
	var stdout, stderr bytes.Buffer
	if err := run([]string{"sweep", "-h"}, &stdout, &stderr); err != nil {
		t.Fatalf("-h: %v, want exit 0", err)
	}
	for _, want := range []string{"usage: ceiling sweep", "-srv-cpuset", "-conns-ladder BATCH=LADDER", "CONNS_LADDER_<batch>"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr.String())
		}
	}
}

// A two-arm sweep lays its short first pass under the env and flags, as
// QUICK does, whether BASE_TARGET or --base-target asked for it.
func TestSweepTwoArmDefaults(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	os.WriteFile(ok, []byte(`{"name":"x","command":["/bin/true","{addr}"],"echo_url":"ws://{addr}/echo","ready":"tcp:{addr}"}`), 0o644)
	out := filepath.Join(dir, "out.json")
	tests := []struct {
		name     string
		env      []string
		args     []string
		duration time.Duration
		reps     int
		win      time.Duration // the compare repeats' window
	}{
		{"single arm", nil, nil, knob.DefaultDuration, result.DefaultCompareReps, knob.HeadlineCompareDuration},
		// COMPARE_BUDGET's blocks: (5m - 18 first-pass points x 4.7 s)
		// / 5.4 s; quick (2m - 6 x 3.7 s) / 5.4 s.
		{"flag", nil, []string{"--base-target", ok}, knob.FirstPassDuration, 39, knob.HeadlineCompareDuration},
		{"env", []string{"BASE_TARGET", ok}, nil, knob.FirstPassDuration, 39, knob.HeadlineCompareDuration},
		{"quick", []string{"BASE_TARGET", ok, "QUICK", "1"}, nil, knob.QuickFirstPassDuration, 18, knob.HeadlineCompareDuration},
		// The curve keeps its longer windows, whether the env or a
		// flag asks for it; the flag wins over the env.
		{"curve", []string{"BASE_TARGET", ok, "COMPARE_SCOPE", "curve"}, nil, knob.FirstPassDuration, result.DefaultCompareReps, knob.CurveCompareDuration},
		{"curve flag", nil, []string{"--base-target", ok, "--compare-scope", "curve"}, knob.FirstPassDuration, result.DefaultCompareReps, knob.CurveCompareDuration},
		{"curve quick", []string{"BASE_TARGET", ok, "QUICK", "1", "COMPARE_SCOPE", "curve"}, nil, knob.QuickFirstPassDuration, result.DefaultCompareReps, knob.QuickCurveCompareDuration},
		{"scope flag wins", []string{"COMPARE_SCOPE", "curve"}, []string{"--base-target", ok, "--compare-scope", "headline"}, knob.FirstPassDuration, 39, knob.HeadlineCompareDuration},
		{"window kept", []string{"BASE_TARGET", ok, "COMPARE_SCOPE", "curve", "COMPARE_DURATION", "3"}, nil, knob.FirstPassDuration, result.DefaultCompareReps, 3 * time.Second},
		{"duration kept", []string{"BASE_TARGET", ok, "DURATION", "7", "COMPARE_REPS", "9", "COMPARE_BUDGET", "0"}, nil, 7 * time.Second, 9, knob.HeadlineCompareDuration},
		{"flags win", []string{"COMPARE_REPS", "9"}, []string{"--base-target", ok, "--duration", "4s", "--compare-reps", "6", "--compare-budget", "0", "--compare-duration", "2s"}, 4 * time.Second, 6, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sweepEnv(t, tt.env...)
			o, err := sweepOptions(append([]string{"--target", ok, "--out", out}, tt.args...), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if o.Point.Duration != tt.duration || o.Compare.Reps != tt.reps || o.Compare.Duration != tt.win {
				t.Errorf("duration %s, compare reps %d, compare window %s; want %s, %d, %s", o.Point.Duration, o.Compare.Reps, o.Compare.Duration, tt.duration, tt.reps, tt.win)
			}
		})
	}
}

// FAIL_ON gates a finished two-arm sweep as publish comment's --fail-on
// does: exit 1 on the verdicts it names, after the result was written.
func TestSweepGate(t *testing.T) {
	doc := func(verdict string) *result.Result {
		return &result.Result{Comparison: &result.Comparison{Headline: result.ComparedPoint{Verdict: verdict, Reason: verdict + ": why"}}}
	}
	for _, tc := range []struct {
		policy, verdict string
		code            int
	}{
		{"", result.CompareSlower, 0},
		{"never", result.CompareSlower, 0},
		{"slower", result.CompareSlower, 1},
		{"slower", result.CompareCannotConclude, 0},
		{"inconclusive", result.CompareCannotConclude, 1},
		{"slower,inconclusive", result.CompareCannotConclude, 1},
		{"slower,inconclusive", result.CompareWithinNoise, 0},
		{"slower,inconclusive", result.CompareFaster, 0},
	} {
		err := sweepGate(doc(tc.verdict), tc.policy)
		got := 0
		if err != nil {
			got = exitCode(err)
		}
		want := map[string]string{result.CompareSlower: "the headline is slower", result.CompareCannotConclude: "the headline cannot conclude: why is under the comparison above"}[tc.verdict]
		if got != tc.code || tc.code == 1 && !strings.Contains(err.Error(), "FAIL_ON (--fail-on) "+tc.policy+": "+want) {
			t.Errorf("FAIL_ON %q on %s: exit %d (%v), want %d", tc.policy, tc.verdict, got, err, tc.code)
		}
	}
	// A slower verdict from a sequential look says its level, and why the
	// level is not ALPHA (a bare "p < 0.0479" once left that unsaid).
	p := 0.0078
	seq := &result.Result{Comparison: &result.Comparison{Alpha: 0.05, Reps: 13, Stop: result.StopOBF,
		Headline: result.ComparedPoint{Verdict: result.CompareSlower, PValue: &p, NPairs: 8, Level: result.FinalLevel(result.StopOBF, 8, 13, 0.05)}}}
	err := sweepGate(seq, "slower")
	for _, want := range []string{"the headline is slower: p = 0.008, below the level 0.0", "O'Brien-Fleming's stopping rule", "all of them together keep 0.05"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("FAIL_ON on a sequential look: %v; want it to say %q", err, want)
		}
	}
	t.Logf("%v", err)
	if err := sweepGate(&result.Result{}, "slower"); err != nil {
		t.Errorf("no comparison: %v", err)
	}
	// The memory clause: a headline whose server memory per connection
	// is higher fails only when the policy names memory.
	higher := doc(result.CompareWithinNoise)
	higher.Comparison.Headline.Memory = &result.MemoryComparison{Verdict: result.MemoryHigher, Reason: "higher: p < 0.05 (+4.10 KB)"}
	for policy, code := range map[string]int{"slower,inconclusive": 0, "memory": 1, "slower,memory": 1, "never": 0} {
		got := 0
		if err := sweepGate(higher, policy); err != nil {
			got = exitCode(err)
			if !strings.Contains(err.Error(), "server memory per connection is higher: p < 0.05") {
				t.Errorf("FAIL_ON %s: %v", policy, err)
			}
		}
		if got != code {
			t.Errorf("FAIL_ON %q on a higher memory: exit %d, want %d", policy, got, code)
		}
	}
}
