package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/internal/stats"
)

// prEvent is what compare mode reads of a pull_request event's payload.
type prEvent struct {
	Number      int `json:"number"`
	PullRequest struct {
		Number int `json:"number"`
		Base   struct {
			SHA string `json:"sha"`
		} `json:"base"`
		Head struct {
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
}

var shaOK = regexp.MustCompile(`^[0-9a-f]{40}$`)

// shortSHA is a commit's first 7 digits, or "unknown" when it is not one.
func shortSHA(sha string) string {
	if !shaOK.MatchString(sha) {
		return "unknown"
	}
	return sha[:7]
}

// readEvent decodes GITHUB_EVENT_PATH into v.
func readEvent(path string, v any) error {
	if path == "" {
		return errors.New("GITHUB_EVENT_PATH is not set")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GITHUB_EVENT_PATH %s: %v", path, err)
	}
	return nil
}

// exitOf is err with the child's exit status kept (1: the gate, 2: bad
// input), so the step fails as the child did.
func exitOf(err error, what string) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return exitStatus{ee.ExitCode(), fmt.Errorf("%s: exit status %d", what, ee.ExitCode())}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// compare is mode compare: the pull request's base in a worktree, both
// built by the same command, the base's target file for both arms, one
// two-arm sweep from the head's checkout (so meta.git_ref is the head),
// then the comment's Markdown as the job summary and the --fail-on gate.
// The artifact directory holds pr-number first, so that a sweep that
// dies still leaves the commenter its pull request to mark stale.
func (a *actionRun) compare() error {
	var ev prEvent
	if err := readEvent(a.env.eventPath, &ev); err != nil {
		return err
	}
	pr := ev.PullRequest.Number
	if pr == 0 {
		pr = ev.Number
	}
	if pr <= 0 || !shaOK.MatchString(ev.PullRequest.Base.SHA) {
		return fmt.Errorf("GITHUB_EVENT_PATH: not a pull_request event (number %d, base sha %q): compare mode runs on pull_request", pr, ev.PullRequest.Base.SHA)
	}
	art := a.env.dir("artifact")
	if err := os.RemoveAll(art); err != nil {
		return err
	}
	if err := os.MkdirAll(art, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(art, "pr-number"), []byte(strconv.Itoa(pr)+"\n"), 0o644); err != nil {
		return err
	}
	head := a.checkout()
	baseT, headT := a.env.dir("base-target.json"), a.env.dir("head-target.json")
	headBuild := a.c.build
	if a.c.baseTarget != "" {
		// You built the base: its target file as given; the head's own.
		baseT = a.c.baseTarget
		if !filepath.IsAbs(baseT) {
			baseT = filepath.Join(head, baseT)
		}
		if err := withDir(filepath.Join(head, a.c.target), headT, head, ""); err != nil {
			return err
		}
		if headBuild == "" {
			headBuild = targetBuild(filepath.Join(head, a.c.target))
		}
	} else {
		wt := a.env.dir("base")
		if err := baseWorktree(head, ev.PullRequest.Base.SHA, wt, a.stderr); err != nil {
			return err
		}
		// The base's target file for both arms: a pull request cannot
		// change how it is measured by editing its own; nor, without a
		// build input, how it is built (the file's "build").
		tmpl := filepath.Join(wt, a.c.target)
		if headBuild == "" {
			headBuild = targetBuild(tmpl)
		}
		build := a.c.baseBuild
		if build == "" {
			build = headBuild
		}
		if err := a.buildIn("the base", wt, build); err != nil {
			return err
		}
		// Each arm named by its commit: one repository's two arms would
		// otherwise both bear the target's name.
		if err := withDir(tmpl, baseT, wt, "base@"+shortSHA(ev.PullRequest.Base.SHA)); err != nil {
			return err
		}
		if err := withDir(tmpl, headT, head, "head@"+shortSHA(ev.PullRequest.Head.SHA)); err != nil {
			return err
		}
	}
	if err := a.buildIn("the head", head, headBuild); err != nil {
		return err
	}
	args, err := a.sweepArgs(true)
	if err != nil {
		return err
	}
	asRoot, restore, err := a.isolateHead(head)
	if err != nil {
		return err
	}
	defer restore()
	if a.c.serverUser != "" {
		args = append(args, "--srv-user", a.c.serverUser)
	}
	n, costs := published(head, a.c.dataBranch, a.c.name, os.LookupEnv)
	if n > 0 {
		fmt.Fprintf(a.stderr, "ceiling action: the last published headline on %s was measured at %d connections: compared there if the arms' ceiling rungs differ (COMPARE_PREFER)\n", a.c.dataBranch, n)
		args = append(args, "--compare-prefer", strconv.Itoa(n))
	}
	if !costs.IsZero() {
		fmt.Fprintf(a.stderr, "ceiling action: the last published result's servers took %s to be ready and %s to stop: the budget is planned from that before anything boots (SERVER_COSTS)\n", costs.Ready, costs.Stop)
		args = append(args, "--server-costs", costs.String())
	}
	res := filepath.Join(art, "result.json")
	// The comment's Markdown is the job summary, not the sweep's table.
	sweepErr := a.selfAs(asRoot, head, append([]string{"GITHUB_STEP_SUMMARY="}, noToken...),
		append([]string{"sweep", "--base-target", baseT, "--target", headT, "--out", res}, args...)...)
	restore() // the pull request's server is stopped: no one needs the path now
	if _, err := os.Stat(res); err != nil {
		// Never a pass without a result, whatever the sweep's status.
		if sweepErr == nil {
			sweepErr = err
		}
		return exitOf(sweepErr, "the two-arm sweep wrote no result")
	}
	if err := a.outputs(res); err != nil {
		return err
	}
	return exitOf(a.self(head, nil, "publish", "comment", "--head", res, "--dry-run",
		"--marker", "ceiling:comment generator="+a.c.name, "--fail-on", a.c.failOn), "the headline's verdict (input fail-on "+a.c.failOn+")")
}

// isolateHead prepares input server-user: the pull request's server
// runs as that user (SRV_USER), so that it cannot write the base's
// build, the result or the runner's files, nor signal the harness. The
// harness must then run as root: it is root already, or the prefix
// returned runs it through passwordless sudo (GitHub's runners have it).
// The user must reach the head's checkout: each directory above it that
// others may not search is made searchable (o+x, not readable), and the
// log says which; restore puts their modes back (the sweep is over: a
// self-hosted runner keeps its directories), and logs each one.
func (a *actionRun) isolateHead(head string) (prefix []string, restore func(), err error) {
	restore = func() {}
	if a.c.serverUser == "" {
		fmt.Fprintln(a.stderr, "ceiling action: input server-user is empty: the pull request's server runs as the runner's user, and could rewrite the verdict (docs/publish.md, \"What a pull request can still do\")")
		return nil, restore, nil
	}
	bad := func(err error) error {
		return fmt.Errorf("input server-user (--server-user) %s: %w", a.c.serverUser, err)
	}
	if os.Geteuid() != 0 {
		if out, err := exec.Command("sudo", "-n", "true").CombinedOutput(); err != nil {
			return nil, restore, bad(fmt.Errorf("the action does not run as root, and `sudo -n true` failed (%v: %s): this runner cannot start the server as another user; set server-user to '' to run it as the runner's (docs/action.md)", err, strings.TrimSpace(string(out))))
		}
		// sudo resets PATH (secure_path): the harness gets the job's.
		prefix = []string{"sudo", "-n", "--preserve-env", "--", "env", "PATH=" + os.Getenv("PATH")}
	}
	abs, err := filepath.Abs(head)
	if err != nil {
		return nil, restore, bad(err)
	}
	chmod := func(d string, mode os.FileMode) error {
		if prefix == nil {
			return os.Chmod(d, mode)
		}
		if out, err := exec.Command("sudo", "-n", "--", "chmod", fmt.Sprintf("%o", mode), d).CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	type opened struct {
		dir  string
		mode os.FileMode
	}
	var done []opened
	restore = func() {
		for _, o := range slices.Backward(done) {
			if err := chmod(o.dir, o.mode); err != nil {
				fmt.Fprintf(a.stderr, "ceiling action: could not put back the mode of %s (%o): %v\n", o.dir, o.mode, err)
				continue
			}
			fmt.Fprintf(a.stderr, "ceiling action: %s put back to mode %o\n", o.dir, o.mode)
		}
		done = nil
	}
	for d := abs; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			restore()
			return nil, func() {}, bad(err)
		}
		if was := st.Mode().Perm(); was&0o001 == 0 {
			if err := chmod(d, was|0o001); err != nil {
				restore()
				return nil, func() {}, bad(fmt.Errorf("make %s searchable by others, to reach the head's checkout: %w", d, err))
			}
			done = append(done, opened{d, was})
			fmt.Fprintf(a.stderr, "ceiling action: server-user %s: %s made searchable by others (mode %o) until the sweep ends, to reach the head's checkout\n", a.c.serverUser, d, was|0o001)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if prefix != nil {
		fmt.Fprintf(a.stderr, "ceiling action: the sweep runs as root (sudo), the pull request's server as %s\n", a.c.serverUser)
	}
	return prefix, restore, nil
}

// baseWorktree checks sha out, detached, at wt: from the checkout's
// objects, else fetched from origin (a shallow checkout).
func baseWorktree(repo, sha, wt string, log interface{ Write([]byte) (int, error) }) error {
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Stdout, cmd.Stderr = log, log
		return cmd.Run()
	}
	// A worktree an earlier run left at wt is removed by name: never
	// `git worktree prune`, which also forgets every worktree of the
	// user's that is moved or on a drive not mounted (and its index,
	// staged changes included).
	_ = exec.Command("git", "-C", repo, "worktree", "remove", "--force", wt).Run() // quiet: none is the usual case
	_ = os.RemoveAll(wt)
	if git("cat-file", "-e", sha+"^{commit}") != nil {
		if err := git("fetch", "--no-tags", "--depth=1", "origin", sha); err != nil {
			return fmt.Errorf("the base commit %s is not in %s and fetching it failed (%v): check out with fetch-depth: 0", sha, repo, err)
		}
	}
	if err := git("worktree", "add", "--detach", wt, sha); err != nil {
		return fmt.Errorf("git worktree add %s %s: %w", wt, sha, err)
	}
	return nil
}

// sweep is mode sweep: build, sweep pinned, and (input publish) commit
// the result to the data branch as benchmark/published/NAME.json.
func (a *actionRun) sweep() error {
	head := a.checkout()
	if a.c.publish && a.env.token == "" {
		return usagef("input github-token: empty, and sweep mode with publish: true pushes with it (or set publish: false)")
	}
	if a.c.publish && a.c.dataBranch == "" {
		return usagef("input data-branch (--data-branch): empty, and publish is true")
	}
	build := a.c.build
	if build == "" {
		build = targetBuild(filepath.Join(head, a.c.target))
	}
	if err := a.buildIn("the server", head, build); err != nil {
		return err
	}
	args, err := a.sweepArgs(false)
	if err != nil {
		return err
	}
	if a.c.calibrate {
		args = append(args, "--calibrate")
	}
	art := a.env.dir("artifact")
	if err := os.MkdirAll(art, 0o755); err != nil {
		return err
	}
	res := filepath.Join(art, a.c.name+".json")
	sweepErr := a.self(head, noToken, append([]string{"sweep", "--target", filepath.Join(head, a.c.target), "--out", res}, args...)...)
	if _, err := os.Stat(res); err == nil {
		if err := a.outputs(res); err != nil {
			return err
		}
	}
	if sweepErr != nil || !a.c.publish {
		return exitOf(sweepErr, "the sweep")
	}
	return a.commitResult(head, res)
}

// commitResult commits res to the data branch as NAME.json.
func (a *actionRun) commitResult(head, res string) error {
	remote, err := pushRemote(a.env.serverURL, a.env.repository, a.env.token)
	if err != nil {
		return err
	}
	return exitOf(a.self(head, nil, "publish", "commit", "--repo", head, "--remote", remote,
		"--branch", a.c.dataBranch, "--path", "benchmark/published/"+a.c.name+".json",
		"--change-comment", a.c.changeComment, "--github-repo", a.env.repository, res), "publish commit")
}

// publishOnly is mode publish: the job that holds contents: write commits
// the result a read-only sweep job (mode sweep, publish: false) uploaded
// as ceiling-NAME, and runs nothing else: no build, no server, no
// generator. The document is validated by publish commit like any other.
func (a *actionRun) publishOnly() error {
	if a.env.token == "" {
		return usagef("input github-token: empty, and publish mode pushes with it")
	}
	if a.c.dataBranch == "" {
		return usagef("input data-branch (--data-branch): empty")
	}
	res := filepath.Join(a.env.dir("artifact"), a.c.name+".json")
	if _, err := os.Stat(res); err != nil {
		return usagef("publish mode: no result %s: the sweep job's artifact ceiling-%s (mode sweep with publish: false) was not downloaded: %v", res, a.c.name, err)
	}
	if err := a.outputs(res); err != nil {
		return err
	}
	return a.commitResult(a.checkout(), res)
}

// pushRemote is the repository's URL on GITHUB_SERVER_URL, with the token
// as its password for http(s): it lives on the child's command line only
// (never in .git/config), and ceiling prints remotes redacted. Another
// scheme (a file:// server, a mirror) takes no credentials.
func pushRemote(server, repository, token string) (string, error) {
	u, err := url.Parse(server)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("GITHUB_SERVER_URL %q is not a URL", server)
	}
	if strings.Count(repository, "/") != 1 || strings.Contains(repository, "..") {
		return "", fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", repository)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + repository + ".git"
	if u.Scheme == "https" || u.Scheme == "http" {
		u.User = url.UserPassword("x-access-token", token)
	}
	return u.String(), nil
}

// published is what the action reads of the result last published for
// name on the data branch (origin/<branch>, as the checkout has it): the
// connections of its headline, so that pull requests are compared at one
// rung when their arms disagree (COMPARE_PREFER: 0 when there is none,
// when its headline batch is not this run's, HEADLINE_BATCH, or when the
// knob is set already), and what its points' servers took to be ready
// and to stop, so that the budget is planned before anything boots
// (SERVER_COSTS: zero when it has too few points that booted their own,
// or when the knob is set).
func published(checkout, branch, name string, lookup func(string) (string, bool)) (rung int, costs knob.ServerCosts) {
	if branch == "" {
		return 0, costs
	}
	show := exec.Command("git", "show", "origin/"+branch+":benchmark/published/"+name+".json")
	show.Dir = checkout
	out, err := show.Output()
	if err != nil {
		return 0, costs
	}
	var doc struct {
		Headline struct {
			Clean       bool `json:"clean"`
			Batch       int  `json:"batch"`
			Connections int  `json:"connections"`
		} `json:"headline"`
		Curve []struct {
			ReadyNs int64 `json:"ready_ns"`
			StopNs  int64 `json:"stop_ns"`
		} `json:"curve"`
	}
	if json.Unmarshal(out, &doc) != nil {
		return 0, costs
	}
	if _, set := lookup("SERVER_COSTS"); !set {
		var ready, stop []float64
		for _, p := range doc.Curve {
			if p.ReadyNs > 0 && p.StopNs > 0 {
				ready, stop = append(ready, float64(p.ReadyNs)), append(stop, float64(p.StopNs))
			}
		}
		if len(ready) >= minPublishedCosts {
			costs = knob.ServerCosts{Ready: time.Duration(stats.Summarize(ready, 0.95).Median).Round(time.Millisecond),
				Stop: time.Duration(stats.Summarize(stop, 0.95).Median).Round(time.Millisecond)}
		}
	}
	if _, set := lookup("COMPARE_PREFER"); set || !doc.Headline.Clean {
		return 0, costs
	}
	batch := knob.DefaultOptions(false).HeadlineBatch
	if v, ok := lookup("HEADLINE_BATCH"); ok {
		if batch, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
			return 0, costs
		}
	}
	if doc.Headline.Batch != batch || doc.Headline.Connections <= 0 || doc.Headline.Connections > knob.MaxConnections {
		return 0, costs
	}
	return doc.Headline.Connections, costs
}

// minPublishedCosts is the fewest points of the last published result
// that booted their own server which SERVER_COSTS is taken from.
const minPublishedCosts = 3
