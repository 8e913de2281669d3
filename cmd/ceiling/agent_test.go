package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/agents"
)

// TestAgentBadInput: bad flags exit 2 naming the flag, before dialing.
func TestAgentBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--index", "0"}, "", "--coordinator is required"},
		{[]string{"--coordinator", "127.0.0.1:1"}, "", "--index (or JOB_COMPLETION_INDEX) is required"},
		{[]string{"--coordinator", "127.0.0.1:1"}, "x", "JOB_COMPLETION_INDEX"},
		{[]string{"--coordinator", "127.0.0.1:1", "--index", "0", "--dial-timeout", "0s"}, "", "--dial-timeout"},
		{[]string{"--coordinator", "127.0.0.1:1", "--index", "0", "--rejoin", "-1"}, "", "--rejoin"},
		{[]string{"--coordinator", "127.0.0.1:1", "--index", "zero"}, "", "-index"},
		{[]string{"--coordinator", "127.0.0.1:1", "--index", "0", "extra"}, "", `unexpected argument "extra"`},
		{[]string{"--coordinator", "127.0.0.1:1", "--index", "0", "--token-file", "/nonexistent/token"}, "", "--token-file: stat /nonexistent/token"},
	} {
		t.Setenv("JOB_COMPLETION_INDEX", tc.env)
		t.Setenv("AGENTS_TOKEN", "kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA")
		var out, errb bytes.Buffer
		err := run(append([]string{"agent"}, tc.args...), &out, &errb)
		if exitCode(err) != 2 || !strings.Contains(err.Error()+errb.String(), tc.want) {
			t.Errorf("%v (JOB_COMPLETION_INDEX=%q): exit %d, %v; want 2 naming %q", tc.args, tc.env, exitCode(err), err, tc.want)
		}
	}
}

// TestAgentHelpHidesWallSkew: the test-only --wall-skew is not in -h.
func TestAgentHelpHidesWallSkew(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"agent", "-h"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if h := errb.String(); !strings.Contains(h, "-coordinator") || strings.Contains(h, "wall-skew") {
		t.Errorf("help:\n%s", h)
	}
}

// TestAgentNeedsAToken: without --token-file or AGENTS_TOKEN, or with a
// token too short to be secret, the agent exits 2 before dialing.
func TestAgentNeedsAToken(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"", "no token: give --token-file FILE or set AGENTS_TOKEN"},
		{"short", "AGENTS_TOKEN: the token is 5 bytes, want at least 16"},
		{"aaaaaaaaaaaaaaaa", "AGENTS_TOKEN: the token shows about 8 bits of entropy, want at least 128"},
	} {
		t.Setenv("AGENTS_TOKEN", tc.env)
		var out, errb bytes.Buffer
		err := run([]string{"agent", "--coordinator", "127.0.0.1:1", "--index", "0"}, &out, &errb)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("AGENTS_TOKEN=%q: exit %d, %v; want 2 with %q", tc.env, exitCode(err), err, tc.want)
		}
	}
}

// TestAgentNewToken: --new-token prints a fresh token that the agents'
// own rule accepts, and another each time.
func TestAgentNewToken(t *testing.T) {
	var tokens []string
	for range 2 {
		var out, errb bytes.Buffer
		if err := run([]string{"agent", "--new-token"}, &out, &errb); err != nil {
			t.Fatalf("%v: %s", err, errb.String())
		}
		tok := strings.TrimSpace(out.String())
		if _, err := agents.ParseToken("--new-token", out.String()); err != nil || len(tok) != 43 {
			t.Errorf("--new-token printed %d bytes: %v", len(tok), err)
		}
		tokens = append(tokens, tok)
	}
	if tokens[0] == tokens[1] {
		t.Error("--new-token printed the same token twice")
	}
}
