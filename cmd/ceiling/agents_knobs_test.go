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
