package agents

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/internal/agenttoken"
	"github.com/ceiling-bench/ceiling/internal/capfile"
)

// Authentication (doc.go, "Authentication"): every session opens with a
// mutual HMAC challenge on a token both sides hold. The token never
// crosses the wire; each side sends a fresh nonce and proves it holds the
// token by an HMAC-SHA256 over both nonces and the agent's index, with
// its role in the MAC, so that neither proof can be replayed as the
// other's or into another session. The coordinator sends nothing but its
// challenge before the agent has proven itself: no flags, no secrets, not
// even whether the index is one it has.

// MinTokenBytes is the shortest token accepted (agenttoken.MinBytes: a
// proof is computable offline from one handshake, so the token must be
// too long to guess).
const MinTokenBytes = agenttoken.MinBytes

// AuthTimeout bounds the agent's side of a handshake (its wait for the
// challenge); the hub wants the answer sooner (AnswerTimeout, admit.go).
const AuthTimeout = 10 * time.Second

// MaxPending is how many connections may be unauthenticated at once. One
// more takes the place of the oldest that has had MinHold, or is closed
// as it is accepted when none has (admit.go).
const MaxPending = 64

// maxAuthLine bounds a handshake message (a hello or auth is about 150
// bytes): an unauthenticated peer holds at most this much of ours.
const maxAuthLine = 1024

// nonceBytes is each side's nonce, before hex.
const nonceBytes = 32

// Token is the secret a coordinator and its agents share. It prints as
// "[token]": never as itself.
type Token struct{ b []byte }

// ParseToken is the token in text (surrounding white space, such as a
// file's final newline, is not part of it), checked by agenttoken.Check.
// source names where text came from, for the error.
func ParseToken(source, text string) (Token, error) {
	t, err := agenttoken.Check(source, text)
	if err != nil {
		return Token{}, err
	}
	return Token{b: []byte(t)}, nil
}

// ReadTokenFile reads a token file, refused unless only its reader may
// read it (TokenFileMode).
func ReadTokenFile(path string) (Token, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Token{}, err
	}
	owner, group := -1, -1
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		owner, group = int(st.Uid), int(st.Gid)
	}
	groups, _ := os.Getgroups()
	if err := TokenFileMode(fi.Mode().Perm(), owner, group, os.Getuid(), os.Getgid(), groups); err != nil {
		return Token{}, fmt.Errorf("%s: %w", path, err)
	}
	b, err := capfile.Read("token file", path, capfile.Token)
	if err != nil {
		return Token{}, err
	}
	return ParseToken(path, string(b))
}

// TokenFileMode is the rule for a token file of mode perm, owned by
// owner and group, read by a process of uid, gid and supplementary
// groups: as ssh keeps a private key, no bits for other users, and no
// group bits on a file of one's own (chmod 600). One exception, read
// only: a file owned by root that this process (not root) reads through
// one of its groups, mode 0440 or 0040: a Kubernetes Secret mounted with
// an fsGroup (deploy/k8s), or an administrator's deliberate root:group
// file. A group-writable file is never accepted.
func TokenFileMode(perm os.FileMode, owner, group, uid, gid int, groups []int) error {
	switch {
	case perm&0o007 != 0:
		return fmt.Errorf("mode %v lets other users read the token: chmod 600 it", perm)
	case perm&0o070 == 0:
		return nil
	case perm&0o030 != 0:
		return fmt.Errorf("mode %v lets its group write or run the token file: chmod 600 it", perm)
	case owner == 0 && uid != 0 && (group == gid || slices.Contains(groups, group)):
		return nil // root's, read through the process's group (fsGroup)
	}
	return fmt.Errorf("mode %v lets its group read the token: chmod 600 it (only a root-owned file read through one of the reader's groups, as Kubernetes mounts a Secret with an fsGroup, may be group-readable)", perm)
}

// NewToken is a fresh random token (hex, so that it can go in an
// environment variable): the harness's own agents get one per point.
func NewToken() Token { return Token{b: []byte(newNonce())} }

// Text is the token itself, to hand to an agent in its environment
// (TokenEnv). Nothing else should print it.
func (t Token) Text() string { return string(t.b) }

// IsZero reports whether t holds no token.
func (t Token) IsZero() bool { return len(t.b) == 0 }

// Equal reports whether t and u are the same token (in constant time).
func (t Token) Equal(u Token) bool { return hmac.Equal(t.b, u.b) }

func (t Token) String() string   { return "[token]" }
func (t Token) GoString() string { return "agents.Token{[token]}" }

// TokenEnv is the variable `ceiling agent` reads its token from when it
// has no --token-file (the harness gives its own agents the sweep's token
// there: an environment is readable only by the same user, an argv by
// everyone).
const TokenEnv = "AGENTS_TOKEN"

// proof is role's proof for the session of agent index with nonces a
// (the agent's) and c (the coordinator's), hex.
func (t Token) proof(role string, index int, a, c string) string {
	m := hmac.New(sha256.New, t.b)
	m.Write([]byte("ceiling-agents/" + strconv.Itoa(Version) + "\x00" + role + "\x00" + strconv.Itoa(index) + "\x00" + a + "\x00" + c))
	return hex.EncodeToString(m.Sum(nil))
}

// verify reports whether got is role's proof, in constant time.
func (t Token) verify(got, role string, index int, a, c string) bool {
	return hmac.Equal([]byte(got), []byte(t.proof(role, index, a, c)))
}

const (
	roleAgent       = "agent"
	roleCoordinator = "coordinator"
)

// newNonce is 32 random bytes in hex (also a fresh token's text).
func newNonce() string {
	b := make([]byte, nonceBytes)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// validHex reports whether s is n bytes in lower-case hex.
func validHex(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// errAuth is every authentication failure as the peer is told it: the
// same words whatever went wrong, so that a prober learns nothing.
var errAuth = errors.New("auth: authentication failed")

// authenticate is the coordinator's side of the handshake on a new
// connection: it returns the agent's index once the agent proved the
// token. The error is for the coordinator's log; the peer is only ever
// told errAuth.
func (h *Hub) authenticate(c *conn) (int, error) {
	_ = c.c.SetDeadline(time.Now().Add(AnswerTimeout)) // admit.go
	defer c.c.SetDeadline(time.Time{})
	c.limit = maxAuthLine
	defer func() { c.limit = 0 }()
	b, err := c.expect(tHello)
	if err != nil {
		return 0, err
	}
	hello := b.(*Hello) // it earns nothing: the place is still due back (admit.go)
	nc := newNonce()
	if err := c.send(tChallenge, &Challenge{Nonce: nc, Proof: h.token.proof(roleCoordinator, hello.Index, hello.Nonce, nc)}); err != nil {
		return 0, err
	}
	b, err = c.expect(tAuth)
	if err != nil {
		return 0, err
	}
	if !h.token.verify(b.(*AuthMsg).Proof, roleAgent, hello.Index, hello.Nonce, nc) {
		return 0, errors.New("auth.proof: does not match: the agent has another token")
	}
	return hello.Index, nil
}

// CoordinatorAuthError is a coordinator that did not prove it holds the
// agent's token (another token, or not a ceiling coordinator at all), or
// that refused the agent's proof, or (with TLS) whose certificate did
// not verify or that refused ours: the agent gives up rather than redial.
type CoordinatorAuthError struct{ Reason string }

func (e *CoordinatorAuthError) Error() string { return "authentication: " + e.Reason }

// UnchallengedError is a connection that ended before the coordinator's
// challenge came: the coordinator never looked at this agent (its
// handshake places were full, or it was restarting). It says nothing
// about the agent, so it does not count against --rejoin (RunAgent).
type UnchallengedError struct{ Err error }

func (e *UnchallengedError) Error() string {
	return "closed before the coordinator's challenge: " + e.Err.Error()
}
func (e *UnchallengedError) Unwrap() error { return e.Err }

// authenticateTo is the agent's side of the handshake: it proves the
// token to the coordinator only after the coordinator proved it.
func authenticateTo(c *conn, token Token, index int) error {
	c.limit = maxAuthLine
	defer func() { c.limit = 0 }()
	na := newNonce()
	if err := c.send(tHello, &Hello{Index: index, Nonce: na}); err != nil {
		return &UnchallengedError{Err: fmt.Errorf("hello: %w", err)}
	}
	b, err := c.expect(tChallenge)
	if err != nil {
		var ab *AbortError
		if errors.As(err, &ab) && strings.HasPrefix(ab.Reason, "auth") {
			return &CoordinatorAuthError{Reason: "the coordinator refused this agent's token"}
		}
		if ab == nil {
			return &UnchallengedError{Err: fmt.Errorf("challenge: %w", err)}
		}
		return fmt.Errorf("challenge: %w", err)
	}
	ch := b.(*Challenge)
	if !token.verify(ch.Proof, roleCoordinator, index, na, ch.Nonce) {
		return &CoordinatorAuthError{Reason: "the coordinator did not prove the token (it has another AGENTS_TOKEN, or is not a ceiling coordinator): nothing sent"}
	}
	if err := c.send(tAuth, &AuthMsg{Proof: token.proof(roleAgent, index, na, ch.Nonce)}); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	return nil
}
