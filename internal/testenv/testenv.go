// Package testenv holds what tests ask of the machine they run on, and
// how they react when it is missing: a skip on a developer's machine, a
// failure under CI=true, where .ci/run provides everything (it runs as
// root).
package testenv

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// NeedRoot returns when this process is root; otherwise it skips t, or,
// under CI=true, fails it, saying why root is needed.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("needs root (euid %d): %s; .ci/run runs as root", os.Geteuid(), why)
	}
	t.Skipf("needs root (euid %d): %s", os.Geteuid(), why)
}

// ImportsNone fails t for every package that pkgs (a `go list` pattern)
// links, by `go list -deps`, that is one of banned (import paths, each
// with everything below it): how a package's test keeps an import
// pointing the wrong way from coming back.
func ImportsNone(t testing.TB, pkgs string, banned ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkgs).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkgs, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %s gave %d packages: %q", pkgs, len(deps), deps)
	}
	for _, d := range deps {
		for _, b := range banned {
			if d == b || strings.HasPrefix(d, b+"/") {
				t.Errorf("%s depends on %s", pkgs, d)
				break
			}
		}
	}
}

// Steal is the share of the CPUs' time the hypervisor stole over d, read
// from /proc/stat's cpu line (ok false where there is none to read),
// while threads pinned to neighbouring CPUs pass a byte back and forth
// (a round trip each time, each side blocking in between), as a sweep's
// server and generator do: much of the steal a sweep meets is the host's
// delay in running a vCPU that was woken, which a busy loop that never
// sleeps does not see (docs/ARCHITECTURE.md, "Testing": busy loops read
// 0-0.3% where this read 1-15% in the same minute). One CPU: a busy loop.
func Steal(d time.Duration) (pct float64, ok bool) {
	stop := wakeLoad()
	s0, t0, ok0 := stealTicks()
	time.Sleep(d)
	s1, t1, ok1 := stealTicks()
	stop()
	if !ok0 || !ok1 || t1 <= t0 {
		return 0, false
	}
	return 100 * float64(s1-s0) / float64(t1-t0), true
}

// busyLoad keeps one thread busy until stop (which says 0 round trips).
func busyLoad() (stop func() int64) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for !done.Load() {
		}
	}()
	return func() int64 { done.Store(true); wg.Wait(); return 0 }
}

func stealTicks() (steal, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i == 7 {
			steal = n
		}
	}
	return steal, total, true
}

// quietBudget is what WaitForSteal may still wait in this test binary:
// the e2e lane runs one package at a time, each under its own timeout.
var (
	quietMu     sync.Mutex
	quietBudget = 8 * time.Minute
)

// calmSamples is how many 5-s reads in a row WaitForSteal wants at or
// below its bound: a burst comes and goes within minutes, and one calm
// read between two of its spells let three attempts run into it.
const calmSamples = 4

// WaitForSteal waits, before an end-to-end run is tried again, until the
// hypervisor has stolen at most maxPct of the CPUs' time over calmSamples
// reads of 5 s in a row: its steal comes in bursts, often of minutes, on
// a shared VM, and a sweep started inside one measures the neighbour. It
// waits at most what is left of a budget shared by the whole test binary
// (8 minutes), logging each wait, then returns: the run that follows
// judges its own window and fails naming the contention.
func WaitForSteal(t testing.TB, maxPct float64) {
	t.Helper()
	quietMu.Lock()
	defer quietMu.Unlock()
	// Never past the test's own deadline, less what the run after the
	// wait needs: a wait that outlived a child test binary's timeout got
	// it killed, unexplained, instead of failing naming the steal.
	budget := quietBudget
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			budget = min(budget, time.Until(dl)-runReserve)
		}
	}
	for calm := 0; calm < calmSamples; {
		start := time.Now()
		pct, ok := Steal(5 * time.Second)
		spent := time.Since(start)
		quietBudget -= spent
		budget -= spent
		if !ok {
			return
		}
		if pct <= maxPct {
			calm++
			if budget <= 0 {
				return // calm now, and no more waiting to spend
			}
			continue
		}
		calm = 0
		if budget <= 0 {
			t.Logf("the hypervisor stole %.1f%% of the CPUs' time over 5 s; the wait budget (or the test's time) is spent, running anyway", pct)
			return
		}
		t.Logf("the hypervisor stole %.1f%% of the CPUs' time over 5 s; waiting for %d calm reads in a row (%s of waiting left)", pct, calmSamples, budget.Round(time.Second))
	}
}

// runReserve is the time WaitForSteal leaves before its test's deadline
// for the run that follows the wait.
const runReserve = 2 * time.Minute

// FilesArePure fails t for every import of the package in the current
// directory (its non-test files) that does I/O, starts a process or draws
// randomness, and for every read of the clock (time.Now, Since, Sleep,
// timers): how a package that must be a function of its inputs (a
// verdict, a schedule) stays one, even where its dependency graph holds
// such packages through the types it reads.
func FilesArePure(t testing.TB) {
	t.Helper()
	banned := map[string]bool{
		"os": true, "os/exec": true, "os/signal": true, "io/fs": true, "io/ioutil": true, "syscall": true,
		"net": true, "net/http": true, "path/filepath": true, "runtime": true, "unsafe": true,
		"math/rand": true, "math/rand/v2": true, "crypto/rand": true,
	}
	fset, files := packageFiles(t)
	for _, f := range files {
		name := fset.Position(f.Package).Filename
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if banned[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
		for _, at := range clockReads(fset, f) {
			t.Error(at)
		}
	}
}

// ReadsNoClock fails t for every read of the wall clock (time.Now,
// Since, Until, Sleep, After, timers and tickers) in the non-test files
// of the package in the current directory but those named in except:
// how a package whose time must come through its Clock seam (the
// harness's top level) keeps it so.
func ReadsNoClock(t testing.TB, except ...string) {
	t.Helper()
	fset, files := packageFiles(t)
	for _, f := range files {
		if !slices.Contains(except, fset.Position(f.Package).Filename) {
			for _, at := range clockReads(fset, f) {
				t.Error(at)
			}
		}
	}
}

// packageFiles are the non-test files of the package in the current
// directory, parsed; it fails t when there is none.
func packageFiles(t testing.TB) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("read none of the package's files: %v", names)
	}
	return fset, files
}

// clockReads are f's reads of the wall clock, each with its position.
func clockReads(fset *token.FileSet, f *ast.File) []string {
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true}
	timeName := ""
	for _, im := range f.Imports {
		if path, _ := strconv.Unquote(im.Path.Value); path == "time" {
			timeName = "time"
			if im.Name != nil {
				timeName = im.Name.Name
			}
		}
	}
	var out []string
	if timeName == "" {
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName && clock[sel.Sel.Name] {
			out = append(out, fmt.Sprintf("%s: time.%s reads the clock", fset.Position(sel.Pos()), sel.Sel.Name))
		}
		return true
	})
	return out
}
