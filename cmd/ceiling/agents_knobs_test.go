package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentsKnobsBadInput: AGENTS_LISTEN without AGENTS, a listen address
// that is no host:port and a bad port range exit 2 naming the knob, before
// anything boots.
func TestAgentsKnobsBadInput(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"AGENTS_LISTEN", "127.0.0.1:7000"}, "AGENTS_LISTEN needs AGENTS"},
		{[]string{"AGENTS", "2", "AGENTS_LISTEN", "7000"}, "AGENTS_LISTEN"},
		{[]string{"AGENTS", "2", "AGENTS_PORT_RANGE", "40000-3"}, "AGENTS_PORT_RANGE"},
		{[]string{"AGENTS", "2", "AGENTS_NETNS", "maybe"}, "AGENTS_NETNS"},
		{[]string{"AGENTS", "2", "AGENTS_LISTEN", "0.0.0.0:7000"}, "AGENTS_LISTEN (--agents-listen) 0.0.0.0:7000: needs AGENTS_TOKEN or AGENTS_TOKEN_FILE"},
		{[]string{"AGENTS", "2", "AGENTS_LISTEN", "127.0.0.1:7000"}, "needs AGENTS_TOKEN"},
		{[]string{"AGENTS", "2", "AGENTS_LISTEN", "127.0.0.1:7000", "AGENTS_TOKEN", "short"}, "AGENTS_TOKEN: the value: the token is 5 bytes"},
		{[]string{"AGENTS", "2", "AGENTS_LISTEN", "127.0.0.1:7000", "AGENTS_TOKEN_FILE", "/nonexistent/t"}, "AGENTS_TOKEN_FILE (--agents-token-file): stat /nonexistent/t"},
		{[]string{"AGENTS", "2", "AGENTS_LISTEN", "127.0.0.1:7000", "AGENTS_TOKEN_FILE", worldReadable(t)}, "lets other users read the token: chmod 600"},
		{[]string{"AGENTS", "2", "AGENTS_TOKEN", "kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA"}, "only AGENTS_LISTEN's remote agents take a token"},
		{[]string{"AGENTS", "2", "AGENTS_TLS_CERT", "/x.pem"}, "only AGENTS_LISTEN's remote agents use TLS"},
		{[]string{"AGENTS", "2", "AGENTS_LISTEN", "127.0.0.1:7000", "AGENTS_TOKEN", "kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA", "AGENTS_TLS_CERT", "/x.pem", "AGENTS_TLS_CA", "/ca.pem"}, "AGENTS_TLS_KEY (--agents-tls-key): key: not given: mutual TLS needs the certificate, its key and the CA"},
		{[]string{"AGENTS", "2", "AGENTS_LISTEN", "127.0.0.1:7000", "AGENTS_TOKEN", "kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA", "AGENTS_TLS_CERT", "/nonexistent/c.pem", "AGENTS_TLS_KEY", "/nonexistent/k.pem", "AGENTS_TLS_CA", "/nonexistent/ca.pem"}, "AGENTS_TLS_CERT (--agents-tls-cert): cert /nonexistent/c.pem"},
	} {
		t.Run(strings.Join(tc.env, "="), func(t *testing.T) {
			sweepEnv(t, tc.env...)
			work := filepath.Join(t.TempDir(), "never")
			out := filepath.Join(t.TempDir(), "out.json")
			err := run([]string{"sweep", "--out", out, "--work-dir", work}, new(bytes.Buffer), new(bytes.Buffer))
			if exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v (exit %d), want exit 2 naming %s", err, exitCode(err), tc.want)
			}
			for _, p := range []string{work, out} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s exists: something ran", p)
				}
			}
		})
	}
}

// worldReadable is a token file of mode 644.
func worldReadable(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte("kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
