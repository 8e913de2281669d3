package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/redact"
)

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

func TestGather(t *testing.T) {
	o := knob.DefaultOptions(false)
	o.Generator = "wrap --api-token gen-token-123 --x"
	tg := target.Spec{Command: []string{"srv", "--secret", "cmd-secret-1"}}
	set, notes, err := Gather(o.Generator, tg, []string{"GITHUB_TOKEN=ghp_long_value", "CI_TOKEN=1", "PATH=/bin"})
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
	_, _, err = Gather(o.Generator, tg, nil)
	var short *target.ShortSecretError
	if !errors.As(err, &short) || !strings.HasPrefix(short.Source, "GENERATOR") {
		t.Errorf("short GENERATOR secret: %v, want a target.ShortSecretError naming GENERATOR", err)
	}
}

func TestNewWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, redact.New("long-secret-1"))
	n, err := fmt.Fprintf(w, "point 1 failed: long-secret-1\n")
	if err != nil || n != len("point 1 failed: long-secret-1\n") {
		t.Errorf("n %d err %v", n, err)
	}
	if b.String() != "point 1 failed: REDACTED\n" {
		t.Errorf("wrote %q", b.String())
	}
}
