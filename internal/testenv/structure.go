package testenv

import (
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The shape of a package, read from its source: which of its files
// reference which (Package.Refs), how long its functions are
// (Package.Funcs) and how many methods each of its types has
// (Package.Methods). A package's structure test states its limits with
// them (NoMutualFiles, FuncsAtMost, MethodsAtMost), so that a back
// reference or a god object fails a unit test instead of a review.

// Package is the package in a directory, parsed and type-checked: its
// non-test files as `go build` would pick them.
type Package struct {
	Fset  *token.FileSet
	Files []*ast.File
	Info  *types.Info
	Types *types.Package
}

// LoadPackage parses and type-checks the package in dir (its non-test
// files for this GOOS and GOARCH), importing its dependencies from the
// export data `go list -export` builds.
func LoadPackage(t testing.TB, dir string) *Package {
	t.Helper()
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", dir).Output()
	if err != nil {
		t.Fatalf("go list -export -deps %s: %v", dir, err)
	}
	exports := map[string]string{}
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(l, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	p := &Package{Fset: token.NewFileSet(), Info: &types.Info{
		Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
	}}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(p.Fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		p.Files = append(p.Files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(p.Fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})}
	if p.Types, err = conf.Check(bp.ImportPath, p.Fset, p.Files, p.Info); err != nil {
		t.Fatalf("type-check %s: %v", dir, err)
	}
	return p
}

// ParsePackage parses the package in dir (its non-test files for this
// GOOS and GOARCH) without type-checking it: enough for Funcs; nil where
// dir holds no Go package.
func ParsePackage(t testing.TB, dir string) *Package {
	t.Helper()
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		t.Fatalf("%s: %v", dir, err)
	}
	p := &Package{Fset: token.NewFileSet()}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(p.Fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		p.Files = append(p.Files, f)
	}
	return p
}

// fileOf is the base name of the file pos is in.
func (p *Package) fileOf(pos token.Pos) string { return filepath.Base(p.Fset.Position(pos).Filename) }

// Ref is one reference from a file to a name another file of the
// package declares.
type Ref struct {
	From, To string // base names of the two files
	Name     string // the object referenced: "pointRun", "(*ProcRunner).boot", "Spec.Index"
	At       string // where: file:line
}

// Refs are the references between the package's files, by (from, to)
// file, the first of each: an identifier, a method or a field used in
// one file and declared in another (an embedded field's promoted method
// is its declarer's).
func (p *Package) Refs() map[[2]string]Ref {
	refs := map[[2]string]Ref{}
	for id, obj := range p.Info.Uses {
		if obj == nil || obj.Pkg() != p.Types || !obj.Pos().IsValid() {
			continue
		}
		from, to := p.fileOf(id.Pos()), p.fileOf(obj.Pos())
		if from == to {
			continue
		}
		key := [2]string{from, to}
		at := p.Fset.Position(id.Pos())
		r := Ref{From: from, To: to, Name: objName(obj), At: fmt.Sprintf("%s:%d", from, at.Line)}
		if old, ok := refs[key]; !ok || r.At < old.At {
			refs[key] = r
		}
	}
	return refs
}

// objName names obj as a reader would look for it.
func objName(obj types.Object) string {
	if f, ok := obj.(*types.Func); ok {
		if recv := f.Signature().Recv(); recv != nil {
			return fmt.Sprintf("(%s).%s", types.TypeString(recv.Type(), func(*types.Package) string { return "" }), f.Name())
		}
	}
	if v, ok := obj.(*types.Var); ok && v.IsField() {
		return "field " + v.Name()
	}
	return obj.Name()
}

// NoMutualFiles fails t for every pair of the package's files that
// reference each other (Refs), naming one reference each way: a file
// reads its dependencies, never its readers.
func NoMutualFiles(t testing.TB, p *Package) {
	t.Helper()
	refs := p.Refs()
	var pairs []string
	for k, r := range refs {
		if k[0] >= k[1] {
			continue
		}
		if back, ok := refs[[2]string{k[1], k[0]}]; ok {
			pairs = append(pairs, fmt.Sprintf("%s and %s reference each other: %s uses %s; %s uses %s", k[0], k[1], r.At, r.Name, back.At, back.Name))
		}
	}
	slices.Sort(pairs)
	for _, s := range pairs {
		t.Error(s)
	}
}

// Func is one function or method of a package and its length in lines,
// from `func` to its closing brace (its doc comment not counted).
type Func struct {
	Name  string // "Run", "(*ProcRunner).RunPoint"
	At    string // file:line
	Lines int
}

// Funcs are the package's functions and methods with their lengths.
func (p *Package) Funcs() []Func {
	var out []Func
	for _, f := range p.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				name = "(" + types.ExprString(fd.Recv.List[0].Type) + ")." + name
			}
			start, end := p.Fset.Position(fd.Type.Pos()), p.Fset.Position(fd.End())
			out = append(out, Func{Name: name, At: fmt.Sprintf("%s:%d", filepath.Base(start.Filename), start.Line), Lines: end.Line - start.Line + 1})
		}
	}
	return out
}

// FuncsAtMost fails t for every function of the package longer than n
// lines.
func FuncsAtMost(t testing.TB, p *Package, n int) {
	t.Helper()
	for _, f := range p.Funcs() {
		if f.Lines > n {
			t.Errorf("%s (%s) is %d lines, more than %d", f.Name, f.At, f.Lines, n)
		}
	}
}

// Methods is the number of methods declared on each named type of the
// package (on T and *T together).
func (p *Package) Methods() map[string]int {
	out := map[string]int{}
	for _, name := range p.Types.Scope().Names() {
		if tn, ok := p.Types.Scope().Lookup(name).(*types.TypeName); ok {
			if n, ok := tn.Type().(*types.Named); ok && n.NumMethods() > 0 {
				out[name] = n.NumMethods()
			}
		}
	}
	return out
}

// MethodsAtMost fails t for every named type of the package with more
// than n methods.
func MethodsAtMost(t testing.TB, p *Package, n int) {
	t.Helper()
	for name, k := range p.Methods() {
		if k > n {
			t.Errorf("%s has %d methods, more than %d", name, k, n)
		}
	}
}
