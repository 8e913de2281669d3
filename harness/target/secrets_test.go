package target

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestTargetSecrets(t *testing.T) {
	tg := Spec{
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
		tg    Spec
		field string
	}{
		{"unknown secret_env", Spec{SecretEnv: []string{"NOPE"}}, "secret_env"},
		{"empty literal", Spec{SecretValues: []string{""}}, "secrets[0]"},
		{"short literal", Spec{SecretValues: []string{"abc"}}, "secrets[0]"},
		{"short fanout", Spec{Blocks: map[string]json.RawMessage{"fanout": json.RawMessage(`{"url":"ws://{addr}","app_id":"a","key":"k","secret":"s"}`)}}, "fanout.secret"},
		{"short env by name", Spec{Env: map[string]string{"API_TOKEN": "t"}}, "env.API_TOKEN"},
		{"short env marked", Spec{Env: map[string]string{"X": "t"}, SecretEnv: []string{"X"}}, "env.X"},
		{"short flag", Spec{Command: []string{"srv", "--secret", "S"}}, "command"},
		{"secret_args out of range", Spec{Command: []string{"srv"}, SecretArgs: []int{1}}, "secret_args"},
		{"short secret arg", Spec{Command: []string{"srv", "-k", "abc"}, SecretArgs: []int{2}}, "command[2]"},
	}
	var short *ShortSecretError
	if err := (Spec{SecretValues: []string{"abc"}}).CheckSecrets(); !errors.As(err, &short) || short.Source != "secrets[0]" || short.Len != 3 {
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
	if err := (Spec{Env: map[string]string{"TOKEN_FILE": "/x"}}).CheckSecrets(); err != nil {
		t.Errorf("a *_FILE variable is not a secret: %v", err)
	}
	var joined interface{ Unwrap() []error }
	if err := (Spec{SecretValues: []string{"a", "b"}}).CheckSecrets(); !errors.As(err, &joined) || len(joined.Unwrap()) != 2 {
		t.Errorf("want both short secrets reported, got %v", err)
	}
}
