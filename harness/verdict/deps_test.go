package verdict

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestVerdictIsPure: the verdict is a function of what a point measured.
//
// It never links what measures (the supervisor, the CPU sampling and
// attribution, the readiness probe, the metrics scraper, pinning, the
// network lab, gopsutil, the calibrator). testenv.ImportsNone bans a path
// with everything below it, so the harness's top-level package cannot be
// named here without banning this package too; it needs no ban: the
// harness imports this package, and an import back would be a cycle the
// compiler refuses.
//
// os/exec and net/http are linked, through load (the home of load.Summary
// and load.Result, which an Outcome carries) and harness/agents: they
// cannot be banned from the graph while those types live there. So the
// package's own files are held to it instead: they import nothing that
// does I/O or starts a process, and read no clock.
func TestVerdictIsPure(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/verdict",
		mod+"harness/supervise", mod+"harness/cpusample", mod+"harness/attrib", mod+"harness/probe",
		mod+"harness/scrape", mod+"harness/target", mod+"harness/knob", mod+"pinning", mod+"calibrate",
		mod+"internal/netlab", "github.com/shirou/gopsutil")

	bannedImports := map[string]bool{
		"os": true, "os/exec": true, "os/signal": true, "io/fs": true, "io/ioutil": true, "syscall": true,
		"net": true, "net/http": true, "path/filepath": true, "runtime": true, "unsafe": true,
		"math/rand": true, "math/rand/v2": true, "crypto/rand": true,
	}
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		n++
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		timeName := ""
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if bannedImports[path] {
				t.Errorf("%s imports %s", name, path)
			}
			if path == "time" {
				timeName = "time"
				if im.Name != nil {
					timeName = im.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && clock[sel.Sel.Name] {
				t.Errorf("%s: time.%s reads the clock", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if n < 3 {
		t.Fatalf("read %d of the package's files: %v", n, files)
	}
}
