package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

// compareRepo is a user's repository of two commits: main builds a
// server script that says "v1", the branch's head one that says "v2".
// The target's build copies it to bin/server and leaves a marker.
type compareRepo struct {
	t         *testing.T
	dir       string
	main, pr  string // commits
	calls     []fakeSweep
	verdict   string
	sweepCode int
	noCompare bool                // the stand-in writes a result without a comparison
	profile   *result.ProfileDiff // the stand-in's comparison.headline.profile_diff
}

type fakeSweep struct {
	dir        string
	args       []string
	base, head map[string]any // the arms' target files as the sweep read them
	baseServer string         // bin/server under the base arm's dir
	headServer string
}

func newCompareRepo(t *testing.T) *compareRepo {
	t.Helper()
	r := &compareRepo{t: t, dir: t.TempDir(), verdict: result.CompareSlower}
	r.git("init", "-q", "-b", "main")
	r.git("config", "user.email", "u@example.com")
	r.git("config", "user.name", "u")
	r.write("bench/target.json", `{"name": "srv", "command": ["bin/server", "{addr}"], "echo_url": "ws://{addr}/echo", "ready": "tcp:{addr}",
  "build": "mkdir -p bin && cp server.sh bin/server && echo built > built.txt"}`)
	r.write("server.sh", "v1\n")
	r.git("add", ".")
	r.git("commit", "-q", "-m", "one")
	r.main = r.git("rev-parse", "HEAD")
	r.git("checkout", "-q", "-b", "pr")
	r.write("server.sh", "v2\n")
	r.git("commit", "-q", "-am", "two")
	r.pr = r.git("rev-parse", "HEAD")
	return r
}

func (r *compareRepo) git(args ...string) string {
	r.t.Helper()
	out, err := gitOut(r.dir, args...)
	if err != nil {
		r.t.Fatalf("git %v: %v", args, err)
	}
	return out
}

func (r *compareRepo) write(name, s string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// run is ceiling compare with args in the repository, its sweep a
// stand-in that reads what a sweep would (the two arms' target files and
// builds), writes a result with r.verdict and exits r.sweepCode.
func (r *compareRepo) run(args ...string) (stdout, stderr string, code int) {
	r.t.Helper()
	var c compareConfig
	var o, e strings.Builder
	fs := compareFlags(&c, &e)
	if err := fs.Parse(args); err != nil {
		r.t.Fatal(err)
	}
	c.sweep = fs.Args()
	if c.repo == "." {
		c.repo = r.dir
	}
	if err := c.validate(); err != nil {
		r.t.Fatal(err)
	}
	cr := &compareRun{c: c, stdout: &o, stderr: &e}
	cr.sweep = func(dir string, args []string) error {
		call := fakeSweep{dir: dir, args: args}
		flag := func(name string) string {
			i := slices.Index(args, name)
			if i < 0 || i+1 >= len(args) {
				r.t.Fatalf("the sweep has no %s: %q", name, args)
			}
			return args[i+1]
		}
		read := func(path string) (map[string]any, string) {
			var doc map[string]any
			b, err := os.ReadFile(path)
			if err == nil {
				err = json.Unmarshal(b, &doc)
			}
			if err != nil {
				r.t.Fatal(err)
			}
			srv, _ := os.ReadFile(filepath.Join(doc["dir"].(string), "bin", "server"))
			return doc, string(srv)
		}
		call.base, call.baseServer = read(flag("--base-target"))
		call.head, call.headServer = read(flag("--target"))
		r.calls = append(r.calls, call)
		res := result.Result{Comparison: &result.Comparison{Headline: result.ComparedPoint{Verdict: r.verdict, ChangePct: fptrTest(-23.4), PValue: fptrTest(0.0078)}}}
		res.Comparison.Headline.ProfileDiff = r.profile
		if r.noCompare {
			res.Comparison = nil
		}
		b, _ := json.Marshal(res)
		if err := os.WriteFile(flag("--out"), b, 0o644); err != nil {
			r.t.Fatal(err)
		}
		if r.sweepCode != 0 {
			return exec.Command("sh", "-c", "exit "+string(rune('0'+r.sweepCode))).Run()
		}
		return nil
	}
	err := cr.run()
	if err != nil {
		code = exitCode(err)
		e.WriteString("ceiling: " + err.Error() + "\n")
	}
	return o.String(), e.String(), code
}

func fptrTest(v float64) *float64 { return &v }

// worktrees are the repository's worktrees other than its own.
func (r *compareRepo) worktrees() []string {
	var out []string
	for _, l := range strings.Split(r.git("worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok && p != r.dir {
			out = append(out, p)
		}
	}
	return out
}

// TestCompareTwoRefs is issue 33's one command: the working tree against
// main, each built by the target's build in its own checkout, both arms
// from one target file named by ref, the sweep run from the head's
// checkout with compare's gate, its status kept, the worktree removed.
func TestCompareTwoRefs(t *testing.T) {
	r := newCompareRepo(t)
	r.sweepCode = 1 // the sweep's FAIL_ON said slower
	out := filepath.Join(t.TempDir(), "compare.json")
	stdout, stderr, code := r.run("--base", "main", "--out", out, "--quick", "--", "--compare-budget", "3m")
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	if code != 1 {
		t.Errorf("exit %d, want the sweep's 1", code)
	}
	if len(r.calls) != 1 {
		t.Fatalf("%d sweeps, want 1", len(r.calls))
	}
	c := r.calls[0]
	if c.dir != r.dir {
		t.Errorf("the sweep ran in %s, want the head's checkout %s (so meta.git_ref is the head)", c.dir, r.dir)
	}
	want := []string{"sweep", "--base-target", "", "--target", "", "--out", out, "--fail-on", "slower,inconclusive", "--quick", "--compare-budget", "3m"}
	if len(c.args) != len(want) {
		t.Fatalf("sweep args %q, want the shape %q", c.args, want)
	}
	for i, w := range want {
		if w != "" && c.args[i] != w {
			t.Errorf("sweep arg %d: %q, want %q (%q)", i, c.args[i], w, c.args)
		}
	}
	if c.baseServer != "v1\n" || c.headServer != "v2\n" {
		t.Errorf("the arms ran %q and %q, want each ref's own build (v1, v2)", c.baseServer, c.headServer)
	}
	if got, want := c.base["name"], "main@"+r.main[:7]; got != want {
		t.Errorf("base arm named %q, want %q", got, want)
	}
	if got, want := c.head["name"], "HEAD@"+r.pr[:7]; got != want {
		t.Errorf("head arm named %q, want %q", got, want)
	}
	if c.head["dir"] != r.dir || c.base["echo_url"] != "ws://{addr}/echo" || c.base["build"] == nil {
		t.Errorf("arm targets: base %v, head %v", c.base, c.head)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "built.txt")); err != nil {
		t.Errorf("the head's checkout was not built: %v", err)
	}
	if !strings.Contains(stdout, "head HEAD@"+r.pr[:7]+" against base main@"+r.main[:7]+": slower, -23.4% (p = 0.008)") {
		t.Errorf("no verdict line:\n%s", stdout)
	}
	if wt := r.worktrees(); len(wt) != 0 {
		t.Errorf("worktrees left: %q", wt)
	}
	if _, err := os.Stat(filepath.Dir(c.base["dir"].(string))); !os.IsNotExist(err) {
		t.Errorf("compare's temporary directory is left: %v", err)
	}
}

// TestCompareRefsAndChanges: --head names a ref (a worktree of its own,
// the sweep run there), a working tree with uncommitted changes is named
// so, a target file the base lacks is taken from the head, and --keep
// keeps the worktrees.
func TestCompareRefsAndChanges(t *testing.T) {
	r := newCompareRepo(t)
	r.verdict = result.CompareWithinNoise
	_, _, code := r.run("--base", "main", "--head", "pr", "--keep", "--out", filepath.Join(t.TempDir(), "c.json"))
	if code != 0 || len(r.calls) != 1 {
		t.Fatalf("exit %d, %d sweeps", code, len(r.calls))
	}
	c := r.calls[0]
	if c.dir == r.dir || c.headServer != "v2\n" || c.head["name"] != "pr@"+r.pr[:7] {
		t.Errorf("--head pr: the sweep ran in %s, head arm %v (server %q)", c.dir, c.head, c.headServer)
	}
	if wt := r.worktrees(); len(wt) != 2 {
		t.Errorf("--keep: worktrees %q, want base and head kept", wt)
	}
	for _, w := range r.worktrees() {
		r.git("worktree", "remove", "--force", w)
	}

	// A target file added since main, not yet committed, in a changed
	// working tree.
	r.git("checkout", "-q", "main")
	r.git("rm", "-q", "bench/target.json")
	r.git("commit", "-q", "-m", "no target")
	r.git("checkout", "-q", "pr")
	r.write("server.sh", "v3\n")
	r.calls = nil
	_, stderr, code := r.run("--base", "main", "--out", filepath.Join(t.TempDir(), "c.json"))
	if code != 0 || len(r.calls) != 1 {
		t.Fatalf("exit %d, %d sweeps:\n%s", code, len(r.calls), stderr)
	}
	c = r.calls[0]
	if !strings.HasSuffix(c.head["name"].(string), "+changes") || c.headServer != "v3\n" {
		t.Errorf("a changed working tree: head %v, server %q", c.head["name"], c.headServer)
	}
	if !strings.Contains(stderr, "both arms from the target file "+filepath.Join(r.dir, "bench/target.json")) {
		t.Errorf("the head's target file was not said:\n%s", stderr)
	}
}

// TestCompareBadInput: every mistake is exit 2, names its flag, and
// happens before any worktree or build.
func TestCompareBadInput(t *testing.T) {
	r := newCompareRepo(t)
	notRepo := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare"}, "--base: required"},
		{[]string{"compare", "--base", "-x"}, `--base: "-x" is not a git ref`},
		{[]string{"compare", "--base", "main", "extra"}, `unexpected argument "extra" (flags for ceiling sweep go after --)`},
		{[]string{"compare", "--base", "main", "--fail-on", "sometimes"}, "--fail-on: "},
		{[]string{"compare", "--base", "main", "--", "--out", "x.json"}, "--out after --: ceiling compare sets it; use compare's own --out"},
		{[]string{"compare", "--base", "main", "--", "--reps", "0"}, "after --: "},
		{[]string{"compare", "--base", "main", "--", "--no-such-flag"}, "no-such-flag"},
		{[]string{"compare", "--repo", r.dir, "--base", "nope"}, `--base nope: no commit "nope"`},
		{[]string{"compare", "--repo", r.dir, "--base", "main", "--head", "nope"}, `--head nope: no commit "nope"`},
		{[]string{"compare", "--repo", notRepo, "--base", "main"}, "--repo " + notRepo + ": not in a git repository"},
		{[]string{"compare", "--repo", r.dir, "--base", "main", "--target", "bench/none.json"}, "--target bench/none.json: in neither"},
	} {
		_, stderr, code := runCLI(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q in:\n%s", c.args, code, c.want, stderr)
		}
		if wt := r.worktrees(); len(wt) != 0 {
			t.Errorf("%q left worktrees %q", c.args, wt)
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, "built.txt")); err == nil {
		t.Error("bad input built the server")
	}
}

// TestCompareFailedBuild: a build that fails is exit 1 naming the arm and
// the command, and the worktree goes.
func TestCompareFailedBuild(t *testing.T) {
	r := newCompareRepo(t)
	_, stderr, code := r.run("--base", "main", "--build", "false", "--out", filepath.Join(t.TempDir(), "c.json"))
	if code != 1 || !strings.Contains(stderr, "the build of main@"+r.main[:7]+" (false) failed") || len(r.calls) != 0 {
		t.Errorf("exit %d, %d sweeps:\n%s", code, len(r.calls), stderr)
	}
	if wt := r.worktrees(); len(wt) != 0 {
		t.Errorf("worktrees left: %q", wt)
	}
}

// TestCompareNeverPassesWithoutAVerdict: a sweep that exits 0 but wrote
// no comparison fails compare (exit 1), as the action's compare mode
// does: a gate never passes on lost evidence.
func TestCompareNeverPassesWithoutAVerdict(t *testing.T) {
	r := newCompareRepo(t)
	r.noCompare = true
	_, stderr, code := r.run("--base", "main", "--out", filepath.Join(t.TempDir(), "c.json"))
	if code != 1 || !strings.Contains(stderr, "holds no comparison") {
		t.Errorf("exit %d, want 1 saying there is no comparison:\n%s", code, stderr)
	}
	if wt := r.worktrees(); len(wt) != 0 {
		t.Errorf("worktrees left: %q", wt)
	}
}

// TestComparePrintsTheTopFrames: after the verdict, compare prints where
// the CPU went when the sweep profiled both arms: the frames that grew
// and shrank most per message, and the flame graph beside the result.
func TestComparePrintsTheTopFrames(t *testing.T) {
	r := newCompareRepo(t)
	r.profile = &result.ProfileDiff{Tool: "perf",
		Base:           &result.ProfileArm{Points: []int{1, 4, 5}, CPUNsPerMessage: 10000},
		Head:           &result.ProfileArm{Points: []int{2, 3, 6}, CPUNsPerMessage: 12100},
		FlamegraphFile: "compare-profile/flamegraph.svg",
		Frames: []result.ProfileFrame{
			{Function: "github.com/ceiling-bench/ceiling/refserver.spin", HeadNs: 2100, Verdict: result.FrameGrew},
			{Function: "runtime.mallocgc", BaseNs: 300, HeadNs: 200, Verdict: result.FrameShrank},
		}}
	out := filepath.Join(t.TempDir(), "compare.json")
	stdout, stderr, _ := r.run("--base", "main", "--out", out, "--quick")
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	verdict := strings.Index(stdout, "against base main@")
	for _, want := range []string{
		"why (perf, CPU per message handled, 3 and 3 profiled points): base 10.00 µs, head 12.10 µs (+2.10 µs (+21.0%))",
		"  grew   +2.10 µs (new)         github.com/ceiling-bench/ceiling/refserver.spin (0 ns -> 2.10 µs)",
		"  shrank -100 ns (-33.3%)       runtime.mallocgc (300 ns -> 200 ns)",
		"  flame graph: " + filepath.Join(filepath.Dir(out), "compare-profile", "flamegraph.svg"),
	} {
		if i := strings.Index(stdout, want); i < verdict || verdict < 0 {
			t.Errorf("stdout lacks %q after the verdict", want)
		}
	}
}

// TestCompareLeavesTheUsersWorktrees is issue 52's fifth failure: a
// worktree of the user's that was moved (its directory renamed without
// `git worktree move`) keeps its git data, staged changes included,
// after compare: compare removes its own worktrees by name and never
// runs `git worktree prune`, which deleted it.
func TestCompareLeavesTheUsersWorktrees(t *testing.T) {
	r := newCompareRepo(t)
	parent := t.TempDir()
	was, moved := filepath.Join(parent, "feature"), filepath.Join(parent, "feature-moved")
	r.git("worktree", "add", "-q", "-b", "feature", was, r.main)
	if err := os.WriteFile(filepath.Join(was, "staged.txt"), []byte("work in progress\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gitOut(was, "add", "staged.txt"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(was, moved); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := r.run("--base", "main", "--head", "pr", "--out", filepath.Join(t.TempDir(), "c.json"))
	if len(r.calls) != 1 {
		t.Fatalf("exit %d, %d sweeps:\n%s", code, len(r.calls), stderr)
	}
	if !slices.Contains(r.worktrees(), was) {
		t.Fatalf("the moved worktree's record is gone: %q (git worktree prune ran)", r.worktrees())
	}
	if _, err := gitOut(moved, "worktree", "repair"); err != nil {
		t.Fatal(err)
	}
	if staged, err := gitOut(moved, "diff", "--cached", "--name-only"); err != nil || staged != "staged.txt" {
		t.Errorf("the moved worktree's staged change: %q, %v; want staged.txt", staged, err)
	}
	for _, wt := range r.worktrees() {
		if strings.HasPrefix(wt, os.TempDir()) && strings.Contains(wt, "ceiling-compare-") {
			t.Errorf("compare left its worktree %s", wt)
		}
	}
}
