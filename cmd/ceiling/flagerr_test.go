package main

import (
	"errors"
	"strings"
	"testing"
)

// A mistyped command or flag is said first, in the double-dash style of
// every usage, with the closest names ceiling has; no usage is printed
// before it (only -h prints one).
func TestTyposSayDidYouMean(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"swep"}, `ceiling: unknown command "swep"; did you mean sweep? (ceiling help lists the commands)`},
		{[]string{"histroy"}, `did you mean history?`},
		{[]string{"frobnicate"}, `unknown command "frobnicate" (ceiling help lists the commands)`},
		{[]string{"sweep", "--duraton", "3s"}, "flag provided but not defined: --duraton; did you mean --duration? (ceiling sweep -h lists its flags)"},
		{[]string{"sweep", "--batch-ladder", "x"}, `invalid value "x" for flag --batch-ladder: rung "x"`},
		{[]string{"init", "--server-cmd", "x {addr}", "--acton-ref", "v1.0.0"}, "not defined: --acton-ref; did you mean --action-ref?"},
		{[]string{"publish", "comment", "--hed", "x.json"}, "did you mean --head?"},
		{[]string{"load", "--conections", "2"}, "did you mean --connections?"},
		{[]string{"calibrate", "--duratin", "1s"}, "did you mean --duration?"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runCLI(t, "", tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
		if first, _, _ := strings.Cut(stderr, "\n"); !strings.HasPrefix(first, "ceiling: ") || strings.Contains(stderr+stdout, "usage:") {
			t.Errorf("%v: the error is not said first, alone: %q", tt.args, stderr)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"duration", "warmup", "batch-ladder", "conns-ladder", "out", "quick"}
	for _, tt := range []struct {
		name string
		want string
	}{
		{"duraton", "duration"},
		{"batch", "batch-ladder"},
		{"ladder", ""},
		{"qick", "quick"},
		{"o", ""},
		{"zzzzzz", ""},
	} {
		if got := strings.Join(closest(tt.name, names), ","); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestErrorText: main prints a command's error within 100 columns, as
// everything ceiling prints; a typo's hint was 110.
func TestErrorText(t *testing.T) {
	_, stderr, _ := runCLI(t, "", "sweep", "--duraton", "3s")
	msg := strings.TrimSpace(strings.TrimPrefix(stderr, "ceiling:"))
	got := errorText(errors.New(msg))
	for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if n := len([]rune(line)); n > 100 {
			t.Errorf("a line of %d columns: %q", n, line)
		}
	}
	if strings.Join(strings.Fields(got), " ") != "ceiling: "+msg {
		t.Errorf("errorText lost words: %q from %q", got, msg)
	}
	if len(msg) <= 100-len("ceiling: ") {
		t.Errorf("the typo's message %q is short: the test shows nothing", msg)
	}
}
