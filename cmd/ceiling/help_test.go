package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ceiling-bench/ceiling/harness/knob"
)

// TestSweepHelpSections: sweep's help is grouped, and every flag of the
// knob table is in exactly one section, so a new knob cannot go unlisted.
func TestSweepHelpSections(t *testing.T) {
	seen := map[string]int{}
	for _, sec := range sweepSections {
		for _, f := range sec.flags {
			seen[f]++
		}
	}
	flags := map[string]bool{}
	for _, k := range knob.Knobs {
		if k.Flag == "" {
			continue
		}
		flags[k.Flag] = true
		if seen[k.Flag] != 1 {
			t.Errorf("--%s is in %d sections of sweep's help, want 1 (sweepSections)", k.Flag, seen[k.Flag])
		}
	}
	for f := range seen {
		if !flags[f] {
			t.Errorf("sweepSections lists --%s, which the knob table has not", f)
		}
	}
}

// TestHelpFits is issue 33's help a person can read: every command's
// help uses the double dash its errors use, keeps within 100 columns,
// and sweep's opens with examples before its grouped flags.
func TestHelpFits(t *testing.T) {
	for _, args := range [][]string{
		{"sweep", "--help"}, {"compare", "-h"}, {"load", "-h"}, {"init", "-h"}, {"history", "-h"},
		{"report", "-h"}, {"calibrate", "-h"}, {"publish", "commit", "-h"}, {"publish", "comment", "-h"},
		{"action", "-h"}, {"agent", "-h"},
	} {
		stdout, stderr, code := runCLI(t, "", args...)
		help := stdout + stderr
		if code != 0 || !strings.Contains(help, "  --") {
			t.Errorf("%q: exit %d, no double-dash flag:\n%s", args, code, help)
			continue
		}
		for i, line := range strings.Split(help, "\n") {
			if n := utf8.RuneCountInString(line); n > 100 {
				t.Errorf("%q: line %d is %d columns: %q", args, i+1, n, line)
			}
			if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
				t.Errorf("%q: line %d in the single-dash style: %q", args, i+1, line)
			}
		}
		if args[0] == "sweep" {
			ex := strings.Index(help, "ceiling sweep --quick")
			sec := strings.Index(help, "\ncomparing two servers")
			if ex < 0 || sec < 0 || ex > sec {
				t.Errorf("sweep's help: examples at %d, the compare section at %d; want examples first, then sections", ex, sec)
			}
		}
	}
}
