package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/atomicfile"
	"github.com/ceiling-bench/ceiling/publish"
)

// `ceiling init` sets a user's repository up for the action: a target
// file for their server, and the two workflows that use the action (a
// sweep on every push to the default branch, a base-vs-head verdict on
// every pull request, and the comment). Then one quick local sweep proves
// the target boots, answers and is measured. docs/your-server.md.

type initConfig struct {
	dir, serverCmd, build, scenario, url, ready, branch, ref string
	appID, key, secret                                       string
	force, check                                             bool
}

func initFlags(c *initConfig, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling init", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: ceiling init --server-cmd CMD [flags]\n\nWrites bench/target.json and the two workflows that use the action, then\nruns one quick sweep of your server (docs/your-server.md).\n\nflags:")
		printFlags(fs, out)
	}
	fs.StringVar(&c.dir, "dir", ".", "the repository to set up")
	fs.StringVar(&c.serverCmd, "server-cmd", "", "your server's command line, relative to the repository, its port from a placeholder: \"bin/server --listen {addr}\" (split on spaces; required)")
	fs.StringVar(&c.build, "build", "", "the command that builds your server, run with bash in the repository (\"make server\"); empty: none")
	fs.StringVar(&c.scenario, "scenario", "echo", "the workload: echo, fanout (Pusher) or script")
	fs.StringVar(&c.url, "url", "", "the scenario's URL (default ws://{addr}/echo for echo, ws://{addr} otherwise)")
	fs.StringVar(&c.ready, "ready", "tcp:{addr}", "how the harness knows the server is up: tcp:{addr}, or an http:// URL that answers 200")
	fs.StringVar(&c.branch, "branch", "", "the branch whose pushes publish the ceiling (default: the repository's current branch, else main)")
	fs.StringVar(&c.ref, "action-ref", "", "the action's ref the workflows use: a release tag (v1.2.3) or a commit SHA (default: this ceiling's release tag, or the commit it was built from; main only when it knows neither)")
	fs.StringVar(&c.appID, "app-id", "", "fanout: the Pusher app id your server accepts")
	fs.StringVar(&c.key, "key", "", "fanout: the Pusher app key")
	fs.StringVar(&c.secret, "secret", "", "fanout: the Pusher app secret (listed in the target's secrets: never in a result)")
	fs.BoolVar(&c.force, "force", false, "overwrite the files init writes")
	fs.BoolVar(&c.check, "check", true, "build the server and run one quick local sweep against it")
	return fs
}

// initFiles are the files init writes, relative to the repository.
var initFiles = []string{"bench/target.json", ".github/workflows/ceiling.yml", ".github/workflows/ceiling-comment.yml"}

var (
	releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
	gitRefOK   = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
)

// validate checks c's flags; every error names its flag.
func (c *initConfig) validate() error {
	if strings.TrimSpace(c.serverCmd) == "" {
		return errors.New("--server-cmd: required: your server's command line, e.g. \"bin/server --listen {addr}\"")
	}
	if !strings.Contains(c.serverCmd, "{addr}") && !strings.Contains(c.serverCmd, "{port}") {
		return fmt.Errorf("--server-cmd: %q has no {addr} or {port}: every point boots a fresh server on a fresh loopback port", c.serverCmd)
	}
	for _, f := range []struct{ name, v string }{{"build", c.build}, {"branch", c.branch}, {"action-ref", c.ref}} {
		if strings.Contains(f.v, "${{") {
			return fmt.Errorf("--%s: %q holds ${{, which GitHub would evaluate in the workflow", f.name, f.v)
		}
		if strings.ContainsAny(f.v, "\n\r") {
			return fmt.Errorf("--%s: one line", f.name)
		}
	}
	switch c.scenario {
	case "echo", "script":
	case "fanout":
		if c.appID == "" || c.key == "" || c.secret == "" {
			return errors.New("--scenario fanout: needs --app-id, --key and --secret (your server's Pusher app)")
		}
	default:
		return fmt.Errorf("--scenario: %q: init writes echo, fanout or script targets (docs/targets.md has the others)", c.scenario)
	}
	if c.ref != "" && !gitRefOK.MatchString(c.ref) {
		return fmt.Errorf("--action-ref: %q is not a tag, branch or commit", c.ref)
	}
	return nil
}

func runInit(args []string, rawStdout, rawStderr io.Writer) error {
	// Every line within 100 columns (lines.go).
	stdout, stderr := newLineWriter(rawStdout, os.Getenv), newLineWriter(rawStderr, os.Getenv)
	defer stdout.Flush()
	defer stderr.Flush()
	var c initConfig
	fs := initFlags(&c, stderr)
	if done, err := parseOnlyFlags(fs, args); done {
		return err
	}
	if err := c.validate(); err != nil {
		return usageError{err}
	}
	if fi, err := os.Stat(c.dir); err != nil || !fi.IsDir() {
		return usagef("--dir: %s is not a directory", c.dir)
	}
	if !c.force {
		for _, f := range initFiles {
			if _, err := os.Lstat(filepath.Join(c.dir, f)); err == nil {
				return usagef("%s exists: init overwrites nothing without --force", f)
			}
		}
	}
	if c.branch == "" {
		c.branch = currentBranch(c.dir)
	}
	if c.ref == "" {
		bi, _ := debug.ReadBuildInfo()
		var why string
		c.ref, why = defaultActionRef(version, commit, bi)
		fmt.Fprintf(stdout, "action ref: %s (%s)\n  (--action-ref sets another)\n", c.ref, why)
	}
	files, err := c.render()
	if err != nil {
		return err
	}
	// The target must load as the sweep loads it, before anything is
	// written.
	if err := loads(files[0]); err != nil {
		return usagef("the target init would write does not load: %v", err)
	}
	for i, f := range initFiles {
		p := filepath.Join(c.dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(p, files[i]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", f)
	}
	if c.check {
		if err := c.checkSweep(stdout, stderr); err != nil {
			return rerunWithForce{err}
		}
	}
	// The commands one to a line, each within 100 columns: a wrapped
	// command cannot be pasted.
	fmt.Fprintf(stdout, "\nnext, commit them:\n  git add %s\n  git commit -m \"ceiling: measure the server\"\n", strings.Join(initFiles, " "))
	fmt.Fprintln(stdout, "then every push to "+c.branch+" publishes its ceiling, and every pull request gets a verdict (docs/your-server.md)")
	return nil
}

// loads checks a target file's content as the sweep loads it.
func loads(b []byte) error {
	f, err := os.CreateTemp("", "ceiling-init-target-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = target.Load(f.Name())
	return err
}

// currentBranch is dir's checked-out branch, else main.
func currentBranch(dir string) string {
	out, err := exec.Command("git", "-C", dir, "symbolic-ref", "--short", "HEAD").Output()
	if b := strings.TrimSpace(string(out)); err == nil && b != "" {
		return b
	}
	return "main"
}

// render is the content of initFiles, in order.
func (c *initConfig) render() ([][]byte, error) {
	name := filepath.Base(absOr(c.dir))
	if !actionNameOK.MatchString(name) {
		name = "server"
	}
	t := map[string]any{
		"name":    name,
		"command": strings.Fields(c.serverCmd),
		"ready":   c.ready,
	}
	if c.build != "" {
		t["build"] = c.build // for ceiling compare; the workflows say it too
	}
	url := c.url
	switch c.scenario {
	case "echo":
		if url == "" {
			url = "ws://{addr}/echo"
		}
		t["echo_url"] = url
	case "script":
		if url == "" {
			url = "ws://{addr}"
		}
		t["script"] = map[string]string{"url": url}
	case "fanout":
		if url == "" {
			url = "ws://{addr}"
		}
		t["fanout"] = map[string]string{"url": url, "app_id": c.appID, "key": c.key, "secret": c.secret}
		t["secrets"] = []string{c.secret}
	}
	tb, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a YAML double-quoted scalar
	var inputs []string
	if c.build != "" {
		inputs = append(inputs, "build: "+q(c.build))
	}
	if c.scenario != "echo" {
		inputs = append(inputs, "scenario: "+q(c.scenario))
	}
	with := func(in ...string) string {
		if len(in) == 0 {
			return ""
		}
		return "\n        with: {" + strings.Join(in, ", ") + "}"
	}
	uses := "ceiling-bench/ceiling@" + c.ref
	// The sweep job holds a read-only token; the publish job, which may
	// push, only commits the result the sweep job uploaded.
	sweepWith := with(append(slices.Clip(inputs), `publish: "false"`)...)
	bench := fmt.Sprintf(initBenchYAML, q(c.branch), checkoutAction, uses, sweepWith, checkoutAction, uses, checkoutAction, uses, with(inputs...))
	comment := fmt.Sprintf(initCommentYAML, checkoutAction, uses)
	return [][]byte{append(tb, '\n'), []byte(bench), []byte(comment)}, nil
}

func absOr(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// checkoutAction is actions/checkout, pinned as this repository's
// workflows pin it.
const checkoutAction = "actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0"

// initBenchYAML is ceiling.yml: %s the branch, then the checkout, the
// action and its with: for each of the three jobs (publish's with: is
// fixed).
const initBenchYAML = `# Written by ceiling init: the ceiling on every push, a verdict on every PR (docs/action.md).
name: ceiling
on:
  push: {branches: [%s], paths-ignore: ["benchmark/published/**"]}
  pull_request:
permissions: {}
jobs:
  sweep:
    if: github.event_name == 'push'
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps:
      - uses: %s
        with: {persist-credentials: false}
      - uses: %s%s
  publish:
    needs: sweep
    runs-on: ubuntu-latest
    permissions: {contents: write}
    steps:
      - uses: %s
        with: {persist-credentials: false}
      - uses: %s
        with: {mode: publish}
  compare:
    if: github.event_name == 'pull_request'
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps:
      - uses: %s
        with: {ref: "${{ github.event.pull_request.head.sha }}", fetch-depth: 0, persist-credentials: false}
      - uses: %s%s
`

// initCommentYAML is ceiling-comment.yml: the default branch's code
// only, the compare run's artifact as untrusted input.
const initCommentYAML = `# Written by ceiling init: the PR comment, from the default branch's code only (docs/action.md).
name: ceiling-comment
on:
  workflow_run: {workflows: [ceiling], types: [completed]}
permissions: {}
jobs:
  comment:
    if: github.event.workflow_run.event == 'pull_request'
    runs-on: ubuntu-latest
    permissions: {actions: read, contents: read, pull-requests: write}
    steps:
      - uses: %s
        with: {fetch-depth: 0, persist-credentials: false}
      - uses: %s
`

// rerunWithForce is a check that failed after init wrote its files: the
// message ends by saying how to run init again, which without --force
// would refuse to overwrite them.
type rerunWithForce struct{ err error }

func (e rerunWithForce) Error() string {
	return e.err.Error() + "\ninit wrote its files before the check: after a fix, run ceiling init again with --force"
}
func (e rerunWithForce) Unwrap() error { return e.err }

// checkSweep builds the server and runs one quick sweep of it, from this
// binary, and says whether the target boots and answers (initcheck.go).
// Its result is kept in a folder of its own, which is never removed: every
// path the sweep prints stays true (the sweep removes its own work dir
// after a clean run, and keeps and names it otherwise).
func (c *initConfig) checkSweep(stdout, stderr io.Writer) error {
	if c.build != "" {
		fmt.Fprintf(stdout, "building: %s\n", c.build)
		if err := runBuild(c.dir, c.build, stderr); err != nil {
			return fmt.Errorf("--build %q failed: %w", c.build, err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "ceiling-init-")
	if err != nil {
		return err
	}
	out := filepath.Join(tmp, "result.json")
	fmt.Fprintln(stdout, "one quick sweep of your server (QUICK=1; about a minute):")
	sw := exec.Command(exe, "sweep", "--target", "bench/target.json", "--quick", "--out", out)
	sw.Dir, sw.Stdout, sw.Stderr = c.dir, stdout, stderr
	sweepErr := sw.Run()
	data, err := os.ReadFile(out)
	if err != nil {
		os.RemoveAll(tmp) // empty: the sweep wrote nothing there
		return fmt.Errorf("the quick sweep of your server wrote no result (%v): fix bench/target.json (docs/targets.md)", sweepErr)
	}
	r, err := publish.Read(data, out)
	if err != nil {
		return fmt.Errorf("the quick sweep's result %s does not read: %w", out, err)
	}
	ok, msg := judgeCheck(r, sweepErr != nil)
	if ok {
		fmt.Fprintln(stdout, msg)
		return nil
	}
	return exitStatus{1, errors.New(msg)}
}

// defaultActionRef is the action's ref init's workflows pin when
// --action-ref is not given, and why: the release tag this binary is
// (version vX.Y.Z), else the full commit it was built from (the build
// info's vcs.revision, with local changes said), else main, said as the
// last resort it is: a moving branch, which docs/action.md advises
// against.
//
// The build info has no revision when the build stamped none
// (-buildvcs=false, common in CI images): then the commit the Makefile
// embeds (commit, -X main.commit; "-dirty" on version says the checkout
// had changes) is the build's.
func defaultActionRef(version, commit string, bi *debug.BuildInfo) (ref, why string) {
	if releaseTag.MatchString(version) {
		return version, "this ceiling's release"
	}
	rev, dirty := vcsRevision(bi)
	if rev == "" && commitSHA.MatchString(commit) {
		rev, dirty = commit, strings.HasSuffix(version, "-dirty")
	}
	if commitSHA.MatchString(rev) {
		if dirty {
			return rev, "the commit this ceiling was built from, which had local changes: the workflows run the commit, without them"
		}
		return rev, "the commit this ceiling was built from"
	}
	return "main", "this ceiling knows neither its release nor its commit: main moves, pin a release tag or a commit SHA"
}

// commitSHA is a full git commit name.
var commitSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)
