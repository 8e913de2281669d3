package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/capfile"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

const publishUsage = `usage: ceiling publish commit [flags] RESULT.json|-
       ceiling publish comment --head RESULT.json|- [--base BASE.json] [flags]

commit   put a sweep result on a branch (benchmark/published/<generator>.json),
         append its headline to the bounded history, push; retried after a
         concurrent push. Refuses a result with no clean headline (exit 1).
comment  compare a pull request's sweep with the baseline and keep one
         comment on the pull request up to date; without a token or write
         permission (a fork), writes the job summary and --out instead.

Both validate the document first: a malformed one exits 2 naming the field.
Run 'ceiling publish commit -h' or 'ceiling publish comment -h' for flags.
`

func runPublish(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, publishUsage)
		return usagef("ceiling publish: say commit or comment")
	}
	switch args[0] {
	case "commit":
		return runPublishCommit(args[1:], stdout, stderr)
	case "comment":
		return runPublishComment(args[1:], stdout, stderr)
	case "stale":
		return runPublishStale(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, publishUsage)
		return nil
	}
	fmt.Fprint(stderr, publishUsage)
	return usagef("ceiling publish: unknown subcommand %q (want commit or comment)", args[0])
}

// readResult reads and validates a sweep document from a file or stdin ("-").
// Every failure here is bad input: exit status 2.
func readResult(flagName, path string, stdin io.Reader) (*result.Result, []byte, error) {
	var data []byte
	var err error
	name := path
	if path == "-" {
		name = "stdin"
		data, err = capfile.ReadFrom("result document", name, stdin, capfile.Document)
	} else {
		data, err = capfile.Read("result document", path, capfile.Document)
	}
	if err != nil {
		return nil, nil, usagef("%s: %w", flagName, err)
	}
	r, err := publish.Read(data, name)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return r, data, nil
}

// publishStdin is where "-" reads from; tests replace it.
var publishStdin io.Reader = os.Stdin

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// parseFlags parses args into fs: done after -h (nil error) or on a bad
// flag (a usageError, exit 2).
func parseFlags(fs *flag.FlagSet, args []string) (done bool, err error) {
	// The flag package prints the whole usage on any error, before the
	// error that main prints last: the usage is printed only when asked
	// for (-h), and an error says what was wrong first (flagError).
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if usage != nil {
				usage()
			} else {
				fmt.Fprintf(out, "usage of %s:\n", fs.Name())
				printFlags(fs, out)
			}
			return true, nil
		}
		return true, usageError{flagError(fs, err)}
	}
	return false, nil
}

// parseOnlyFlags is parseFlags for a command that takes no arguments:
// one left over is a usageError naming it.
func parseOnlyFlags(fs *flag.FlagSet, args []string) (done bool, err error) {
	if done, err := parseFlags(fs, args); done {
		return done, err
	}
	if fs.NArg() > 0 {
		return true, usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return false, nil
}

// ---- publish commit

const publishCommitUsage = `usage: ceiling publish commit [flags] RESULT.json|-

Commits the sweep result to --branch of --remote from the checkout in --repo,
without touching its working tree, and pushes. A push rejected because the
branch moved on is fetched and re-applied, at most --retries times.

flags:
`

type publishCommitOptions struct {
	opts    publish.CommitOptions
	verbose bool
	targets stringList
	summary string

	// Where a change point the push completes is posted, and how.
	changeComment string
	githubRepo    string
	apiURL        string
	tokenEnv      string
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// publishSecrets is what publish must never send: secret-named variables
// of this environment (GITHUB_TOKEN, ...), extra values, and the secrets
// of each --target file. A bad target file is bad input (exit 2).
func publishSecrets(targets []string, extra ...string) (*redact.Set, error) {
	for _, f := range targets {
		t, err := target.Load(f)
		if err != nil {
			return nil, usageError{fmt.Errorf("--target: %w", err)}
		}
		extra = append(extra, t.Secrets()...)
	}
	return publish.Secrets(os.Environ(), extra), nil
}

// secretRefusal turns a *publish.SecretError into exit status 2: the
// document is not fit to publish as given. The message names field paths
// only, never the secret.
func secretRefusal(err error) error {
	var se *publish.SecretError
	if errors.As(err, &se) {
		return usageError{se}
	}
	return nil
}

func newPublishCommitFlags(o *publishCommitOptions, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling publish commit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, publishCommitUsage); printFlags(fs, stderr) }
	c := &o.opts
	fs.StringVar(&c.Repo, "repo", ".", "the git checkout to publish from (the workflow's checkout)")
	fs.StringVar(&c.Path, "path", "", "published file inside the repository (default "+publish.DefaultDir+"/<generator>.json)")
	fs.StringVar(&c.HistoryPath, "history", "", "history file, JSON Lines (default the --path with .history.jsonl)")
	fs.IntVar(&c.HistoryMax, "history-max", publish.DefaultHistoryMax, "history entries kept, newest last")
	fs.StringVar(&c.Branch, "branch", publish.DefaultBranch, "branch to publish to")
	fs.StringVar(&c.Remote, "remote", publish.DefaultRemote, "remote to fetch from and push to")
	fs.StringVar(&c.Message, "message", "", "commit message (default names the generator and the measured commit, with [skip ci])")
	fs.StringVar(&c.Author, "author", publish.DefaultAuthor, "commit author and committer, \"Name <email>\"")
	fs.IntVar(&c.Retries, "retries", publish.DefaultRetries, "pushes retried after the branch moved on (0: none)")
	fs.BoolVar(&o.opts.LogTails, "log-tails", false, "publish the failed points' server log tails (curve[].log_tail); by default they are left out of the published file, and kept in the sweep's own result and work dir")
	fs.BoolVar(&o.verbose, "verbose", false, "print every git command on stderr")
	fs.Var(&o.targets, "target", "target `FILE` the sweep ran (repeatable): a document holding any of its secrets is refused, as one holding a secret-named environment variable's value is")
	fs.StringVar(&o.summary, "summary-file", os.Getenv("GITHUB_STEP_SUMMARY"), "after publishing, append the run's table and chart (Markdown) to this file (the job summary); it leads with any change point the new entry completes")
	fs.StringVar(&o.changeComment, "change-comment", publish.ChangeCommentNone, "post a change point the new entry completes, once: none, commit (a comment on the first commit after the change) or issue (a comment on the oldest open issue labelled "+publish.PerformanceLabel+", opened if none); needs a token that may write them")
	fs.StringVar(&o.githubRepo, "github-repo", os.Getenv("GITHUB_REPOSITORY"), "owner/name of the repository to comment on (--change-comment)")
	fs.StringVar(&o.apiURL, "api-url", apiURLDefault(), "GitHub REST API base URL (--change-comment)")
	fs.StringVar(&o.tokenEnv, "token-env", "GITHUB_TOKEN", "environment variable holding the token for --change-comment (never printed)")
	return fs
}

// apiURLDefault is $GITHUB_API_URL, else GitHub's.
func apiURLDefault() string {
	if u := os.Getenv("GITHUB_API_URL"); u != "" {
		return u
	}
	return publish.DefaultAPIURL
}

// checkChangeComment checks the --change-comment flags before anything is
// published: owner/name and the API URL are needed to post.
func (o *publishCommitOptions) checkChangeComment() (owner, name string, err error) {
	if err := publish.CheckChangeComment(o.changeComment); err != nil {
		return "", "", usageError{err}
	}
	if o.changeComment == publish.ChangeCommentNone {
		return "", "", nil
	}
	owner, name, ok := strings.Cut(o.githubRepo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", usagef("--github-repo: %q, want owner/name (default $GITHUB_REPOSITORY), for --change-comment %s", o.githubRepo, o.changeComment)
	}
	if _, err := publish.NewClient(o.apiURL, "", nil); err != nil {
		return "", "", usageError{err}
	}
	return owner, name, nil
}

func runPublishCommit(args []string, stdout, stderr io.Writer) error {
	var o publishCommitOptions
	fs := newPublishCommitFlags(&o, stderr)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usagef("ceiling publish commit: want one RESULT.json (or - for stdin), got %d arguments", fs.NArg())
	}
	if o.opts.HistoryMax <= 0 {
		return usagef("--history-max: %d, want at least 1", o.opts.HistoryMax)
	}
	if o.opts.Retries < 0 {
		return usagef("--retries: %d is negative", o.opts.Retries)
	}
	if o.opts.Retries == 0 {
		o.opts.Retries = -1 // the library reads 0 as "default"
	}
	if st, err := os.Stat(o.opts.Repo); err != nil || !st.IsDir() {
		return usagef("--repo: %q is not a directory", o.opts.Repo)
	}
	owner, name, err := o.checkChangeComment()
	if err != nil {
		return err
	}
	secrets, err := publishSecrets(o.targets, os.Getenv(o.tokenEnv))
	if err != nil {
		return err
	}
	o.opts.Secrets = secrets
	r, raw, err := readResult("result", fs.Arg(0), publishStdin)
	if err != nil {
		return err
	}
	if o.verbose {
		o.opts.Trace = stderr
	}
	said := map[int]bool{} // each bad line once, though every retry reads it
	o.opts.Skipped = func(b publish.BadLine) {
		if !said[b.Line] {
			said[b.Line] = true
			fmt.Fprintf(stderr, "ceiling publish commit: skipped a line of the history on %s that is not an entry, and kept it as it is: %v\n", o.opts.Branch, b)
		}
	}
	ctx, stop := signalContext()
	defer stop()
	out, err := publish.Commit(ctx, r, raw, o.opts)
	var optErr *publish.OptionError
	switch {
	case secretRefusal(err) != nil:
		return secretRefusal(err)
	case errors.Is(err, publish.ErrNotPublishable):
		return exitStatus{1, err}
	case errors.As(err, &optErr):
		return usageError{err} // an option the library refused
	case err != nil:
		return fmt.Errorf("publish commit: %w", err)
	}
	switch {
	case out.Unchanged:
		fmt.Fprintf(stdout, "%s already holds this result of %s; nothing to commit\n", o.opts.Branch, r.Meta.GitRef)
	default:
		fmt.Fprintf(stdout, "published %s measured at %s: %s to %s %s (%d push attempt(s))\n",
			r.Meta.Generator, r.Meta.GitRef, out.Commit, publish.RedactURLs(o.opts.Remote), o.opts.Branch, out.Attempts)
	}
	if out.KeptNewer {
		fmt.Fprintf(stdout, "%s already publishes a newer commit's result; only the history got this one\n", out.Path)
	}
	if out.LogTailsCut > 0 {
		fmt.Fprintf(stdout, "left %d failed points' log tails out of the published file (--log-tails publishes them)\n", out.LogTailsCut)
	}
	changes := publish.NewChanges(out.History, publish.EntryOf(r))
	for _, c := range changes {
		fmt.Fprintln(stdout, secrets.String(publish.ChangeLine(c)))
	}
	publish.WriteSummaryLed(stderr, o.summary, secrets.String(publish.ChangeSummary(changes)), r,
		fmt.Sprintf("ceiling publish commit: %s measured at %s, on %s", r.Meta.Generator, r.Meta.GitRef, o.opts.Branch), secrets)
	if len(changes) == 0 || o.changeComment == publish.ChangeCommentNone {
		return nil
	}
	return postChanges(ctx, o, owner, name, changes, secrets, stdout, stderr)
}

// postChanges posts each change point where --change-comment says, once.
// The result is published already: a failure here is exit 1 that says
// so, and the job summary still leads with the change.
func postChanges(ctx context.Context, o publishCommitOptions, owner, name string, changes []publish.Change, secrets *redact.Set, stdout, stderr io.Writer) error {
	token := os.Getenv(o.tokenEnv)
	if token == "" {
		fmt.Fprintf(stderr, "ceiling publish commit: $%s is empty, so the change point is not posted (--change-comment %s); the job summary leads with it\n", o.tokenEnv, o.changeComment)
		return nil
	}
	client, err := publish.NewClient(o.apiURL, token, nil)
	if err != nil {
		return usageError{err}
	}
	p := &publish.Poster{Client: client, Owner: owner, Repo: name, Token: token, Actions: os.Getenv("GITHUB_ACTIONS") == "true", Wait: func(op string, d time.Duration) {
		fmt.Fprintf(stderr, "ceiling publish commit: %s rate limited; waiting %s\n", op, d)
	}}
	var errs []error
	for _, c := range changes {
		posted, err := p.PostChange(ctx, o.changeComment, c)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("published, but the change point was not posted (--change-comment %s): %s", o.changeComment, secrets.String(err.Error())))
		case posted.Created:
			fmt.Fprintf(stdout, "posted the change point as comment %d: %s\n", posted.ID, posted.URL)
		default:
			fmt.Fprintf(stdout, "the change point was posted before (comment %d): not posted again\n", posted.ID)
		}
	}
	return errors.Join(errs...)
}

// ---- publish comment

const publishCommentUsage = `usage: ceiling publish comment --head RESULT.json|- [flags]

Writes the comparison of a pull request's sweep as Markdown to --out and the
job summary, and keeps one comment per pull request and generator up to date
(found again by a hidden marker). A head document from a two-arm sweep
(ceiling sweep --base-target) carries its own comparison: it is re-derived
from the samples (a document whose verdicts do not follow exits 2) and
--base is not used. Otherwise --base is the fallback: a result published by
another run, which never calls faster or slower.

The token is read from the environment variable --token-env. Without a
token, or with a token that may not comment (a pull request from a fork),
it says so and exits 0: the summary and --out carry the comparison.
--fail-on slower then exits 1 on a significant headline regression (after
writing and posting the comparison), so a required check can gate on it.

flags:
`

type publishCommentOptions struct {
	head, base    string
	baseSource    string
	mergeBase     string
	repo          string
	pr            int
	apiURL        string
	marker        string
	author        string
	summary       string
	out           string
	dryRun        bool
	tokenEnv      string
	maxWait       time.Duration
	rateRetries   int
	targets       stringList
	failOn        string
	siteURL       string
	history       string
	commentTarget [2]string // owner, name
}

func newPublishCommentFlags(o *publishCommentOptions, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling publish comment", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, publishCommentUsage); printFlags(fs, stderr) }
	apiURL := os.Getenv("GITHUB_API_URL")
	if apiURL == "" {
		apiURL = publish.DefaultAPIURL
	}
	fs.StringVar(&o.head, "head", "", "the pull request's sweep result (- for stdin); required")
	fs.StringVar(&o.base, "base", "", "the baseline sweep result (the published file from main, or the merge-base's); missing: head alone, with a footnote")
	fs.StringVar(&o.baseSource, "base-source", "", "where --base came from, shown in a footnote (e.g. \"benchmark/published/ceiling-load.json on main at abc123\")")
	fs.StringVar(&o.mergeBase, "merge-base", "", "the pull request's merge-base commit; a baseline measured elsewhere is footnoted as a fallback")
	fs.StringVar(&o.repo, "repo", os.Getenv("GITHUB_REPOSITORY"), "owner/name of the repository")
	fs.IntVar(&o.pr, "pr", 0, "pull request number")
	fs.StringVar(&o.apiURL, "api-url", apiURL, "GitHub REST API base URL (GitHub Enterprise: https://HOST/api/v3)")
	fs.StringVar(&o.marker, "marker", "", "hidden marker that finds the comment again (default \"ceiling:comment generator=<generator>\")")
	fs.StringVar(&o.author, "comment-author", "", "only edit a marker comment written by this login (e.g. github-actions[bot]); default any author")
	fs.StringVar(&o.summary, "summary-file", os.Getenv("GITHUB_STEP_SUMMARY"), "append the Markdown to this file (the job summary)")
	fs.StringVar(&o.out, "out", "", "write the Markdown to this file (for the workflow's artifact)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the Markdown on stdout; do not call the API")
	fs.StringVar(&o.tokenEnv, "token-env", "GITHUB_TOKEN", "environment variable holding the token (never printed)")
	fs.DurationVar(&o.maxWait, "max-wait", publish.DefaultMaxWait, "longest wait for one rate limit to reset")
	fs.IntVar(&o.rateRetries, "rate-retries", publish.DefaultRateRetries, "retries of one request after a rate limit")
	fs.Var(&o.targets, "target", "target `FILE` the sweeps ran (repeatable): a --head holding any of its secrets is refused, as one holding the token or a secret-named environment variable's value is")
	fs.StringVar(&o.failOn, "fail-on", publish.FailOnNever, "exit 1 when the headline verdict is this: slower (a significant regression), inconclusive (cannot_conclude, or no two-arm comparison), both as slower,inconclusive (what a CI gate should use), or never")
	fs.StringVar(&o.siteURL, "site-url", "", "the results site's base URL (ceiling report, deployed): the comment links the baseline run's page and the trend")
	fs.StringVar(&o.history, "history", "", "the published history (JSON Lines, from the data branch): when the pull request's base (--merge-base, else the newest entry) was measured after a recent change point of main, the comment says so in one line")
	return fs
}

func (o *publishCommentOptions) check(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usagef("ceiling publish comment: unexpected argument %q (the result goes in --head)", fs.Arg(0))
	}
	if o.head == "" {
		return usagef("--head: required (the pull request's sweep result, or - for stdin)")
	}
	if o.base == "-" {
		return usagef("--base: stdin is for --head; give the baseline as a file")
	}
	if o.maxWait <= 0 {
		return usagef("--max-wait: %s, want a positive duration", o.maxWait)
	}
	if o.rateRetries < 1 {
		return usagef("--rate-retries: %d, want at least 1", o.rateRetries)
	}
	if o.marker != "" {
		if err := publish.CheckMarker(o.marker); err != nil {
			return usageError{err}
		}
	}
	if _, _, err := publish.ParseFailOn(o.failOn); err != nil {
		return usageError{err}
	}
	if o.siteURL != "" {
		u, err := publish.CheckSiteURL(o.siteURL)
		if err != nil {
			return usageError{err}
		}
		o.siteURL = u
	}
	if o.dryRun {
		return nil
	}
	owner, name, ok := strings.Cut(o.repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return usagef("--repo: %q, want owner/name (default $GITHUB_REPOSITORY)", o.repo)
	}
	o.commentTarget = [2]string{owner, name}
	if o.pr <= 0 {
		return usagef("--pr: %d, want the pull request's number", o.pr)
	}
	if _, err := publish.NewClient(o.apiURL, "", nil); err != nil {
		return usageError{err}
	}
	return nil
}

func runPublishComment(args []string, stdout, stderr io.Writer) error {
	var o publishCommentOptions
	fs := newPublishCommentFlags(&o, stderr)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if err := o.check(fs); err != nil {
		return err
	}
	secrets, err := publishSecrets(o.targets, os.Getenv(o.tokenEnv))
	if err != nil {
		return err
	}
	head, headRaw, err := readResult("--head", o.head, publishStdin)
	if err != nil {
		return err
	}
	if err := publish.CheckSecrets(headRaw, o.head, secrets); err != nil {
		return secretRefusal(err)
	}
	// A two-arm head compares with itself; a --base is then not read
	// (a note says it was not used).
	var base *result.Result
	copts := publish.CompareOptions{HeadName: o.head, BaseGiven: o.base != ""}
	if head.Comparison == nil {
		base, copts = readBaseline(o, stderr, secrets)
	}
	if o.marker == "" {
		o.marker = publish.Marker(head.Meta.Generator)
	}
	c, err := publish.Compare(base, head, copts)
	if err != nil {
		return usageError{err} // a comparison that does not follow from its samples
	}
	if n, ok := mainChange(o, head, stderr); ok {
		c.Alerts = append(c.Alerts, publish.Alert{Level: publish.AlertNote, Note: n})
	}
	// The verdict gates after the comparison was written and posted: a
	// failing check must still leave the reviewer the reason.
	gate := publish.FailOn(c, o.failOn)
	full := publish.Render(c, publish.RenderOptions{Marker: o.marker, SiteURL: o.siteURL})
	if err := writeMarkdown(o, full, gateLine(gate, o.failOn)); err != nil {
		return err
	}
	if o.dryRun {
		if _, err := io.WriteString(stdout, full); err != nil {
			return err
		}
		return gate
	}
	where := markdownPlaces(o)
	token := os.Getenv(o.tokenEnv)
	if token == "" {
		fmt.Fprintf(stderr, "ceiling publish comment: $%s is empty, so no comment is posted; the comparison is in %s\n", o.tokenEnv, where)
		return gate
	}
	client, err := publish.NewClient(o.apiURL, token, nil)
	if err != nil {
		return usageError{err}
	}
	p := &publish.Poster{
		Client: client, Owner: o.commentTarget[0], Repo: o.commentTarget[1], PR: o.pr,
		Marker: o.marker, Author: o.author, Token: token, RateRetries: o.rateRetries, MaxWait: o.maxWait,
		Wait: func(op string, d time.Duration) {
			fmt.Fprintf(stderr, "ceiling publish comment: %s rate limited; waiting %s\n", op, d)
		},
	}
	ctx, stop := signalContext()
	defer stop()
	posted, err := p.Upsert(ctx, publish.RenderComment(c, publish.RenderOptions{Marker: o.marker, SiteURL: o.siteURL}))
	switch {
	case errors.Is(err, publish.ErrNoPermission):
		fmt.Fprintf(stderr, "ceiling publish comment: %v\nno comment posted (a pull request from a fork gets a read-only token); the comparison is in %s\n", err, where)
		return gate
	case err != nil:
		return errors.Join(fmt.Errorf("publish comment: %w (the comparison is in %s)", err, where), gate)
	}
	verb := "updated"
	if posted.Created {
		verb = "created"
	}
	fmt.Fprintf(stdout, "%s comment %d on %s#%d %s\n", verb, posted.ID, o.repo, o.pr, posted.URL)
	return gate
}

// readBaseline reads --base. The head is the input under test; a baseline
// that is missing or unreadable (main published with an older schema, say)
// must not block every pull request, so it becomes a footnote instead.
//
// A baseline that holds a configured secret is not used either (its
// figures would be rendered into the comment); the footnote names the
// fields, never the secret.
func readBaseline(o publishCommentOptions, stderr io.Writer, secrets *redact.Set) (*result.Result, publish.CompareOptions) {
	copts := publish.CompareOptions{MergeBase: o.mergeBase, BaseSource: o.baseSource, HeadName: o.head}
	if o.base == "" {
		copts.BaseMissing = "no --base was given"
		return nil, copts
	}
	data, err := capfile.Read("result document", o.base, capfile.Document)
	if errors.Is(err, fs.ErrNotExist) {
		copts.BaseMissing = filepath.Base(o.base) + " does not exist (nothing published on the base branch yet?)"
		return nil, copts
	}
	if err != nil {
		copts.BaseMissing = "--base: " + err.Error()
		return nil, copts
	}
	if err := publish.CheckSecrets(data, o.base, secrets); err != nil {
		fmt.Fprintf(stderr, "ceiling publish comment: the baseline is unusable, comparing nothing: %v\n", err)
		copts.BaseMissing = "the baseline holds a configured secret and was not used"
		return nil, copts
	}
	r, err := publish.Read(data, o.base)
	if err != nil {
		fmt.Fprintf(stderr, "ceiling publish comment: the baseline is unusable, comparing nothing: %v\n", err)
		copts.BaseMissing = "the baseline could not be read (" + err.Error() + ")"
		return nil, copts
	}
	return r, copts
}

// mainChange is the comment's line on a recent change point of main's
// published series (the head's generator and scenario, as a sweep), from
// --history. A history that cannot be read costs the line only: said on
// stderr.
func mainChange(o publishCommentOptions, head *result.Result, stderr io.Writer) (publish.Note, bool) {
	if o.history == "" {
		return publish.Note{}, false
	}
	h, err := readHistory("--history", o.history, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ceiling publish comment: %v; the comment does not look for change points of main\n", err)
		return publish.Note{}, false
	}
	main := publish.EntryOf(head)
	main.Comparison = "" // main publishes sweeps: the series of a sweep
	return publish.MainChangeNote(h, main.Series(), o.mergeBase)
}

// gateLine is the job summary's first line: whether the check passes,
// and why it fails (the comment itself leads with the outcome).
func gateLine(gate error, failOn string) string {
	if gate != nil {
		return fmt.Sprintf("**The check fails** (`--fail-on %s`): %s\n\n", failOn, gate)
	}
	return fmt.Sprintf("**The check passes** (`--fail-on %s`).\n\n", failOn)
}

// writeMarkdown writes md to --out, and to the job summary after the
// gate's line.
func writeMarkdown(o publishCommentOptions, md, gate string) error {
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(md), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if err := publish.AppendSummary(o.summary, gate+md); err != nil {
		return fmt.Errorf("--summary-file: %w", err)
	}
	return nil
}

func markdownPlaces(o publishCommentOptions) string {
	var places []string
	if o.summary != "" {
		places = append(places, "the job summary ("+o.summary+")")
	}
	if o.out != "" {
		places = append(places, strconv.Quote(o.out))
	}
	if len(places) == 0 {
		return "no file (give --out or --summary-file to keep it)"
	}
	return strings.Join(places, " and ")
}
