package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// `ceiling compare` compares two git refs of one repository in one
// command, as the action compares a pull request (action_modes.go): a
// detached worktree for each ref it needs, each built with the target's
// build command, both arms' target files written from one target file
// and named by ref, one two-arm sweep from the head's checkout, its
// verdict, and --fail-on's exit status. The worktrees are removed
// afterwards, on an interrupt too. docs/your-server.md.

const compareUsage = `usage: ceiling compare --base REF [--head REF] [flags] [-- SWEEP FLAGS]

Compares two git refs of the repository you are in, as the action compares a
pull request. The head is your working tree as it is (uncommitted changes
included), or --head's ref. Each ref gets a worktree, built with the target
file's "build" command (or --build); both arms run from one target file (the
base's, else the head's), named by ref (main@1a2b3c4 vs HEAD@5d6e7f8); one
two-arm sweep (ceiling sweep --base-target) gives the verdict; the worktrees
are removed afterwards.

  ceiling compare --base main                  # your working tree against main: about 5 minutes
  ceiling compare --base main --quick          # a smoke test: about 2 minutes
  ceiling compare --base v1.2.0 --head v1.3.0 -- --compare-scope curve

Flags after -- go to ceiling sweep (ceiling sweep --help), and so do its
variables (QUICK=1, COMPARE_BUDGET=10m, SRV_CPUSET=1, ...). Exit status: 0
the gate passed; 1 --fail-on's verdict, a failed build or no comparison; 2 bad
input, before anything is built.

flags:
`

type compareConfig struct {
	repo, base, head, target, build, failOn, out string
	quick, keep                                  bool
	sweep                                        []string // after --
}

func compareFlags(c *compareConfig, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling compare", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, compareUsage)
		printFlags(fs, out)
	}
	fs.StringVar(&c.base, "base", "", "the ref to compare against: a branch, tag or commit (required)")
	fs.StringVar(&c.head, "head", "", "the ref to compare (default: the working tree as it is, uncommitted changes included)")
	fs.StringVar(&c.repo, "repo", ".", "a directory in the repository")
	fs.StringVar(&c.target, "target", "bench/target.json", "the target file, relative to the repository's top (as ceiling init writes it)")
	fs.StringVar(&c.build, "build", "", "the command that builds the server, run with bash in each checkout (default: the target file's \"build\"; none: both arms run what each checkout has)")
	fs.StringVar(&c.failOn, "fail-on", "slower,inconclusive", "the headline verdicts that exit 1: slower, inconclusive, both (as the action), or none")
	fs.StringVar(&c.out, "out", "out/compare.json", "where the two-arm result is written")
	fs.BoolVar(&c.quick, "quick", false, "a smoke test: QUICK's short windows and a 2-minute budget")
	fs.BoolVar(&c.keep, "keep", false, "keep the worktrees (and say where) instead of removing them")
	return fs
}

// compareOwned are sweep flags compare sets itself: given after -- they
// would be overridden, so they are refused, naming compare's own.
var compareOwned = map[string]string{"target": "--target", "base-target": "--base", "out": "--out", "fail-on": "--fail-on"}

// validate checks the flags and the sweep's before anything is built:
// every error names its flag.
func (c *compareConfig) validate() error {
	for _, f := range []struct{ name, v string }{{"base", c.base}, {"head", c.head}} {
		switch {
		case f.name == "base" && strings.TrimSpace(f.v) == "":
			return errors.New("--base: required: the ref to compare against, e.g. --base main")
		case strings.HasPrefix(f.v, "-"), strings.ContainsAny(f.v, " \t\r\n"):
			return fmt.Errorf("--%s: %q is not a git ref", f.name, f.v)
		}
	}
	if _, _, err := result.ParseFailOn(c.failOn); err != nil {
		return fmt.Errorf("--fail-on: %v", err)
	}
	if strings.TrimSpace(c.target) == "" {
		return errors.New("--target: empty")
	}
	for _, a := range c.sweep {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if own, ok := compareOwned[name]; ok {
			return fmt.Errorf("--%s after --: ceiling compare sets it; use compare's own %s", name, own)
		}
	}
	// The sweep's own flags and variables, as the sweep will read them
	// (the base target is a stand-in: its file is written later).
	args := append([]string{"--base-target", "base.json"}, c.sweep...)
	if c.quick {
		args = append(args, "--quick")
	}
	o, err := sweepKnobs(args, io.Discard)
	if err != nil {
		return fmt.Errorf("after --: %w", err)
	}
	available, err := pinning.Granted(os.Getpid())
	if err != nil && !errors.Is(err, pinning.ErrUnsupported) {
		return fmt.Errorf("read this process's CPU affinity: %w", err)
	}
	if _, err := harness.ResolveKnobs(o, available); err != nil {
		return fmt.Errorf("after --: %w", err)
	}
	return nil
}

func runCompare(args []string, rawStdout, rawStderr io.Writer) error {
	// Every line within 100 columns (lines.go); a build's own output
	// passes as it is.
	stdout, stderr := newLineWriter(rawStdout, os.Getenv), newLineWriter(rawStderr, os.Getenv)
	defer stdout.Flush()
	defer stderr.Flush()
	var c compareConfig
	fs := compareFlags(&c, stderr)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	// Only what follows -- is the sweep's; a stray word is a mistake.
	if n := fs.NArg(); n > 0 {
		if len(args) <= n || args[len(args)-n-1] != "--" {
			return usagef("ceiling compare: unexpected argument %q (flags for ceiling sweep go after --)", fs.Arg(0))
		}
		c.sweep = fs.Args()
	}
	if err := c.validate(); err != nil {
		return usageError{err}
	}
	r := &compareRun{c: c, stdout: stdout, stderr: stderr, buildLog: rawStderr}
	r.sweep = r.selfSweep
	return r.run()
}

// compareRun is one ceiling compare. sweep runs `ceiling sweep args` in
// dir: this binary as a child (selfSweep), or a unit test's stand-in.
type compareRun struct {
	c              compareConfig
	stdout, stderr io.Writer
	buildLog       io.Writer // the builds' own output (default stderr)
	sweep          func(dir string, args []string) error
}

// arm is one side of the comparison: its checkout and its name.
type arm struct {
	dir, label, target, sha string
	worktree                bool // made by compare, removed by it
}

func (r *compareRun) logf(format string, args ...any) {
	fmt.Fprintf(r.stderr, "ceiling compare: "+format+"\n", args...)
}

func (r *compareRun) run() error {
	root, err := gitOut(r.c.repo, "rev-parse", "--show-toplevel")
	if err != nil {
		return usagef("--repo %s: not in a git repository (%v)", r.c.repo, err)
	}
	baseSHA, err := commitOf(root, r.c.base)
	if err != nil {
		return usagef("--base %s: %v", r.c.base, err)
	}
	tmp, err := os.MkdirTemp("", "ceiling-compare-")
	if err != nil {
		return err
	}
	base := arm{dir: filepath.Join(tmp, "base"), label: r.c.base + "@" + baseSHA[:7], target: filepath.Join(tmp, "base-target.json"), sha: baseSHA, worktree: true}
	head := arm{dir: root, target: filepath.Join(tmp, "head-target.json")}
	if r.c.head == "" {
		sha, err := commitOf(root, "HEAD")
		if err != nil {
			os.RemoveAll(tmp)
			return usagef("the working tree's HEAD: %v (commit once, or give --head)", err)
		}
		head.label = "HEAD@" + sha[:7]
		if changed, _ := gitOut(root, "status", "--porcelain", "--untracked-files=no"); changed != "" {
			head.label += "+changes"
		}
	} else {
		sha, err := commitOf(root, r.c.head)
		if err != nil {
			os.RemoveAll(tmp)
			return usagef("--head %s: %v", r.c.head, err)
		}
		head = arm{dir: filepath.Join(tmp, "head"), label: r.c.head + "@" + sha[:7], target: head.target, sha: sha, worktree: true}
	}
	defer r.cleanup(root, tmp, base, head)
	for _, a := range []arm{base, head} {
		if !a.worktree {
			continue
		}
		if err := baseWorktree(root, a.sha, a.dir, r.stderr); err != nil {
			return err
		}
	}
	tmpl, build, err := r.template(base, head)
	if err != nil {
		return err
	}
	for _, a := range []arm{base, head} {
		if err := armTarget(tmpl, a.target, a.dir, a.label); err != nil {
			return usagef("--target: %v", err)
		}
	}
	if build == "" {
		r.logf(`no build command (--build, or the target's "build"): each arm runs what its checkout has`)
	}
	for _, a := range []arm{base, head} {
		if build == "" {
			break
		}
		r.logf("build %s in %s: %s", a.label, a.dir, build)
		log := r.buildLog
		if log == nil {
			log = r.stderr
		}
		if f, ok := r.stderr.(interface{ Flush() error }); ok {
			f.Flush() // its lines before the build's
		}
		if err := runBuild(a.dir, build, log); err != nil {
			return exitStatus{1, fmt.Errorf("the build of %s (%s) failed: %w", a.label, build, err)}
		}
	}
	out, err := filepath.Abs(r.c.out)
	if err != nil {
		return usagef("--out %s: %v", r.c.out, err)
	}
	args := []string{"sweep", "--base-target", base.target, "--target", head.target, "--out", out, "--fail-on", r.c.failOn}
	if r.c.quick {
		args = append(args, "--quick")
	}
	args = append(args, r.c.sweep...)
	// The command echoed short: the arms' target files by name, in the
	// temporary directory said once, and OUT as it was given.
	r.logf("base %s, head %s; the arms' target files are in %s", base.label, head.label, tmp)
	shown := slices.Clone(args)
	for i, a := range shown {
		switch a {
		case base.target, head.target:
			shown[i] = filepath.Base(a)
		case out:
			shown[i] = r.c.out
		}
	}
	r.logf("ceiling %s", strings.Join(shown, " "))
	sweepErr := r.sweep(head.dir, args)
	compared := r.verdict(out, base, head)
	if sweepErr == nil && !compared {
		// Never a pass without a verdict, whatever the sweep's status
		// (as the action's compare mode).
		return exitStatus{1, fmt.Errorf("the sweep exited 0 but %s holds no comparison", out)}
	}
	var ee *exec.ExitError
	if errors.As(sweepErr, &ee) && ee.ExitCode() > 0 {
		// The sweep said why; its status is compare's.
		return quietExit{exitStatus{ee.ExitCode(), fmt.Errorf("ceiling sweep: exit status %d", ee.ExitCode())}}
	}
	return sweepErr
}

// template is the target file both arms are written from, and the build
// command: the base's file (a change cannot alter how it is measured, as
// in the action), else the head's (a target added since the base).
func (r *compareRun) template(base, head arm) (path, build string, err error) {
	path = r.c.target
	if !filepath.IsAbs(path) {
		path = filepath.Join(base.dir, r.c.target)
		if _, err := os.Stat(path); err != nil {
			path = filepath.Join(head.dir, r.c.target)
		}
	}
	fileBuild, err := readTargetBuild(path)
	switch {
	case errors.As(err, new(*fs.PathError)): // not there, or not readable
		return "", "", usagef("--target %s: in neither %s nor %s (ceiling init writes bench/target.json)", r.c.target, base.label, head.label)
	case err != nil:
		return "", "", usagef("--target %s: %v", path, err)
	}
	r.logf("both arms from the target file %s", path)
	if r.c.build != "" {
		return path, r.c.build, nil
	}
	return path, fileBuild, nil
}

// verdict says the headline's verdict in one line, after the sweep's
// table, or that there is none (false).
func (r *compareRun) verdict(out string, base, head arm) bool {
	b, err := os.ReadFile(out)
	var res result.Result
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil || res.Comparison == nil {
		r.logf("base %s, head %s: no comparison (the sweep's output above says why)", base.label, head.label)
		return false
	}
	fmt.Fprintf(r.stdout, "\n%s\n", compareLine(res.Comparison.Headline, head.label, base.label, r.c.out))
	// Where the CPU went, when the sweep profiled both arms.
	_ = result.WriteProfileDiff(r.stdout, res.Comparison.Headline.ProfileDiff, compareTopFrames, filepath.Dir(r.c.out))
	return true
}

// compareTopFrames is how many frames compare prints each way.
const compareTopFrames = 3

// cleanup removes the worktrees compare made (or says where they are,
// with --keep) and the temporary directory.
func (r *compareRun) cleanup(root, tmp string, arms ...arm) {
	if r.c.keep {
		r.logf("--keep: the worktrees and arm targets are in %s (git worktree remove each when done)", tmp)
		return
	}
	for _, a := range arms {
		if !a.worktree {
			continue
		}
		if _, err := gitOut(root, "worktree", "remove", "--force", a.dir); err != nil {
			r.logf("could not remove the worktree %s: %v", a.dir, err)
		}
	}
	os.RemoveAll(tmp) // never `git worktree prune`: see baseWorktree
}

// selfSweep runs this binary's sweep in dir, its output on compare's;
// an interrupt reaches it, and compare waits for it to stop its servers
// and write what finished before removing the worktrees.
func (r *compareRun) selfSweep(dir string, args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, r.stdout, r.stderr
	return runForwarding(cmd)
}

// started reports whether cmd's process was started (runForwarding's
// error is then the wait's, not the start's).
func started(cmd *exec.Cmd) bool { return cmd.Process != nil }

// runForwarding starts cmd and waits for it, passing SIGINT and SIGTERM
// on to it instead of dying first, so the caller outlives its child.
func runForwarding(cmd *exec.Cmd) error {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case err := <-waited:
			return err
		}
	}
}

// commitOf is ref's full commit in the repository at root.
func commitOf(root, ref string) (string, error) {
	sha, err := gitOut(root, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil || len(sha) < 7 {
		return "", fmt.Errorf("no commit %q in %s", ref, root)
	}
	return sha, nil
}

// gitOut runs git in dir and returns its trimmed output; an error holds
// git's message.
func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("%s", msg)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// compareLine is compare's last line: the headline's verdict in the
// words the sweep's table and the comment use (result.VerdictPhrase), its
// change and p (result.FormatP), and where the result is.
func compareLine(h result.ComparedPoint, head, base, out string) string {
	figs := ""
	if h.ChangePct != nil {
		figs = fmt.Sprintf(", %+.1f%% (%s)", *h.ChangePct, result.FormatP(h.PValue))
	}
	return fmt.Sprintf("ceiling compare: head %s against base %s: %s%s; the result is %s", head, base, result.VerdictPhrase(h), figs, out)
}
