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
	tok, err := ParseToken("x", "kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA\n")
	if err != nil || tok.Text() != "kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA" {
		t.Fatalf("token %q, %v: want the text without its newline", tok.Text(), err)
	}
	if s := fmt.Sprintf("%v %s %+v %#v", tok, tok, tok, tok); strings.Contains(s, "kQ7v") {
		t.Errorf("a token printed itself: %s", s)
	}
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTokenFile(open); err == nil || !strings.Contains(err.Error(), "chmod 600") || !strings.Contains(err.Error(), open) {
		t.Errorf("world-readable token file: %v, want refused naming it", err)
	}
	_ = os.Chmod(open, 0o600)
	if got, err := ReadTokenFile(open); err != nil || got.Text() != "kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA" {
		t.Errorf("token file: %q %v", got.Text(), err)
	}
	if _, err := ReadTokenFile(filepath.Join(dir, "none")); err == nil {
		t.Error("missing token file: no error")
	}
	if NewToken().Text() == NewToken().Text() || len(NewToken().Text()) != 64 {
		t.Error("NewToken: want 32 fresh random bytes in hex")
	}
}

// TokenFileMode: other bits and group bits on one's own file are refused
// (mode 640 was accepted); a root-owned file read through one of the
// reader's groups may be group-readable (a Kubernetes Secret with an
// fsGroup, deploy/k8s), never group-writable.
func TestTokenFileMode(t *testing.T) {
	const me, myGroup, fsGroup, other = 1000, 1000, 65532, 4242
	tests := []struct {
		perm         os.FileMode
		owner, group int
		want         string // "" accepted
	}{
		{0o600, me, myGroup, ""},
		{0o400, me, myGroup, ""},
		{0o640, me, myGroup, "mode -rw-r----- lets its group read the token: chmod 600"},
		{0o644, me, myGroup, "lets other users read the token"},
		{0o604, me, myGroup, "lets other users read the token"},
		{0o660, me, myGroup, "lets its group write"},
		{0o440, 0, fsGroup, ""},                      // the Secret: root's, our supplementary group
		{0o440, 0, myGroup, ""},                      // root's, our own group
		{0o460, 0, fsGroup, "lets its group write"},  // never writable
		{0o444, 0, fsGroup, "lets other users read"}, // never other
		{0o440, 0, other, "lets its group read the token"},
		{0o440, me, fsGroup, "lets its group read the token"}, // not root's
	}
	for _, tt := range tests {
		err := TokenFileMode(tt.perm, tt.owner, tt.group, me, myGroup, []int{myGroup, fsGroup})
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("mode %o owner %d group %d: %v, want %q", tt.perm, tt.owner, tt.group, err, tt.want)
		}
	}
	// Root reads any file: a group bit on a file it reads is its group's.
	if err := TokenFileMode(0o440, 0, fsGroup, 0, 0, []int{fsGroup}); err == nil {
		t.Error("root reading a group-readable file: accepted")
	}
	// Through ReadTokenFile: a file of one's own at 640.
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte("kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA"), 0o640); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(p, 0o640)
	if _, err := ReadTokenFile(p); err == nil || !strings.Contains(err.Error(), p+": mode -rw-r----- lets its group read") {
		t.Errorf("a token file of mode 640: %v, want refused naming it", err)
	}
}
