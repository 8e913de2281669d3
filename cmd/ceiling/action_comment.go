package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/ceiling-bench/ceiling/publish"
)

// runEvent is what comment mode reads of a workflow_run event's payload.
type runEvent struct {
	WorkflowRun struct {
		Event      string `json:"event"`
		HeadSHA    string `json:"head_sha"`
		Conclusion string `json:"conclusion"`
		HTMLURL    string `json:"html_url"`
	} `json:"workflow_run"`
}

// maxResultBytes is the largest artifact result comment mode reads.
const maxResultBytes = 64 << 20

var prNumberOK = regexp.MustCompile(`^[1-9][0-9]{0,9}$`)

// comment is mode comment, in a workflow_run workflow that runs the
// default branch's code only: every ceiling-pr-NAME artifact of the
// compare run (downloaded by action.yml) is untrusted input. Its pull
// request number must name an open pull request whose head is the run's
// head commit (asked of the API); its result goes through `publish
// comment`, which validates it and escapes every string. A run that left
// no artifact, or no result, marks the comment stale instead.
func (a *actionRun) comment() error {
	var ev runEvent
	if err := readEvent(a.env.eventPath, &ev); err != nil {
		return err
	}
	run := ev.WorkflowRun
	if run.Event != "pull_request" {
		fmt.Fprintf(a.stderr, "ceiling action: the run was a %q, not a pull_request: nothing to comment on\n", run.Event)
		return nil
	}
	if !shaOK.MatchString(run.HeadSHA) {
		return fmt.Errorf("GITHUB_EVENT_PATH: workflow_run.head_sha %q is not a commit", run.HeadSHA)
	}
	if a.env.token == "" {
		return usagef("input github-token: empty, and comment mode comments with it")
	}
	owner, repo, ok := strings.Cut(a.env.repository, "/")
	if !ok {
		return fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", a.env.repository)
	}
	gh, err := publish.NewClient(a.env.apiURL, a.env.token, nil)
	if err != nil {
		return err
	}
	c := &commenter{actionRun: a, gh: gh, owner: owner, repo: repo, head: run.HeadSHA, conclusion: run.Conclusion, runURL: run.HTMLURL}
	dirs, _ := filepath.Glob(a.env.dir("artifacts", "ceiling-pr-*"))
	if len(dirs) == 0 {
		return c.noArtifact()
	}
	status := 0
	for _, d := range dirs {
		if rc := c.one(d); rc != 0 && status == 0 {
			status = rc
		}
	}
	if status != 0 {
		return exitStatus{status, fmt.Errorf("comment mode: a result failed the gate or could not be posted (above)")}
	}
	return nil
}

// commenter is one comment mode's API client and run.
type commenter struct {
	*actionRun
	gh                       *github.Client
	owner, repo              string
	head, conclusion, runURL string
}

func (c *commenter) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// openPRsForHead are the open pull requests whose head is the run's head
// commit (forks included).
func (c *commenter) openPRsForHead() ([]int, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	var prs []int
	opt := &github.PullRequestListOptions{State: "open", ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < 50; page++ {
		list, resp, err := c.gh.PullRequests.List(ctx, c.owner, c.repo, opt)
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			if p.GetHead().GetSHA() == c.head {
				prs = append(prs, p.GetNumber())
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return prs, nil
}

// noArtifact marks the default comment of every open pull request with
// this head stale: the compare job died before uploading anything.
func (c *commenter) noArtifact() error {
	fmt.Fprintf(c.stderr, "ceiling action: no artifact from run %s (%s)\n", c.runURL, c.conclusion)
	prs, err := c.openPRsForHead()
	if err != nil {
		return fmt.Errorf("list the pull requests of %s: %w", c.head, err)
	}
	var failed error
	for _, pr := range prs {
		if err := c.stale(pr, "ceiling:comment generator="+c.c.name, fmt.Sprintf("the benchmark run ended (%s) before uploading anything", c.conclusion), c.runURL); err != nil {
			failed = err
		}
	}
	return failed
}

func (c *commenter) stale(pr int, marker, reason, runURL string) error {
	return exitOf(c.self(c.checkout(), nil, "publish", "stale", "--repo", c.env.repository, "--pr", strconv.Itoa(pr), "--commit", c.head,
		"--reason", reason, "--run-url", runURL, "--api-url", c.env.apiURL, "--marker", marker, "--comment-author", "github-actions[bot]"), "publish stale")
}

// verified is 0 when pull request pr is open with the run's head as its
// head, 1 when it moved on (a newer push owns the comment), 2 on error.
func (c *commenter) verified(pr int) (int, *github.PullRequest) {
	ctx, cancel := c.ctx()
	defer cancel()
	p, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, pr)
	if err != nil {
		fmt.Fprintf(c.stderr, "::error::pull request #%d: %v\n", pr, err)
		return 2, nil
	}
	if p.GetState() != "open" || p.GetHead().GetSHA() != c.head {
		fmt.Fprintf(c.stderr, "ceiling action: pull request #%d is %s with head %s, not the run's %s: nothing to do\n", pr, p.GetState(), p.GetHead().GetSHA(), c.head)
		return 1, nil
	}
	return 0, p
}

// regular is path's size when it is a regular file, not a link.
func regular(path string) (int64, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	return fi.Size(), true
}

// one posts (or marks stale) the comment of one artifact directory; its
// status is 0, 1 (the gate, or an API failure) or 2 (not a valid result).
func (c *commenter) one(dir string) int {
	name := strings.TrimPrefix(filepath.Base(dir), "ceiling-pr-")
	if !actionNameOK.MatchString(name) {
		fmt.Fprintf(c.stderr, "::error::artifact %s is not ceiling-pr-<name>\n", filepath.Base(dir))
		return 1
	}
	marker := "ceiling:comment generator=" + name
	n, ok := regular(filepath.Join(dir, "pr-number"))
	if !ok || n > 16 {
		fmt.Fprintf(c.stderr, "::error::%s: no pr-number in the artifact\n", name)
		return 1
	}
	b, _ := os.ReadFile(filepath.Join(dir, "pr-number"))
	s := strings.TrimSpace(string(b))
	if !prNumberOK.MatchString(s) {
		fmt.Fprintf(c.stderr, "::error::%s: the artifact's pull request number is not a positive integer\n", name)
		return 1
	}
	pr, _ := strconv.Atoi(s)
	v, p := c.verified(pr)
	if v != 0 {
		return v - 1 // moved on: 0; error: 1
	}
	res := filepath.Join(dir, "result.json")
	size, ok := regular(res)
	if !ok {
		return c.code(c.stale(pr, marker, fmt.Sprintf("the sweep ended (%s) before writing its result", c.conclusion), c.runURL))
	}
	if size > maxResultBytes {
		fmt.Fprintf(c.stderr, "::error::%s: result.json is over 64 MiB; not reading it\n", name)
		return 1
	}
	args := []string{"publish", "comment", "--head", res, "--repo", c.env.repository, "--pr", strconv.Itoa(pr),
		"--api-url", c.env.apiURL, "--marker", marker, "--comment-author", "github-actions[bot]",
		"--out", c.env.dir("comment-" + name + ".md"), "--fail-on", c.c.failOn}
	args = append(args, c.baseline(name, p)...)
	if c.c.siteURL != "" {
		args = append(args, "--site-url", c.c.siteURL)
	}
	rc := c.code(c.self(c.checkout(), nil, args...))
	if rc == 2 { // not a valid result: the earlier comment is marked stale
		_ = c.stale(pr, marker, "its result failed validation", c.env.serverURL+"/"+c.env.repository+"/actions/runs/"+c.env.runID)
	}
	return rc
}

// code is err's exit status.
func (c *commenter) code(err error) int {
	if err == nil {
		return 0
	}
	var s exitStatus
	if errors.As(err, &s) {
		return s.code
	}
	fmt.Fprintf(c.stderr, "::error::%v\n", publish.Redact(err.Error(), c.env.token))
	return 1
}

// baseline are publish comment's flags for the published result of
// name on the data branch, measured at the code the pull request
// branched from, else the newest (history and a fallback; the verdict is
// the two-arm sweep's). None when the checkout has no such history.
func (c *commenter) baseline(name string, p *github.PullRequest) []string {
	if c.c.dataBranch == "" {
		return nil
	}
	published := "benchmark/published/" + name + ".json"
	data := "origin/" + c.c.dataBranch
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = c.checkout()
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	codeBase := ""
	ctx, cancel := c.ctx()
	defer cancel()
	if cmp, _, err := c.gh.Repositories.CompareCommits(ctx, c.owner, c.repo, p.GetBase().GetSHA(), c.head, nil); err == nil {
		if mb := cmp.GetMergeBaseCommit().GetSHA(); shaOK.MatchString(mb) {
			// The code it branched from: publish commits are data only.
			codeBase = git("log", "-1", "--format=%H", "--invert-grep", "--grep=^ceiling: publish ", mb)
		}
	}
	commit, source := "", ""
	if codeBase != "" {
		commit = git("log", "-1", "--format=%H", "--fixed-strings", "--grep=measured at "+codeBase, data, "--", published)
		source = fmt.Sprintf("%s on %s, publish commit %.12s, measured at the merge-base", published, c.c.dataBranch, commit)
	}
	if commit == "" {
		commit, source = data, fmt.Sprintf("%s on %s (the latest published)", published, c.c.dataBranch)
	}
	show := exec.Command("git", "show", commit+":"+published)
	show.Dir = c.checkout()
	out, err := show.Output()
	if err != nil {
		return nil
	}
	path := c.env.dir("published-" + name + ".json")
	if os.WriteFile(path, out, 0o644) != nil {
		return nil
	}
	flags := []string{"--base", path, "--base-source", source}
	// The history as main has it now: a recent change point is news to
	// the pull request whatever its base.
	if hist, err := exec.Command("git", "-C", c.checkout(), "show", data+":benchmark/published/"+name+".history.jsonl").Output(); err == nil {
		hpath := c.env.dir("published-" + name + ".history.jsonl")
		if os.WriteFile(hpath, hist, 0o644) == nil {
			flags = append(flags, "--history", hpath)
		}
	}
	if codeBase != "" {
		flags = append(flags, "--merge-base", codeBase)
	}
	return flags
}
