package harness

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestStructure: the harness's own files are layered (no two reference
// each other both ways: a file reads its dependencies, never its
// readers), no function is longer than 80 lines, and the point's types
// are small (issue 48: pointRun had 32 methods over 9 files, ProcRunner
// 17; a point is now a pipeline of stages, each a type of its own).
func TestStructure(t *testing.T) {
	p := testenv.LoadPackage(t, ".")
	t.Run("no mutual files", func(t *testing.T) { testenv.NoMutualFiles(t, p) })
	t.Run("functions at most 80 lines", func(t *testing.T) { testenv.FuncsAtMost(t, p, 80) })
	t.Run("functions at most 80 lines in every harness package", func(t *testing.T) {
		dirs := 0
		err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || dir == "." {
				return err
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if sub := testenv.ParsePackage(t, dir); sub != nil {
				dirs++
				testenv.FuncsAtMost(t, sub, 80)
			}
			return nil
		})
		if err != nil || dirs < 10 {
			t.Fatalf("walked %d packages below harness: %v", dirs, err)
		}
	})
	t.Run("the point's types at most 12 methods", func(t *testing.T) {
		methods := p.Methods()
		for _, name := range []string{"ProcRunner", "point", "procEnv", "generation", "window", "faultRun", "genProc", "freshServers", "warmServers", "externalServer"} {
			if p.Types.Scope().Lookup(name) == nil {
				t.Errorf("no type %s: this list names the point's types", name)
			}
			if n := methods[name]; n > 12 {
				t.Errorf("%s has %d methods, more than 12", name, n)
			}
		}
		if p.Types.Scope().Lookup("pointRun") != nil {
			t.Error("pointRun is back")
		}
	})
}
