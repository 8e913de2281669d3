package publish

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-github/v62/github"
)

// Where a change point found on a push is posted (ceiling publish commit
// --change-comment): nowhere (the default: the job summary leads with
// it), as a comment on the first commit after the change, or as a
// comment on the one open issue labelled PerformanceLabel.
const (
	ChangeCommentNone   = "none"
	ChangeCommentCommit = "commit"
	ChangeCommentIssue  = "issue"
)

// shaRE is a full commit id: what a commit comment can be posted on.
var shaRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// PerformanceLabel labels the issue that change points are posted on.
const PerformanceLabel = "performance"

// PerformanceIssueTitle is the title of that issue when none is open.
const PerformanceIssueTitle = "Performance: change points on the published history"

// ActionsBot is the login of what comments with a workflow's GITHUB_TOKEN.
const ActionsBot = "github-actions[bot]"

// Self is the login the poster's comments are written by: ActionsBot on
// Actions, else the token's user (GET /user). An error when neither is
// known: a marker then cannot be told from a copy, and nothing is posted.
func (p *Poster) Self(ctx context.Context) (string, error) {
	if p.Actions {
		return ActionsBot, nil
	}
	var u *github.User
	err := p.call(ctx, "read the token's user", func() (*github.Response, error) {
		var resp *github.Response
		var err error
		u, resp, err = p.Client.Users.Get(ctx, "")
		return resp, err
	})
	if err != nil {
		return "", fmt.Errorf("who posts (to count only its own comments): %w", err)
	}
	if u.GetLogin() == "" {
		return "", fmt.Errorf("who posts (to count only its own comments): GET /user gave no login")
	}
	return u.GetLogin(), nil
}

// CheckChangeComment refuses a --change-comment value that is not one of
// the three.
func CheckChangeComment(v string) error {
	switch v {
	case ChangeCommentNone, ChangeCommentCommit, ChangeCommentIssue:
		return nil
	}
	return &OptionError{fmt.Errorf("--change-comment: %q, want none, commit or issue", v)}
}

// PostChange posts c's comment where says, once: a comment already
// carrying its marker (a re-run of the same push, a retried job) is left
// as it is. p's PR is not used; for ChangeCommentIssue it is set to the
// issue's number.
//
// Only the poster's own comments count (the one rule of both places): a
// marker is a digest of public data, so anyone's comment may start with
// it, and one that counted would suppress the post. p.Author when set,
// else Self's login.
func (p *Poster) PostChange(ctx context.Context, where string, c Change) (Posted, error) {
	if p.Author == "" {
		login, err := p.Self(ctx)
		if err != nil {
			return Posted{}, err
		}
		own := *p
		own.Author = login
		p = &own
	}
	body := RenderChangeComment(c)
	switch where {
	case ChangeCommentCommit:
		return p.commentOnCommit(ctx, c.After.GitRef, body)
	case ChangeCommentIssue:
		return p.commentOnIssue(ctx, body)
	}
	return Posted{}, CheckChangeComment(where)
}

// commentOnCommit comments on commit sha unless a comment on it carries
// body's marker.
func (p *Poster) commentOnCommit(ctx context.Context, sha, body string) (Posted, error) {
	if !shaRE.MatchString(sha) {
		return Posted{}, fmt.Errorf("the first entry after the change measured %q, not a commit id: no commit to comment on", text(sha))
	}
	hidden, _, _ := strings.Cut(body, "\n")
	opts := &github.ListOptions{PerPage: 100}
	found, err := findMarked(ctx, p, "list commit comments", hidden, opts, func() ([]*github.RepositoryComment, *github.Response, error) {
		return p.Client.Repositories.ListCommitComments(ctx, p.Owner, p.Repo, sha, opts)
	})
	if err != nil || found != nil {
		return Posted{ID: found.GetID(), URL: found.GetHTMLURL()}, err
	}
	var c *github.RepositoryComment
	err = p.call(ctx, "create commit comment", func() (*github.Response, error) {
		var resp *github.Response
		var err error
		c, resp, err = p.Client.Repositories.CreateComment(ctx, p.Owner, p.Repo, sha, &github.RepositoryComment{Body: github.String(body)})
		return resp, err
	})
	if err != nil {
		return Posted{}, err
	}
	return Posted{ID: c.GetID(), URL: c.GetHTMLURL(), Created: true}, nil
}

// commentOnIssue comments on the oldest open issue labelled
// PerformanceLabel (opened when there is none) unless a comment on it
// carries body's marker.
func (p *Poster) commentOnIssue(ctx context.Context, body string) (Posted, error) {
	var issues []*github.Issue
	err := p.call(ctx, "list issues", func() (*github.Response, error) {
		var resp *github.Response
		var err error
		issues, resp, err = p.Client.Issues.ListByRepo(ctx, p.Owner, p.Repo, &github.IssueListByRepoOptions{
			State: "open", Labels: []string{PerformanceLabel}, Sort: "created", Direction: "asc",
			ListOptions: github.ListOptions{PerPage: 10},
		})
		return resp, err
	})
	if err != nil {
		return Posted{}, err
	}
	number := 0
	for _, is := range issues {
		if !is.IsPullRequest() {
			number = is.GetNumber()
			break
		}
	}
	if number == 0 {
		var is *github.Issue
		err := p.call(ctx, "open issue", func() (*github.Response, error) {
			var resp *github.Response
			var err error
			is, resp, err = p.Client.Issues.Create(ctx, p.Owner, p.Repo, &github.IssueRequest{
				Title: github.String(PerformanceIssueTitle), Labels: &[]string{PerformanceLabel},
				Body: github.String("Change points found on the published benchmark history by `ceiling publish commit --change-comment issue`, one comment each."),
			})
			return resp, err
		})
		if err != nil {
			return Posted{}, err
		}
		number = is.GetNumber()
	}
	p.PR = number
	hidden, _, _ := strings.Cut(body, "\n")
	found, err := p.findComment(ctx, hidden)
	if err != nil || found != nil {
		return Posted{ID: found.GetID(), URL: found.GetHTMLURL()}, err
	}
	var c *github.IssueComment
	err = p.call(ctx, "create comment", func() (*github.Response, error) {
		var resp *github.Response
		var err error
		c, resp, err = p.Client.Issues.CreateComment(ctx, p.Owner, p.Repo, number, &github.IssueComment{Body: github.String(body)})
		return resp, err
	})
	if err != nil {
		return Posted{}, err
	}
	return Posted{ID: c.GetID(), URL: c.GetHTMLURL(), Created: true}, nil
}
