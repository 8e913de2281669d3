package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/publish"
)

// ---- publish stale

const publishStaleUsage = `usage: ceiling publish stale --repo owner/name --pr N --commit SHA [flags]

Marks the pull request's comparison comment stale: the sweep of --commit
ended before writing its result, so the comment (found by its hidden
marker) still shows an earlier push. An alert goes above the old
comparison, which is kept; marking again replaces the alert. No marked
comment: nothing to mark, exit 0. No token, or a token that may not
comment (a fork): says so, exit 0.

flags:
`

type publishStaleOptions struct {
	repo        string
	owner, name string
	pr          int
	note        publish.StaleNote
	apiURL      string
	marker      string
	author      string
	tokenEnv    string
	maxWait     time.Duration
	rateRetries int
}

// defaultGenerator is the generator whose comment is marked by default:
// the built-in ceiling load, as the sweep names it.
const defaultGenerator = "ceiling-load"

func newPublishStaleFlags(o *publishStaleOptions, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling publish stale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, publishStaleUsage); printFlags(fs, stderr) }
	apiURL := os.Getenv("GITHUB_API_URL")
	if apiURL == "" {
		apiURL = publish.DefaultAPIURL
	}
	fs.StringVar(&o.repo, "repo", os.Getenv("GITHUB_REPOSITORY"), "owner/name of the repository")
	fs.IntVar(&o.pr, "pr", 0, "pull request number; required")
	fs.StringVar(&o.note.Commit, "commit", "", "the pushed commit whose sweep wrote no result (hex); required")
	fs.StringVar(&o.note.Reason, "reason", "", "why, in a few words, shown escaped (default \""+publish.DefaultStaleReason+"\")")
	fs.StringVar(&o.note.RunURL, "run-url", "", "link to the run that failed (https://…/actions/runs/ID)")
	fs.StringVar(&o.apiURL, "api-url", apiURL, "GitHub REST API base URL (GitHub Enterprise: https://HOST/api/v3)")
	fs.StringVar(&o.marker, "marker", publish.Marker(defaultGenerator), "hidden marker of the comment to mark (what publish comment used)")
	fs.StringVar(&o.author, "comment-author", "", "only mark a marker comment written by this login (e.g. github-actions[bot]); default any author")
	fs.StringVar(&o.tokenEnv, "token-env", "GITHUB_TOKEN", "environment variable holding the token (never printed)")
	fs.DurationVar(&o.maxWait, "max-wait", publish.DefaultMaxWait, "longest wait for one rate limit to reset")
	fs.IntVar(&o.rateRetries, "rate-retries", publish.DefaultRateRetries, "retries of one request after a rate limit")
	return fs
}

func (o *publishStaleOptions) check(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usagef("ceiling publish stale: unexpected argument %q", fs.Arg(0))
	}
	owner, name, ok := strings.Cut(o.repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return usagef("--repo: %q, want owner/name (default $GITHUB_REPOSITORY)", o.repo)
	}
	o.owner, o.name = owner, name
	if o.pr <= 0 {
		return usagef("--pr: %d, want the pull request's number", o.pr)
	}
	if err := o.note.Check(); err != nil {
		var ne *publish.StaleNoteError
		if errors.As(err, &ne) && ne.Field == "run URL" {
			return usagef("--run-url: %w", err)
		}
		return usagef("--commit: %w", err)
	}
	if err := publish.CheckMarker(o.marker); err != nil {
		return usageError{err}
	}
	if o.maxWait <= 0 {
		return usagef("--max-wait: %s, want a positive duration", o.maxWait)
	}
	if o.rateRetries < 1 {
		return usagef("--rate-retries: %d, want at least 1", o.rateRetries)
	}
	if _, err := publish.NewClient(o.apiURL, "", nil); err != nil {
		return usageError{err}
	}
	return nil
}

func runPublishStale(args []string, stdout, stderr io.Writer) error {
	var o publishStaleOptions
	fs := newPublishStaleFlags(&o, stderr)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if err := o.check(fs); err != nil {
		return err
	}
	token := os.Getenv(o.tokenEnv)
	if token == "" {
		fmt.Fprintf(stderr, "ceiling publish stale: $%s is empty, so the comment on %s#%d is not marked stale\n", o.tokenEnv, o.repo, o.pr)
		return nil
	}
	client, err := publish.NewClient(o.apiURL, token, nil)
	if err != nil {
		return usageError{err}
	}
	p := &publish.Poster{
		Client: client, Owner: o.owner, Repo: o.name, PR: o.pr,
		Marker: o.marker, Author: o.author, Token: token, RateRetries: o.rateRetries, MaxWait: o.maxWait,
		Wait: func(op string, d time.Duration) {
			fmt.Fprintf(stderr, "ceiling publish stale: %s rate limited; waiting %s\n", op, d)
		},
	}
	ctx, stop := signalContext()
	defer stop()
	posted, found, err := p.MarkStale(ctx, o.note)
	switch {
	case errors.Is(err, publish.ErrNoPermission):
		fmt.Fprintf(stderr, "ceiling publish stale: %v\nthe comment is not marked stale (a pull request from a fork gets a read-only token)\n", err)
		return nil
	case err != nil:
		return fmt.Errorf("publish stale: %w", err)
	case !found:
		fmt.Fprintf(stdout, "%s#%d has no comment marked %q: nothing to mark stale\n", o.repo, o.pr, o.marker)
		return nil
	}
	fmt.Fprintf(stdout, "marked comment %d on %s#%d stale (no result for %s) %s\n", posted.ID, o.repo, o.pr, o.note.Commit, posted.URL)
	return nil
}
