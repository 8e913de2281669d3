package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepRefusesBeforeBoot (issue 8 items 1, 4b): an OUT that cannot be
// written and a secret too short to redact are exit 2 before anything
// boots, naming OUT or where the secret came from.
func TestSweepRefusesBeforeBoot(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	os.WriteFile(target, []byte(`{"name":"x","command":["/bin/sh","{addr}"],"echo_url":"ws://{addr}/echo","ready":"tcp:{addr}"}`), 0o644)
	shortTarget := filepath.Join(dir, "short.json")
	os.WriteFile(shortTarget, []byte(`{"name":"x","command":["/bin/sh","{addr}"],"env":{"DB_PASSWORD":"pw"},"echo_url":"ws://{addr}/echo","ready":"tcp:{addr}"}`), 0o644)
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, nil, 0o644)
	good := filepath.Join(dir, "out.json")

	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"out in /proc", nil, []string{"--out", "/proc/x.json"}, "OUT /proc/x.json"},
		{"out under a file", []string{"OUT", filepath.Join(file, "out.json")}, nil, "is not a directory"},
		{"out is a directory", nil, []string{"--out", dir}, "is a directory"},
		{"short --server-cmd secret", nil, []string{"--server-cmd", "/bin/sh --addr {addr} --secret abc"}, "too short"},
		{"short target secret", nil, []string{"--target", shortTarget}, "env.DB_PASSWORD"},
		{"short GENERATOR secret", []string{"GENERATOR", "/bin/true --token abc"}, nil, "GENERATOR"},
		{"keep work dir", []string{"KEEP_WORK_DIR", "perhaps"}, nil, "KEEP_WORK_DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sweepEnv(t, tt.env...)
			t.Setenv("KEEP_WORK_DIR", "")
			for i := 0; i+1 < len(tt.env); i += 2 {
				t.Setenv(tt.env[i], tt.env[i+1])
			}
			var stdout, stderr bytes.Buffer
			args := []string{"sweep", "--srv-cpuset", "0", "--lt-cpuset", "0", "--allow-overlap", "--target", target,
				"--work-dir", filepath.Join(dir, "never")}
			if !strings.Contains(strings.Join(tt.env, " "), "OUT") {
				args = append(args, "--out", good)
			}
			err := run(append(args, tt.args...), &stdout, &stderr)
			if code := exitCode(err); code != 2 {
				t.Fatalf("exit %d (%v), want 2", code, err)
			}
			msg := err.Error() + stderr.String()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not name %q", msg, tt.want)
			}
			if strings.Contains(msg, "abc") || strings.Contains(msg, `"pw"`) {
				t.Errorf("message %q repeats the secret", msg)
			}
			if _, err := os.Stat(filepath.Join(dir, "never")); err == nil {
				t.Errorf("the work dir was created: something ran")
			}
		})
	}
}
