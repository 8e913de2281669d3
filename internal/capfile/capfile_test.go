package capfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadRefusesPastItsCap: /dev/zero (no size, no end) and a regular
// file one byte past the cap are refused naming what and the cap; a
// file at the cap is read.
func TestReadRefusesPastItsCap(t *testing.T) {
	var tl *TooLargeError
	if _, err := Read("token file", "/dev/zero", Token); !errors.As(err, &tl) || !strings.Contains(err.Error(), "/dev/zero: larger than 4 KiB, the most ceiling reads of a token file") {
		t.Errorf("/dev/zero: %v", err)
	}
	dir := t.TempDir()
	at, past := filepath.Join(dir, "at"), filepath.Join(dir, "past")
	_ = os.WriteFile(at, make([]byte, Token), 0o600)
	_ = os.WriteFile(past, make([]byte, Token+1), 0o600)
	if b, err := Read("x", at, Token); err != nil || len(b) != Token {
		t.Errorf("at the cap: %d bytes, %v", len(b), err)
	}
	if _, err := Read("x", past, Token); !errors.As(err, &tl) {
		t.Errorf("past the cap: %v", err)
	}
	if _, err := Read("x", filepath.Join(dir, "none"), Token); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
