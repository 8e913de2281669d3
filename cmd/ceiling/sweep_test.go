package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweepEnv clears every knob variable so the host's environment cannot
// leak into a case; set lists NAME, VALUE pairs to set after.
func sweepEnv(t *testing.T, set ...string) {
	t.Helper()
	for _, v := range []string{"SRV_CPUSET", "LT_CPUSET", "ALLOW_OVERLAP", "BATCH_LADDER", "RECORD_SIZE", "HEADLINE_BATCH",
		"REPS", "DURATION", "WARMUP", "SCENARIO", "OUT", "QUICK", "GENERATOR", "TARGET", "HEADROOM_PROBE"} {
		t.Setenv(v, "")
	}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "CONNS_LADDER_") {
			t.Setenv(name, "")
		}
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
