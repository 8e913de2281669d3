package main

import (
	"strings"
	"testing"
)

// TestFilesAreCapped is issue 52's fourth bound: `ceiling history --file
// /dev/zero` read without end (1.2 GB in seconds). Every file the CLI
// reads whole is capped (internal/capfile): exit 2, naming the flag and
// the cap. On ba59874 it does not return.
func TestFilesAreCapped(t *testing.T) {
	for _, args := range [][]string{
		{"history", "--file", "/dev/zero"},
		{"history", "--changes", "--file", "/dev/zero"},
		{"publish", "comment", "--dry-run", "--head", "/dev/zero"},
	} {
		_, stderr, code := runCLI(t, "", args...)
		flag := args[len(args)-2]
		if code != 2 || !strings.Contains(stderr, flag+": /dev/zero: larger than 64 MiB") {
			t.Errorf("%q: exit %d, want 2 naming %s and the cap:\n%s", args, code, flag, stderr)
		}
	}
}
