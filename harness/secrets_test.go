package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/redact"
)

func TestTargetSecrets(t *testing.T) {
	tg := TargetSpec{
		Command: []string{"srv", "--addr", "{addr}", "--token", "command-token-1", "--key=public", "-k", "positional-1"},
		Env: map[string]string{
			"DB_PASSWORD": "db-password-1",
			"LICENSE":     "license-value-1",
			"PORT":        "{port}",
		},
		SecretEnv:    []string{"LICENSE"},
		SecretArgs:   []int{7},
		SecretValues: []string{"literal-secret-1", "fanout-secret-1"},
		Blocks:       map[string]json.RawMessage{"fanout": json.RawMessage(`{"url":"ws://{addr}","app_id":"a","key":"k","secret":"fanout-secret-1"}`)},
	}
	want := []string{"fanout-secret-1", "literal-secret-1", "positional-1", "license-value-1", "db-password-1", "command-token-1"}
	if got := tg.Secrets(); !reflect.DeepEqual(got, want) {
		t.Errorf("Secrets = %q, want %q", got, want)
	}
	if err := tg.CheckSecrets(); err != nil {
		t.Errorf("CheckSecrets: %v", err)
	}
}

func TestCheckSecretsRefuses(t *testing.T) {
	tests := []struct {
		name  string
		tg    TargetSpec
		field string
	}{
		{"unknown secret_env", TargetSpec{SecretEnv: []string{"NOPE"}}, "secret_env"},
		{"empty literal", TargetSpec{SecretValues: []string{""}}, "secrets[0]"},
		{"short literal", TargetSpec{SecretValues: []string{"abc"}}, "secrets[0]"},
		{"short fanout", TargetSpec{Blocks: map[string]json.RawMessage{"fanout": json.RawMessage(`{"url":"ws://{addr}","app_id":"a","key":"k","secret":"s"}`)}}, "fanout.secret"},
		{"short env by name", TargetSpec{Env: map[string]string{"API_TOKEN": "t"}}, "env.API_TOKEN"},
		{"short env marked", TargetSpec{Env: map[string]string{"X": "t"}, SecretEnv: []string{"X"}}, "env.X"},
		{"short flag", TargetSpec{Command: []string{"srv", "--secret", "S"}}, "command"},
		{"secret_args out of range", TargetSpec{Command: []string{"srv"}, SecretArgs: []int{1}}, "secret_args"},
		{"short secret arg", TargetSpec{Command: []string{"srv", "-k", "abc"}, SecretArgs: []int{2}}, "command[2]"},
	}
	var short *ShortSecretError
	if err := (TargetSpec{SecretValues: []string{"abc"}}).CheckSecrets(); !errors.As(err, &short) || short.Source != "secrets[0]" || short.Len != 3 {
		t.Errorf("a short literal: %v, want a *ShortSecretError for secrets[0]", err)
	}
	for _, tt := range tests {
		err := tt.tg.CheckSecrets()
		if err == nil || !strings.HasPrefix(err.Error(), tt.field) {
			t.Errorf("%s: CheckSecrets = %v, want an error naming %s", tt.name, err, tt.field)
		}
		// Check reports it too, before anything boots.
		if err := tt.tg.Check(); err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: Check = %v, want it to name %s", tt.name, err, tt.field)
		}
	}
	if err := (TargetSpec{Env: map[string]string{"TOKEN_FILE": "/x"}}).CheckSecrets(); err != nil {
		t.Errorf("a *_FILE variable is not a secret: %v", err)
	}
	var joined interface{ Unwrap() []error }
	if err := (TargetSpec{SecretValues: []string{"a", "b"}}).CheckSecrets(); !errors.As(err, &joined) || len(joined.Unwrap()) != 2 {
		t.Errorf("want both short secrets reported, got %v", err)
	}
}

func TestRedactResultEveryString(t *testing.T) {
	const sec = "s3cr3t-value-42"
	set := redact.New(sec)
	r := &Result{
		Regime:        "x " + sec,
		PartialReason: sec,
		Warnings:      []string{"w " + sec},
		Curve: []Point{{
			FailReason: "reason " + sec, VerdictReason: sec, LogTail: "config: secret=" + sec + "\n",
			Escalated: []string{sec},
		}},
		HeadroomProbe: &HeadroomProbe{Conclusion: sec},
		Config:        Config{ConnsLadders: map[string][]int{"10": {1}}},
	}
	r.Meta.Command = []string{"ceiling", "sweep", "--server-cmd", "srv --secret " + sec, "--token", "tiny"}
	r.Meta.Target = Target{Command: []string{"srv", "--secret", sec}, URL: "ws://u:" + sec + "@h/"}
	r.Meta.GitRef = sec
	RedactResult(r, set)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if set.Contains(data) || bytes.Contains(data, []byte("tiny")) {
		t.Fatalf("secret left in %s", data)
	}
	if n := bytes.Count(data, []byte(redact.Mask)); n < 12 {
		t.Errorf("%d masks in %s, want every field masked", n, data)
	}
	if got := r.Meta.Command[3]; got != "srv --secret REDACTED" {
		t.Errorf("meta.command element %q", got)
	}
	if r.Config.ConnsLadders["10"][0] != 1 {
		t.Error("a non-string value changed")
	}
}

func TestRedactFile(t *testing.T) {
	dir := t.TempDir()
	set := redact.New("long-secret-1")
	p := filepath.Join(dir, "server.log")
	os.WriteFile(p, []byte("boot\nconfig: --secret long-secret-1 ok\nno newline at end long-secret-1"), 0o600)
	if err := RedactFile(p, set); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if want := "boot\nconfig: --secret REDACTED ok\nno newline at end REDACTED"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want kept", fi.Mode().Perm())
	}
	if err := RedactFile(filepath.Join(dir, "none"), set); err != nil {
		t.Errorf("missing file: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestSweepSecrets(t *testing.T) {
	o := DefaultOptions(false)
	o.Generator = "wrap --api-token gen-token-123 --x"
	tg := TargetSpec{Command: []string{"srv", "--secret", "cmd-secret-1"}}
	set, notes, err := SweepSecrets(&o, tg, []string{"GITHUB_TOKEN=ghp_long_value", "CI_TOKEN=1", "PATH=/bin"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"gen-token-123", "cmd-secret-1", "ghp_long_value"} {
		if !set.Contains([]byte(s)) {
			t.Errorf("%s not among the secrets", s)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "CI_TOKEN") || strings.Contains(notes[0], "=1") {
		t.Errorf("notes %q: want one naming CI_TOKEN, not its value", notes)
	}
	o.Generator = "wrap --token abc"
	_, _, err = SweepSecrets(&o, tg, nil)
	var short *ShortSecretError
	if !errors.As(err, &short) || !strings.HasPrefix(short.Source, "GENERATOR") {
		t.Errorf("short GENERATOR secret: %v, want a ShortSecretError naming GENERATOR", err)
	}
}

func TestRedactWriter(t *testing.T) {
	var b bytes.Buffer
	w := newRedactWriter(&b, redact.New("long-secret-1"))
	n, err := fmt.Fprintf(w, "point 1 failed: long-secret-1\n")
	if err != nil || n != len("point 1 failed: long-secret-1\n") {
		t.Errorf("n %d err %v", n, err)
	}
	if b.String() != "point 1 failed: REDACTED\n" {
		t.Errorf("wrote %q", b.String())
	}
}
