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
	"slices"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// `ceiling action` is the GitHub Action's one step (action.yml,
// .github/action/run.sh): the action maps its inputs to these flags, and
// GitHub's environment (GITHUB_EVENT_PATH, GITHUB_OUTPUT, ...) says the
// rest. Every mode runs ceiling's own subcommands as child processes of
// this binary (sweep, publish), so what the action does is what a user
// typing them would get. docs/action.md.

// actionConfig is the action's inputs, as flags.
type actionConfig struct {
	mode, path, target, build, baseBuild, baseTarget string
	scenario, generator, name, failOn, dataBranch    string
	cpus, siteURL, serverUser, changeComment         string
	quick, calibrate, publish, resolveMode           bool
}

// Action modes.
const (
	modeAuto    = "auto"
	modeSweep   = "sweep"
	modeCompare = "compare"
	modeComment = "comment"
	modePublish = "publish"
)

func actionFlags(c *actionConfig, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling action", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: ceiling action [flags]\n\nThe GitHub Action's step (action.yml maps its inputs to these flags; docs/action.md).\n\nflags:")
		printFlags(fs, out)
	}
	fs.StringVar(&c.mode, "mode", modeAuto, "input mode: auto (from GITHUB_EVENT_NAME), sweep, compare, comment or publish")
	fs.StringVar(&c.path, "path", ".", "input path: the checkout, relative to GITHUB_WORKSPACE")
	fs.StringVar(&c.target, "target", "bench/target.json", "input target: the target file, relative to --path")
	fs.StringVar(&c.build, "build", "", "input build: the server's build command (bash, in the checkout; default: the target file's \"build\")")
	fs.StringVar(&c.baseBuild, "base-build", "", "input base-build: the base's build command (default --build)")
	fs.StringVar(&c.baseTarget, "base-target", "", "input base-target: the base arm's target file, built by you")
	fs.StringVar(&c.scenario, "scenario", "", "input scenario")
	fs.BoolVar(&c.quick, "quick", false, "input quick")
	fs.BoolVar(&c.calibrate, "calibrate", false, "input calibrate (sweep mode)")
	fs.StringVar(&c.generator, "generator", "", "input generator: a GENERATOR command line")
	fs.StringVar(&c.name, "name", "ceiling-load", "input name: the artifact ceiling-pr-NAME, benchmark/published/NAME.json, the comment's marker")
	fs.StringVar(&c.failOn, "fail-on", "slower,inconclusive", "input fail-on (compare mode)")
	fs.StringVar(&c.dataBranch, "data-branch", "", "input data-branch")
	fs.BoolVar(&c.publish, "publish", true, "input publish (sweep mode)")
	fs.StringVar(&c.cpus, "cpus", "auto", "input cpus: SERVER/GENERATOR CPU sets, or auto")
	fs.StringVar(&c.siteURL, "site-url", "", "input site-url: the results site, linked from the comment (comment mode)")
	fs.StringVar(&c.changeComment, "change-comment", publish.ChangeCommentNone, "input change-comment (sweep and publish modes): none, commit or issue")
	fs.StringVar(&c.serverUser, "server-user", "nobody", "input server-user (compare mode): the user the pull request's server runs as (SRV_USER); empty: the runner's own")
	fs.BoolVar(&c.resolveMode, "resolve-mode", false, "print mode=MODE (the mode auto resolves to) and exit")
	return fs
}

var (
	actionNameOK = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	userNameOK   = regexp.MustCompile(`^(?:[a-z_][a-z0-9_-]{0,31}|[0-9]{1,10})$`)
)

// check validates c after the mode is resolved: every error names its
// input.
func (c *actionConfig) check() error {
	switch c.mode {
	case modeSweep, modeCompare, modeComment, modePublish:
	default:
		return fmt.Errorf("input mode (--mode): %q is none of auto, sweep, compare, comment, publish", c.mode)
	}
	if !actionNameOK.MatchString(c.name) {
		return fmt.Errorf("input name (--name): %q: letters, digits, '.', '_' and '-', at most 64", c.name)
	}
	if _, _, err := publish.ParseFailOn(c.failOn); err != nil {
		return fmt.Errorf("input fail-on (--fail-on): %v", err)
	}
	if err := publish.CheckChangeComment(c.changeComment); err != nil {
		return fmt.Errorf("input change-comment: %v", err)
	}
	if c.cpus != "auto" {
		if _, _, err := splitCPUs(c.cpus); err != nil {
			return fmt.Errorf("input cpus (--cpus): %v", err)
		}
	}
	if c.serverUser != "" && !userNameOK.MatchString(c.serverUser) {
		return fmt.Errorf("input server-user (--server-user): %q is not a user name or uid", c.serverUser)
	}
	if c.target == "" && c.mode != modeComment && c.mode != modePublish {
		return errors.New("input target (--target): empty")
	}
	return nil
}

// resolve is mode auto from the event's name. pull_request_target is
// refused in every mode, an explicit one too: it runs with the base
// repository's secrets and write token, and every mode would run or read
// what a pull request wrote.
func (c *actionConfig) resolve(event string) error {
	if event == "pull_request_target" {
		return fmt.Errorf("input mode (--mode): %s on pull_request_target: never, in any mode; run compare on pull_request and comment on workflow_run (docs/action.md)", c.mode)
	}
	if c.mode != modeAuto {
		return nil
	}
	switch event {
	case "push", "schedule", "workflow_dispatch":
		c.mode = modeSweep
	case "pull_request":
		c.mode = modeCompare
	case "workflow_run":
		c.mode = modeComment
	default:
		return fmt.Errorf("input mode (--mode): auto has no mode for the event %q (GITHUB_EVENT_NAME); set sweep, compare or comment", event)
	}
	return nil
}

// ghEnv is what GitHub's runner says about the job.
type ghEnv struct {
	eventName, eventPath, output, summary string
	workspace, temp, repository           string
	apiURL, serverURL, runID, token       string
}

func readGHEnv(getenv func(string) string) (ghEnv, error) {
	e := ghEnv{
		eventName: getenv("GITHUB_EVENT_NAME"), eventPath: getenv("GITHUB_EVENT_PATH"),
		output: getenv("GITHUB_OUTPUT"), summary: getenv("GITHUB_STEP_SUMMARY"),
		workspace: getenv("GITHUB_WORKSPACE"), temp: getenv("RUNNER_TEMP"),
		repository: getenv("GITHUB_REPOSITORY"), apiURL: getenv("GITHUB_API_URL"),
		serverURL: getenv("GITHUB_SERVER_URL"), runID: getenv("GITHUB_RUN_ID"),
		token: getenv("GITHUB_TOKEN"),
	}
	for _, v := range []struct{ name, val string }{{"RUNNER_TEMP", e.temp}, {"GITHUB_OUTPUT", e.output}, {"GITHUB_WORKSPACE", e.workspace}} {
		if v.val == "" {
			return e, fmt.Errorf("%s is not set: `ceiling action` runs in a GitHub Actions job (action.yml)", v.name)
		}
	}
	if e.apiURL == "" {
		e.apiURL = "https://api.github.com"
	}
	if e.serverURL == "" {
		e.serverURL = "https://github.com"
	}
	return e, nil
}

// dir is the action's own directory under RUNNER_TEMP.
func (e ghEnv) dir(elem ...string) string {
	return filepath.Join(append([]string{e.temp, "ceiling-action"}, elem...)...)
}

func runAction(args []string, stdout, stderr io.Writer) error {
	var c actionConfig
	fs := actionFlags(&c, stderr)
	if done, err := parseOnlyFlags(fs, args); done {
		return err
	}
	if err := c.resolve(os.Getenv("GITHUB_EVENT_NAME")); err != nil {
		return usageError{err}
	}
	if err := c.check(); err != nil {
		return usageError{err}
	}
	if c.resolveMode {
		fmt.Fprintf(stdout, "mode=%s\n", c.mode)
		return nil
	}
	env, err := readGHEnv(os.Getenv)
	if err != nil {
		return usageError{err}
	}
	a := &actionRun{c: c, env: env, stdout: stdout, stderr: stderr}
	switch c.mode {
	case modeSweep:
		return a.sweep()
	case modeCompare:
		return a.compare()
	case modePublish:
		return a.publishOnly()
	default:
		return a.comment()
	}
}

// actionRun is one `ceiling action`.
type actionRun struct {
	c              actionConfig
	env            ghEnv
	stdout, stderr io.Writer
}

// checkout is the absolute path of the checkout (--path).
func (a *actionRun) checkout() string {
	if filepath.IsAbs(a.c.path) {
		return a.c.path
	}
	return filepath.Join(a.env.workspace, a.c.path)
}

// setOutput appends the step's outputs to GITHUB_OUTPUT, in order; a
// value is one line (GitHub's key=value form).
func (a *actionRun) setOutput(kv ...string) error {
	f, err := os.OpenFile(a.env.output, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("GITHUB_OUTPUT: %w", err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		v := strings.NewReplacer("\n", " ", "\r", " ").Replace(kv[i+1])
		fmt.Fprintf(f, "%s=%s\n", kv[i], v)
	}
	return f.Close()
}

// self runs this binary's subcommand args in dir, its output the step's
// log; env is added to the environment (a "NAME=" entry removes NAME).
// The token is in the environment of publish only (noToken).
func (a *actionRun) self(dir string, env []string, args ...string) error {
	return a.selfAs(nil, dir, env, args...)
}

// selfAs is self through prefix (asRoot's sudo), when it is not empty.
func (a *actionRun) selfAs(prefix []string, dir string, env []string, args ...string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	argv := append(append(slices.Clip(prefix), exe), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, a.stderr, a.stderr
	cmd.Env = withEnv(os.Environ(), env)
	fmt.Fprintf(a.stderr, "ceiling action: ceiling %s\n", publish.Redact(strings.Join(args, " "), a.env.token))
	return cmd.Run()
}

// withEnv is base with each NAME=VALUE of set replacing NAME's entry; a
// NAME= entry removes it.
func withEnv(base, set []string) []string {
	out := make([]string, 0, len(base)+len(set))
	drop := map[string]bool{}
	for _, kv := range set {
		drop[strings.SplitN(kv, "=", 2)[0]] = true
	}
	for _, kv := range base {
		if !drop[strings.SplitN(kv, "=", 2)[0]] {
			out = append(out, kv)
		}
	}
	for _, kv := range set {
		if !strings.HasSuffix(kv, "=") {
			out = append(out, kv)
		}
	}
	return out
}

// noToken removes the token from a child's environment: a build, a
// sweep and the servers it boots never see it.
var noToken = []string{"GITHUB_TOKEN="}

// buildIn runs the build command cmd with bash in dir; its output is the
// step's log.
func (a *actionRun) buildIn(what, dir, cmd string) error {
	if cmd == "" {
		return nil
	}
	fmt.Fprintf(a.stderr, "ceiling action: build %s in %s: %s\n", what, dir, cmd)
	if err := runBuild(dir, cmd, a.stderr); err != nil {
		return fmt.Errorf("input build: %s's build (%s) failed: %w", what, cmd, err)
	}
	return nil
}

// targetBuild is the "build" of the target file at path (ceiling init
// writes it): the action's build when its input is empty. "" when the
// file has none or cannot be read (the sweep then says what is wrong
// with the file).
func targetBuild(path string) string {
	build, _ := readTargetBuild(path)
	return build
}

// readTargetBuild reads the "build" field of the target file at path
// (compare refuses a file it cannot read; the action goes on without).
func readTargetBuild(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var doc struct {
		Build string `json:"build"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", err
	}
	return doc.Build, nil
}

// runBuild runs a user's build command with bash in dir, its output to
// log, without the token in its environment (init and the action).
func runBuild(dir, cmd string, log io.Writer) error {
	b := exec.Command("bash", "-c", cmd)
	b.Dir, b.Stdout, b.Stderr = dir, log, log
	b.Env = withEnv(os.Environ(), noToken)
	return b.Run()
}

// sweepArgs are the flags both modes give `ceiling sweep` from the inputs.
func (a *actionRun) sweepArgs(compare bool) ([]string, error) {
	var args []string
	if a.c.scenario != "" {
		args = append(args, "--scenario", a.c.scenario)
	}
	if a.c.quick {
		args = append(args, "--quick")
	}
	if a.c.generator != "" {
		args = append(args, "--generator", a.c.generator)
	}
	srv, gen, how, err := a.cpuSets(compare)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(a.stderr, "ceiling action: server CPUs %s, generator CPUs %s (%s)\n", srv, gen, how)
	return append(args, "--srv-cpuset", srv, "--lt-cpuset", gen), nil
}

// cpuSets are the server's and the generator's CPU sets: --cpus, or the
// CI split of this runner's CPUs (docs/sweep.md, "The CI split").
func (a *actionRun) cpuSets(compare bool) (srv, gen, how string, err error) {
	if a.c.cpus != "auto" {
		srv, gen, err = splitCPUs(a.c.cpus)
		return srv, gen, "input cpus", err
	}
	avail, err := pinning.Granted(os.Getpid())
	if err != nil {
		return "", "", "", fmt.Errorf("input cpus: auto: this process's CPUs: %w", err)
	}
	return ciSplit(avail.Ints(), compare)
}

// splitCPUs parses SERVER/GENERATOR.
func splitCPUs(s string) (srv, gen string, err error) {
	srv, gen, ok := strings.Cut(s, "/")
	if !ok {
		return "", "", fmt.Errorf("%q is not SERVER/GENERATOR (e.g. 1-3/0)", s)
	}
	if _, err := pinning.Parse("server", srv); err != nil {
		return "", "", err
	}
	if _, err := pinning.Parse("generator", gen); err != nil {
		return "", "", err
	}
	return srv, gen, nil
}

// ciSplit is the CI split of cpus (bench.yml's until the action):
// the server gets s = m/1.83 of m CPUs, the generator the rest, which
// keeps the generator ahead of refserver at the headline batch. A
// comparison from 4 CPUs on is a duet: these sets are half a (of m =
// n/2), and COMPARE_MODE auto picks half b from the rest.
func ciSplit(cpus []int, compare bool) (srv, gen, how string, err error) {
	n := len(cpus)
	list := func(c []int) string {
		s := make([]string, len(c))
		for i, x := range c {
			s[i] = strconv.Itoa(x)
		}
		return strings.Join(s, ",")
	}
	switch {
	case n < 2:
		return "", "", "", fmt.Errorf("input cpus: auto: this runner has %d CPU; the server and the generator need one each", n)
	case n == 2:
		return list(cpus[1:]), list(cpus[:1]), "the CI split of 2 CPUs", nil
	case n == 3:
		return list(cpus[2:]), list(cpus[:2]), "the CI split of 3 CPUs", nil
	}
	m, how := n, fmt.Sprintf("the CI split of %d CPUs", n)
	if compare {
		m, how = n/2, fmt.Sprintf("a duet on %d CPUs: half a, half b from the rest", n)
	}
	s := max(1, m*100/183)
	return list(cpus[m-s : m]), list(cpus[:m-s]), how, nil
}

// armTarget writes the target file src as dst for one arm: its "dir"
// made absolute under side (a relative command[0] is taken from dir), so
// that each arm runs its own checkout's build, and its "name" set to name
// when that is not empty (the arm's ref). Fields it does not know are
// kept. Errors name src, for the caller to say which flag gave it.
func armTarget(src, dst, side, name string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %v", src, err)
	}
	dir := side
	if raw, ok := doc["dir"]; ok {
		var d string
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("%s: dir: %v", src, err)
		}
		if filepath.IsAbs(d) {
			return fmt.Errorf("%s: dir %q is absolute: both arms would run the same build; make it relative to the checkout", src, d)
		}
		dir = filepath.Join(side, d)
	}
	raw, _ := json.Marshal(dir)
	doc["dir"] = raw
	if name != "" {
		doc["name"], _ = json.Marshal(name)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(dst, append(out, '\n'), 0o644)
}

// withDir is armTarget for the action's input target.
func withDir(src, dst, side, name string) error {
	if err := armTarget(src, dst, side, name); err != nil {
		return fmt.Errorf("input target: %w", err)
	}
	return nil
}

// outputs sets result, headline and, with a comparison, verdict,
// change-pct and p-value from the result at path.
func (a *actionRun) outputs(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r result.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	num := func(p *float64, prec int) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', prec, 64)
	}
	headline := ""
	if r.Headline.Clean {
		headline = num(&r.Headline.ThroughputPerS, 0)
	}
	kv := []string{"result", path, "headline", headline}
	if c := r.Comparison; c != nil {
		kv = append(kv, "verdict", c.Headline.Verdict, "change-pct", num(c.Headline.ChangePct, 2), "p-value", num(c.Headline.PValue, 4))
	}
	return a.setOutput(kv...)
}
