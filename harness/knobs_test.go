package harness

import (
	"bufio"
	"os"
	"strings"
	"testing"
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
	for doc, path := range map[string]string{DocSweep: "../docs/sweep.md", DocCompare: "../docs/compare.md"} {
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
		t.Errorf("%s: the knob table differs from harness/knobs.go (go test ./harness -run TestKnobDocs -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestMakefileExportsEveryKnob: the Makefile's export lines name every
// variable of the table and nothing else, so `make ceiling VAR=...`
// reaches `ceiling sweep` for every knob; a pattern row's family is
// exported by a filter over .VARIABLES.
func TestMakefileExportsEveryKnob(t *testing.T) {
	f, err := os.Open("../Makefile")
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
		t.Errorf("Makefile: exports %s, which is no knob of harness/knobs.go", name)
	}
}
