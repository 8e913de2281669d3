package harness

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// resolvers are the declarations that may read knob.Options, directly or
// through the draft that embeds it: Resolve and its steps, which validate
// the knobs and fill what they left open, and the entry points that take
// the knobs from a caller. Everything else (Run, the sweeps, ProcRunner,
// the point pipeline, the result's meta and config) reads the Plan's
// groups (knob.Groups).
var resolvers = []string{
	"calibration.go: CalibrationConfig", "calibration.go: draft.resolveCalibration",
	"compareopts.go: draft.resolveCompare", "compareopts.go: draft.resolveDuet",
	"draft.go: draft", "draft.go: draft.plan", "resolve.go: ResolveKnobs", "resolve.go: Resolve",
	"targetplan.go: draft.resolveTarget", "targetplan.go: draft.resolveBaseTarget", "targetplan.go: draft.resolveObjective",
	"resolve.go: draft.resolveKnobs", "resolve.go: draft.resolveCPUs", "resolve.go: draft.resolveScenarioFile",
	"resolve.go: ResolveCPUs", "resolve.go: draft.resolveAgentsToken",
	"resolve.go: draft.resolveAgentsTLS",
	"targetplan.go: draft.forSweep", "targetplan.go: checkTargetFor",
	"limitsplan.go: draft.checkConnKnobs", "limitsplan.go: draft.checkLimits", "limitsplan.go: draft.limitsAsk", "limitsplan.go: draft.scenarioURLs",
}

// TestOnlyResolveReadsOptions fails when code that runs after Resolve
// reads knob.Options (or the draft plan) again: it reads the Plan's
// groups, filled once. A new step of Resolve goes in resolvers.
func TestOnlyResolveReadsOptions(t *testing.T) {
	seen := map[string]bool{}
	for _, dir := range []string{".", "agentside"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			for _, d := range optionsReaders(t, name) {
				if dir != "." || !slices.Contains(resolvers, d) {
					t.Errorf("%s reads knob.Options after Resolve: read the Plan's groups (knob.Groups), or make it a step of Resolve", d)
				}
				seen[d] = true
			}
		}
	}
	for _, d := range resolvers {
		if !seen[d] {
			t.Errorf("resolvers lists %s, which reads no knob.Options: drop it", d)
		}
	}
}

// optionsReaders are the top-level declarations of the file that name
// knob.Options or the draft, as "file: [receiver.]name".
func optionsReaders(t *testing.T, name string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	knobName := ""
	for _, im := range f.Imports {
		if path, _ := strconv.Unquote(im.Path.Value); path == "github.com/ceiling-bench/ceiling/harness/knob" {
			knobName = "knob"
			if im.Name != nil {
				knobName = im.Name.Name
			}
		}
	}
	mentions := func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && knobName != "" && id.Name == knobName && n.Sel.Name == "Options" {
					found = true
				}
			case *ast.Ident:
				found = found || n.Name == "draft"
			}
			return !found
		})
		return found
	}
	var out []string
	base := filepath.Base(name)
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !mentions(d) {
				continue
			}
			fn := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					fn = id.Name + "." + fn
				}
			}
			out = append(out, base+": "+fn)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if !mentions(s) {
					continue
				}
				what := "a declaration"
				if ts, ok := s.(*ast.TypeSpec); ok {
					what = ts.Name.Name
				}
				out = append(out, base+": "+what)
			}
		}
	}
	return out
}
