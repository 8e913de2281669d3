package knob

import (
	"bufio"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/load"

	"github.com/google/go-cmp/cmp"
)

// TestKnobTable: every row can be set by some name, has no name another
// row has, and has what its callers need.
func TestKnobTable(t *testing.T) {
	envs, flags := map[string]bool{}, map[string]bool{}
	for _, k := range Knobs {
		if k.Env == "" && k.Flag == "" {
			t.Errorf("a row with neither variable nor flag: %+v", k)
		}
		if k.Parse == nil || k.Get == nil || k.Help == "" || k.Default == "" {
			t.Errorf("%s: Parse, Get, Help and Default are required", k.Name())
		}
		if d := k.doc(); d != DocSweep && d != DocCompare {
			t.Errorf("%s: doc %q", k.Name(), d)
		}
		if k.Env != "" && envs[k.Env] || k.Flag != "" && flags[k.Flag] {
			t.Errorf("%s: named twice", k.Name())
		}
		envs[k.Env], flags[k.Flag] = true, true
		if strings.HasPrefix(k.Flag, "-") || strings.Contains(k.Env, " ") {
			t.Errorf("%s: write the flag without dashes, the variable as one word", k.Name())
		}
		if _, ok := k.Pattern(); ok && k.Flag != "" && !strings.Contains(k.Arg, "=") {
			t.Errorf("%s: a pattern row's flag takes KEY=VALUE, Arg %q", k.Name(), k.Arg)
		}
	}
}

// TestKnobDocs: the Knobs tables of docs/sweep.md and docs/compare.md are
// the table's (KnobDocTable), so they list exactly its variables, flags
// and defaults. -update rewrites them.
func TestKnobDocs(t *testing.T) {
	for doc, path := range map[string]string{DocSweep: "../../docs/sweep.md", DocCompare: "../../docs/compare.md"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		begin, end := KnobDocBegin(doc)+"\n", KnobDocEnd(doc)
		i, j := strings.Index(text, begin), strings.Index(text, end)
		if i < 0 || j < i {
			t.Errorf("%s: no %q ... %q around its knob table", path, begin, end)
			continue
		}
		got, want := text[i+len(begin):j], KnobDocTable(doc)
		if got == want {
			continue
		}
		if *update {
			if err := os.WriteFile(path, []byte(text[:i+len(begin)]+want+text[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: the knob table differs from harness/knob/knobs.go (go test ./harness/knob -run TestKnobDocs -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestMakefileExportsEveryKnob: the Makefile's export lines name every
// variable of the table and nothing else, so `make ceiling VAR=...`
// reaches `ceiling sweep` for every knob; a pattern row's family is
// exported by a filter over .VARIABLES.
func TestMakefileExportsEveryKnob(t *testing.T) {
	f, err := os.Open("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exported := map[string]bool{}
	var text strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		text.WriteString(line + "\n")
		if rest, ok := strings.CutPrefix(line, "export "); ok {
			for _, name := range strings.Fields(rest) {
				exported[name] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range Knobs {
		if k.Env == "" {
			continue
		}
		if prefix, ok := k.Pattern(); ok {
			if !strings.Contains(text.String(), "$(filter "+prefix+"%,$(.VARIABLES))") {
				t.Errorf("Makefile: no export of %s (a filter %s%% over .VARIABLES)", k.Env, prefix)
			}
			continue
		}
		if !exported[k.Env] {
			t.Errorf("Makefile: %s is a knob but no export line names it", k.Env)
		}
		delete(exported, k.Env)
	}
	for name := range exported {
		t.Errorf("Makefile: exports %s, which is no knob of harness/knob/knobs.go", name)
	}
}

// TestKnobEnvAndFlagAgree: a variable and its flag given the same text
// set the same Options, and the flag's String reads the value back.
func TestKnobEnvAndFlagAgree(t *testing.T) {
	sample := map[string]string{
		"LIST": "0", "LADDER": "10 20", "BATCH=LADDER": "8,16", "N": "3", "BYTES": "3",
		"DURATION": "4s", "NAME": "fanout", "FILE": "x.json", "COMMAND": "true",
		"FRACTION": "0.25", "LEVEL": "0.25", "URL": "ws://{addr}/x", "PROBE": "tcp:{addr}", "DIR": "d", "CONDITIONS": "latency_ns.p99 <= 5ms", "ADDRS": "4", "MODE": "bisect", "PATTERN": "eager", "": "true",
		"HOST:PORT": "127.0.0.1:7000", "LO-HI": "40000-40099", "RULE": "obf", "KIND": "duet", "SCOPE": "curve", "POLICY": "slower", "SRV/LT": "1/0", "ARMS": "warm", "READY/STOP": "2s/4s", "WHEN": "on",
		"TOKEN": "kQ7vX2pL9zR4mT8wB3nY6cJ1hF5dG0sA", "USER": "nobody", "KIND:SERVER@FRACTION": "kill:node2@0.5",
	}
	for _, k := range Knobs {
		v, ok := sample[k.Arg]
		if !ok {
			t.Errorf("%s: no sample value for Arg %q", k.Name(), k.Arg)
			continue
		}
		byFlag := DefaultOptions(false)
		flagText := v
		if _, ok := k.Pattern(); ok {
			flagText = "10=" + v
		}
		if err := (KnobValue{K: k, O: &byFlag}).Set(flagText); err != nil {
			t.Errorf("%s: flag %q: %v", k.Name(), flagText, err)
			continue
		}
		// A token reads back as "[token]": it never prints.
		if got := (KnobValue{K: k, O: &byFlag}).String(); got != flagText && (k.Arg != "TOKEN" || got != "[token]") {
			t.Errorf("%s: String() = %q after Set(%q)", k.Name(), got, flagText)
		}
		if k.Env == "" || k.Early {
			continue
		}
		name := k.Env
		if prefix, ok := k.Pattern(); ok {
			name = prefix + "10"
		}
		byEnv := DefaultOptions(false)
		lookup, environ := envOf(name, v)
		if err := byEnv.ApplyEnv(lookup, environ); err != nil {
			t.Errorf("%s=%q: %v", name, v, err)
			continue
		}
		if diff := cmp.Diff(byFlag, byEnv); diff != "" {
			t.Errorf("%s and --%s given %q differ (-flag +env):\n%s", name, k.Flag, v, diff)
		}
	}
}

// TestScenarioHelpListsTheRegistry: the SCENARIO knob's help, and so the
// flag's usage and the docs table, names every registered scenario.
func TestScenarioHelpListsTheRegistry(t *testing.T) {
	k, ok := KnobByEnv("SCENARIO")
	if !ok {
		t.Fatal("no SCENARIO knob")
	}
	names := load.ScenarioNames()
	if len(names) < 7 {
		t.Fatalf("registry holds %q: the scenarios ceiling ships are not linked in", names)
	}
	for _, n := range names {
		if !strings.Contains(k.HelpText(), "`"+n+"`") || !strings.Contains(k.FlagUsage(), n) {
			t.Errorf("SCENARIO help does not name %q: %s", n, k.HelpText())
		}
	}
	if strings.Contains(k.HelpText(), "{scenarios}") {
		t.Errorf("placeholder left in: %s", k.HelpText())
	}
}

var update = flag.Bool("update", false, "rewrite the docs' knob tables")
