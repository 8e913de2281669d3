package schedule

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

// TestScheduleIsPure: a schedule is a function of what the points
// measured.
//
// It never links what measures or runs (the supervisor, the CPU sampling
// and attribution, the readiness probe, the metrics scraper, the target
// files, pinning, the network lab, gopsutil, the calibrator, the
// generator's library, the agents), nor the knobs (which link pinning: a
// plan comes in as SweepPlan or TwoArmPlan) nor the verdict (the harness
// judges a point before a schedule reads it). Unlike the verdict's, its
// graph holds no os/exec and no net/http: those are banned outright. The
// harness's top-level package needs no ban: it imports this package, and
// an import back would be a cycle the compiler refuses. Its own files are
// held to more: they import nothing that does I/O or starts a process,
// and read no clock.
func TestScheduleIsPure(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"harness/schedule",
		mod+"harness/supervise", mod+"harness/cpusample", mod+"harness/attrib", mod+"harness/probe",
		mod+"harness/scrape", mod+"harness/target", mod+"harness/knob", mod+"harness/agents",
		mod+"harness/verdict", mod+"pinning", mod+"calibrate", mod+"load", mod+"internal/netlab",
		mod+"internal/procfs", "github.com/shirou/gopsutil", "os/exec", "os/signal", "net/http")

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
