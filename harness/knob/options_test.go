package knob

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestApplyEnv(t *testing.T) {
	lookup, environ := envOf(
		"BATCH_LADDER", "10 100",
		"CONNS_LADDER_100", "8,16",
		"RECORD_SIZE", "512",
		"REPS", "2",
		"DURATION", "5",
		"WARMUP", "500ms",
		"SCENARIO", "fanout",
		"OUT", "/tmp/x.json",
		"SRV_CPUSET", "", // make exports unset variables as empty: ignored
	)
	o := DefaultOptions(false)
	if err := o.ApplyEnv(lookup, environ); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Ladder{10, 100}, o.BatchLadder); diff != "" {
		t.Errorf("BatchLadder (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Ladder{8, 16}, o.ConnsLadder(100)); diff != "" {
		t.Errorf("ConnsLadder(100) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(DefaultConnsLadder(10), o.ConnsLadder(10)); diff != "" {
		t.Errorf("ConnsLadder(10) should stay default (-want +got):\n%s", diff)
	}
	got := []any{o.RecordSize, o.Reps, o.Duration, o.Warmup, o.Scenario, o.Out, len(o.ServerCPUs)}
	want := []any{512, 2, 5 * time.Second, 500 * time.Millisecond, "fanout", "/tmp/x.json", 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestApplyEnvErrorsNameTheVariable(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"BATCH_LADDER", "10 abc", "BATCH_LADDER: rung"},
		{"CONNS_LADDER_10", "0", "CONNS_LADDER_10: rung"},
		{"CONNS_LADDER_ten", "1", "CONNS_LADDER_ten"},
		{"RECORD_SIZE", "-1", "RECORD_SIZE"},
		{"REPS", "0", "REPS"},
		{"HEADLINE_BATCH", "ten", "HEADLINE_BATCH"},
		{"DURATION", "soon", "DURATION"},
		{"WARMUP", "-1s", "WARMUP"},
		{"SRV_CPUSET", "0-", "SRV_CPUSET"},
		{"LT_CPUSET", "0,0", "LT_CPUSET"},
		{"ALLOW_OVERLAP", "maybe", "ALLOW_OVERLAP"},
	}
	for _, tt := range tests {
		lookup, environ := envOf(tt.name, tt.value)
		o := DefaultOptions(false)
		err := o.ApplyEnv(lookup, environ)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s=%q: error %v, want it to name %q", tt.name, tt.value, err, tt.want)
		}
	}
	if _, err := QuickFromEnv(func(string) (string, bool) { return "yes please", true }); err == nil || !strings.Contains(err.Error(), "QUICK") {
		t.Errorf("QUICK=yes please: error %v, want it to name QUICK", err)
	}
}

func TestParseSecondsAndFractionRefuseNonFinite(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"10", 10 * time.Second, ""},
		{"1.5", 1500 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"NaN", 0, "not a finite duration"},
		{"Inf", 0, "not a finite duration"},
		{"-Inf", 0, "not a finite duration"},
		{"-1", 0, "negative"},
		{"-1s", 0, "negative"},
		{"1e12", 0, "longer than a duration can hold"},
	} {
		got, err := ParseSeconds(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseSeconds(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseSeconds(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.err)
		}
	}
	for _, in := range []string{"NaN", "+Inf", "-Inf", "infinity", "half"} {
		if f, err := ParseFraction(in); err == nil {
			t.Errorf("ParseFraction(%q) = %v, want an error", in, f)
		}
	}
	if f, err := ParseFraction("0.5"); err != nil || f != 0.5 {
		t.Errorf("ParseFraction(0.5) = %v, %v", f, err)
	}
}

// TestProfileKnob: PROFILE_DIR sets the option; a file is no directory.
func TestProfileKnob(t *testing.T) {
	o := DefaultOptions(false)
	lookup, environ := envOf("PROFILE_DIR", "out/prof")
	if err := o.ApplyEnv(lookup, environ); err != nil || o.ProfileDir != "out/prof" {
		t.Fatalf("PROFILE_DIR: %q, %v", o.ProfileDir, err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o2 := DefaultOptions(false)
	lookup, environ = envOf("PROFILE_DIR", file)
	if err := o2.ApplyEnv(lookup, environ); err == nil || !strings.Contains(err.Error(), "PROFILE_DIR: "+file+" is not a directory") {
		t.Errorf("a file as PROFILE_DIR: %v", err)
	}
}

func envOf(kv ...string) (func(string) (string, bool), []string) {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	var environ []string
	for k, v := range m {
		environ = append(environ, k+"="+v)
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }, environ
}

// TestRepsBounded: REPS and COMPARE_REPS past their bounds are refused by
// the knob's own check, naming the bound, before anything is scheduled.
func TestRepsBounded(t *testing.T) {
	for _, tt := range []struct{ env, v, want string }{
		{"REPS", "1000000", "REPS: 1000000 is above 100"},
		{"REPS", "100", ""},
		{"COMPARE_REPS", "101", "COMPARE_REPS: 101 is above 100"},
		{"COMPARE_REPS", "100", ""},
	} {
		o := DefaultOptions(false)
		lookup, environ := envOf(tt.env, tt.v)
		err := o.ApplyEnv(lookup, environ)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s=%s: %v", tt.env, tt.v, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s=%s: %v, want %q", tt.env, tt.v, err, tt.want)
		}
		if errs := o.CheckKnobs(); tt.want != "" && len(errs) == 0 {
			t.Errorf("%s=%s: CheckKnobs passes it", tt.env, tt.v)
		}
	}
}

// The token prints as "[token]" whatever the verb: an Options printed
// whole for a debug line or an error never shows it.
func TestSecretNeverPrints(t *testing.T) {
	o := DefaultOptions(false)
	o.AgentsToken = Secret("0123456789abcdef-not-for-printing")
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		if s := fmt.Sprintf(verb, o); strings.Contains(s, "not-for-printing") {
			t.Errorf("%s shows the token: %s", verb, s)
		}
	}
	if o.AgentsToken.Text() != "0123456789abcdef-not-for-printing" {
		t.Errorf("Text() = %q", o.AgentsToken.Text())
	}
}
