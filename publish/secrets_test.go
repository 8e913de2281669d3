package publish

import (
	"errors"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/google/go-cmp/cmp"
)

func TestCheckSecretsNamesPaths(t *testing.T) {
	t.Parallel()
	const s = `pa"ss\word-12345`
	set := redact.New(s)
	doc := `{"meta":{"command":["x","--secret","pa\"ss\\word-12345"]},"curve":[{},{"log_tail":"a\npa\"ss\\word-12345\n"}],"pa\"ss\\word-12345":1}`
	err := CheckSecrets([]byte(doc), "r.json", set)
	var se *SecretError
	if !errors.As(err, &se) {
		t.Fatalf("CheckSecrets = %v, want a *SecretError", err)
	}
	want := []string{"curve[1].log_tail", "document (a key)", "meta.command[2]"}
	if diff := cmp.Diff(want, se.Paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "word-12345") {
		t.Errorf("the secret is in the error: %v", err)
	}
	if err := CheckSecrets([]byte(`{"meta":{"command":["x"]}}`), "r.json", set); err != nil {
		t.Errorf("clean document: %v", err)
	}
	if err := CheckSecrets([]byte(doc), "r.json", redact.New()); err != nil {
		t.Errorf("no secrets configured: %v", err)
	}
}

func TestSecretsSkipsShortEnvironmentValues(t *testing.T) {
	t.Parallel()
	set := Secrets([]string{"GITHUB_TOKEN=ghs_0123456789", "SOME_TOKEN=1", "PATH=/usr/bin"}, []string{"", "short"})
	if set.Len() != 1 || !set.Contains([]byte("ghs_0123456789")) {
		t.Errorf("set has %d secrets, want only the GITHUB_TOKEN value", set.Len())
	}
}
