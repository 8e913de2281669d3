package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// DefaultAPIURL is GitHub's REST API; GitHub Enterprise Server uses
// https://HOST/api/v3/ (what GITHUB_API_URL holds in a workflow).
const DefaultAPIURL = "https://api.github.com/"

// Rate-limit handling defaults.
const (
	DefaultRateRetries = 3
	DefaultMaxWait     = 2 * time.Minute
	// secondaryWait is GitHub's advice for a secondary limit without
	// Retry-After: wait at least a minute.
	secondaryWait = time.Minute
)

// ErrNoPermission is a 403 that is not a rate limit: the token may not
// write comments (the read-only token of a pull request from a fork). The
// caller falls back to the job summary.
var ErrNoPermission = errors.New("the token may not comment on this pull request")

// NewClient is a go-github client for apiURL (DefaultAPIURL when empty),
// authenticated with token when it is not empty.
func NewClient(apiURL, token string, hc *http.Client) (*github.Client, error) {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("--api-url: %q is not an http(s) URL", apiURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c := github.NewClient(hc)
	if token != "" {
		c = c.WithAuthToken(token)
	}
	c.BaseURL = u
	return c, nil
}

// Poster keeps one comment per pull request up to date.
type Poster struct {
	Client *github.Client
	Owner  string
	Repo   string
	PR     int
	Marker string // the hidden marker's text (see Marker, HiddenMarker)
	// Author, when set, is the login whose comment is edited (e.g.
	// "github-actions[bot]"): a marker copied into someone else's comment
	// is then ignored instead of hijacking the update.
	Author string
	// Actions says the poster runs on GitHub Actions, as
	// github-actions[bot] (its GITHUB_TOKEN may not read GET /user):
	// PostChange counts only comments of ActionsBot then, and of the
	// token's own user otherwise (Self).
	Actions bool

	// Token is only used to scrub it from every error message; the client
	// carries it to the API.
	Token string

	RateRetries int           // retries after a rate limit; default DefaultRateRetries
	MaxWait     time.Duration // longest single wait; default DefaultMaxWait
	// Sleep waits d or until ctx ends; tests record the waits instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// Wait reports each rate-limit wait (e.g. to stderr); may be nil.
	Wait func(op string, d time.Duration)
}

// Posted says what Upsert did.
type Posted struct {
	ID      int64
	URL     string
	Created bool // false: an existing comment was edited in place
}

// Upsert edits the comment whose body starts with the hidden marker, on any
// page of the pull request's comments, or creates it.
func (p *Poster) Upsert(ctx context.Context, body string) (Posted, error) {
	hidden := HiddenMarker(p.Marker)
	if !strings.HasPrefix(body, hidden) {
		return Posted{}, fmt.Errorf("comment body does not start with its marker %q", hidden)
	}
	id, err := p.find(ctx, hidden)
	if err != nil {
		return Posted{}, err
	}
	var c *github.IssueComment
	if id != 0 {
		err = p.call(ctx, "edit comment", func() (*github.Response, error) {
			var resp *github.Response
			var err error
			c, resp, err = p.Client.Issues.EditComment(ctx, p.Owner, p.Repo, id, &github.IssueComment{Body: github.String(body)})
			return resp, err
		})
	} else {
		err = p.call(ctx, "create comment", func() (*github.Response, error) {
			var resp *github.Response
			var err error
			c, resp, err = p.Client.Issues.CreateComment(ctx, p.Owner, p.Repo, p.PR, &github.IssueComment{Body: github.String(body)})
			return resp, err
		})
	}
	if err != nil {
		return Posted{}, err
	}
	return Posted{ID: c.GetID(), URL: c.GetHTMLURL(), Created: id == 0}, nil
}

// find walks every page of comments for the first one carrying the marker.
func (p *Poster) find(ctx context.Context, hidden string) (int64, error) {
	c, err := p.findComment(ctx, hidden)
	return c.GetID(), err // 0 for none
}

// findComment is find's comment, or nil when there is none.
func (p *Poster) findComment(ctx context.Context, hidden string) (*github.IssueComment, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	return findMarked(ctx, p, "list comments", hidden, &opts.ListOptions, func() ([]*github.IssueComment, *github.Response, error) {
		return p.Client.Issues.ListComments(ctx, p.Owner, p.Repo, p.PR, opts)
	})
}

// marked is a comment as findMarked reads it (an issue's, a commit's).
type marked interface {
	GetBody() string
	GetUser() *github.User
}

// findMarked walks every page list gives (page set through lo) for the
// first comment whose body starts with hidden, written by p.Author when
// that is set; the zero T when there is none.
func findMarked[T marked](ctx context.Context, p *Poster, op, hidden string, lo *github.ListOptions, list func() ([]T, *github.Response, error)) (T, error) {
	var none T
	for pages := 0; ; pages++ {
		if pages == 1000 {
			return none, errors.New(op + ": more than 1000 pages; giving up")
		}
		var comments []T
		var resp *github.Response
		err := p.call(ctx, op, func() (*github.Response, error) {
			var err error
			comments, resp, err = list()
			return resp, err
		})
		if err != nil {
			return none, err
		}
		for _, c := range comments {
			if p.Author != "" && !strings.EqualFold(c.GetUser().GetLogin(), p.Author) {
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(c.GetBody()), hidden) {
				return c, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return none, nil
		}
		lo.Page = resp.NextPage
	}
}

// call runs one API request, waiting out rate limits a bounded number of
// times; every error it returns is scrubbed of the token.
func (p *Poster) call(ctx context.Context, op string, fn func() (*github.Response, error)) error {
	retries := p.RateRetries
	if retries == 0 {
		retries = DefaultRateRetries
	}
	maxWait := p.MaxWait
	if maxWait == 0 {
		maxWait = DefaultMaxWait
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	for attempt := 0; ; attempt++ {
		_, err := fn()
		if err == nil {
			return nil
		}
		wait, limited := rateLimitWait(err, time.Now())
		if !limited {
			var er *github.ErrorResponse
			if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden {
				return fmt.Errorf("%s: %w (%s)", op, ErrNoPermission, p.redact(er.Message))
			}
			return fmt.Errorf("%s: %s", op, p.redact(err.Error()))
		}
		if attempt >= retries {
			return fmt.Errorf("%s: still rate limited after %d retries: %s", op, retries, p.redact(err.Error()))
		}
		if wait > maxWait {
			return fmt.Errorf("%s: rate limited for %s more, longer than the %s this command waits: %s",
				op, wait.Round(time.Second), maxWait, p.redact(err.Error()))
		}
		if p.Wait != nil {
			p.Wait(op, wait)
		}
		if err := sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s: waiting out a rate limit: %w", op, err)
		}
	}
}

// rateLimitWait says whether err is a rate limit and how long to wait:
// until the primary limit resets, the secondary limit's Retry-After, or a
// 429's Retry-After (go-github does not type 429). Never less than a second.
func rateLimitWait(err error, now time.Time) (time.Duration, bool) {
	var (
		rl *github.RateLimitError
		ab *github.AbuseRateLimitError
		er *github.ErrorResponse
		d  time.Duration
	)
	switch {
	case errors.As(err, &rl):
		d = rl.Rate.Reset.Time.Sub(now)
	case errors.As(err, &ab):
		d = secondaryWait
		if ab.RetryAfter != nil {
			d = *ab.RetryAfter
		}
	case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusTooManyRequests:
		d = secondaryWait
		h := er.Response.Header
		if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil {
			d = time.Duration(s) * time.Second
		} else if s, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			d = time.Unix(s, 0).Sub(now)
		}
	default:
		return 0, false
	}
	return max(d, time.Second), true
}

// redact removes the token from a message that may echo a request.
func (p *Poster) redact(s string) string {
	return Redact(s, p.Token)
}

// Redact replaces every occurrence of token (raw or URL-escaped) in s.
func Redact(s, token string) string {
	if token == "" {
		return s
	}
	for _, t := range []string{token, url.QueryEscape(token), url.PathEscape(token)} {
		s = strings.ReplaceAll(s, t, "[redacted]")
	}
	return s
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
