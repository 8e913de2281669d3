package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokenRules(t *testing.T) {
	if _, err := ParseToken("AGENTS_TOKEN", "  short\n"); err == nil || !strings.Contains(err.Error(), "AGENTS_TOKEN: the token is 5 bytes, want at least 16") {
		t.Errorf("short token: %v", err)
	}
	tok, err := ParseToken("x", "0123456789abcdef\n")
	if err != nil || tok.Text() != "0123456789abcdef" {
		t.Fatalf("token %q, %v: want the text without its newline", tok.Text(), err)
	}
	if s := fmt.Sprintf("%v %s %+v %#v", tok, tok, tok, tok); strings.Contains(s, "0123") {
		t.Errorf("a token printed itself: %s", s)
	}
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("0123456789abcdef0123"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTokenFile(open); err == nil || !strings.Contains(err.Error(), "chmod 600") || !strings.Contains(err.Error(), open) {
		t.Errorf("world-readable token file: %v, want refused naming it", err)
	}
	_ = os.Chmod(open, 0o600)
	if got, err := ReadTokenFile(open); err != nil || got.Text() != "0123456789abcdef0123" {
		t.Errorf("token file: %q %v", got.Text(), err)
	}
	if _, err := ReadTokenFile(filepath.Join(dir, "none")); err == nil {
		t.Error("missing token file: no error")
	}
	if NewToken().Text() == NewToken().Text() || len(NewToken().Text()) != 64 {
		t.Error("NewToken: want 32 fresh random bytes in hex")
	}
}
