package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
)

// TestLoadFlagDocs: docs/load.md's flag table and `ceiling load`'s flags
// agree: every flag common to the scenarios has a row, every flag a row
// names exists (common, or some scenario's), and a row for one common flag
// gives the flag's own default (where the flag has one: an empty default
// is resolved later, per scenario or automatically, as the row says).
func TestLoadFlagDocs(t *testing.T) {
	data, err := os.ReadFile("../../docs/load.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "## Flags\n")
	if start < 0 {
		t.Fatal("docs/load.md has no ## Flags section")
	}
	table := doc[start:]
	if end := strings.Index(table[len("## Flags\n"):], "\n## "); end >= 0 {
		table = table[:end]
	}
	var o loadOptions
	fs, err := newLoadFlags(&o, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	scenario := map[string]bool{}
	for _, d := range load.Scenarios() {
		sfs := flag.NewFlagSet(d.Name, flag.ContinueOnError)
		d.NewParams().Flags(sfs)
		sfs.VisitAll(func(f *flag.Flag) { scenario[f.Name] = true })
	}
	rowFlag := regexp.MustCompile("`--([a-z0-9-]+)")
	documented := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		names := rowFlag.FindAllStringSubmatch(cells[0], -1)
		for _, m := range names {
			name := m[1]
			documented[name] = true
			f := fs.Lookup(name)
			if f == nil && !scenario[name] {
				t.Errorf("docs/load.md documents --%s, which `ceiling load` does not have", name)
				continue
			}
			if f == nil || len(names) > 1 || scenario[name] || len(cells) < 2 {
				continue
			}
			def := strings.Trim(cells[1], "`")
			switch {
			case f.DefValue == def, f.DefValue == "", // "": resolved later (auto, per scenario)
				f.DefValue == "false" && (def == "" || def == "off" || def == "false"):
			default:
				t.Errorf("docs/load.md gives --%s the default %q; the flag's is %q", name, def, f.DefValue)
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !scenario[f.Name] && !documented[f.Name] {
			t.Errorf("--%s has no row in docs/load.md's flag table", f.Name)
		}
	})
}
