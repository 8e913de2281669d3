package harness

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestTargetSecrets(t *testing.T) {
	tg := TargetSpec{
		Command: []string{"srv", "--addr", "{addr}", "--token", "command-token-1", "--key=public"},
		Env: map[string]string{
			"DB_PASSWORD": "db-password-1",
			"LICENSE":     "license-value-1",
			"PORT":        "{port}",
		},
		SecretEnv:    []string{"LICENSE"},
		SecretValues: []string{"literal-secret-1", "fanout-secret-1"},
		Fanout:       &FanoutTarget{Secret: "fanout-secret-1"},
	}
	want := []string{"fanout-secret-1", "literal-secret-1", "license-value-1", "db-password-1", "command-token-1"}
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
		{"short fanout", TargetSpec{Fanout: &FanoutTarget{Secret: "s"}}, "fanout.secret"},
		{"short env by name", TargetSpec{Env: map[string]string{"API_TOKEN": "t"}}, "env.API_TOKEN"},
		{"short env marked", TargetSpec{Env: map[string]string{"X": "t"}, SecretEnv: []string{"X"}}, "env.X"},
		{"short flag", TargetSpec{Command: []string{"srv", "--secret", "S"}}, "command"},
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
