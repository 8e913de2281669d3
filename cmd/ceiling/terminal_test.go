package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTerminalOutputIsNeutralised is issue 52's sixth failure: `ceiling
// history --changes` wrote a hostile history line's ESC, BEL and
// right-to-left override straight to the terminal. Every command's
// output passes run's one termsafe.Writer: the history table and the
// change points of a history whose strings carry terminal controls show
// none of them, and keep the text around them.
func TestTerminalOutputIsNeutralised(t *testing.T) {
	const hostile = "\x1b]0;pwned\x07\x1b[2J\u202egol\u202c\u009b31m\r"
	raw, err := os.ReadFile("../../publish/testdata/history_change.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		e["generator"] = "gen" + hostile
		e["regime"] = e["regime"].(string) + hostile
		e["target"] = "tgt" + hostile
		b, _ := json.Marshal(e)
		lines = append(lines, string(b))
	}
	file := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"history", "--changes", "--file", file}, {"history", "--file", file}} {
		stdout, stderr, code := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s", args, code, stderr)
		}
		for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u202c", "\u009b", "\r"} {
			if strings.Contains(stdout+stderr, bad) {
				t.Errorf("%q printed %q:\n%q", args, bad, stdout)
			}
		}
		if !strings.Contains(stdout, "gen") {
			t.Errorf("%q lost the text around the controls:\n%s", args, stdout)
		}
	}
}
