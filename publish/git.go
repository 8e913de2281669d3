package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
)

// git runs real git in one repository with a clean environment: nothing
// inherited can point it elsewhere (GIT_DIR, GIT_INDEX_FILE from a hook) or
// make it wait for a password (GIT_TERMINAL_PROMPT=0), and messages are in
// English so push rejections can be recognised.
type git struct {
	dir   string
	env   []string // added to the clean environment
	trace io.Writer
}

// cleanEnv keeps what git needs to find itself, its config, credentials
// and the network (proxies, CA certificates), and nothing else.
func cleanEnv() []string {
	env := []string{"GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "LANG=C"}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "SSH_AUTH_SOCK", "GIT_SSH_COMMAND",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// gitError is a failed git command with its stderr.
type gitError struct {
	args   []string
	stdout string // --porcelain puts push rejections here
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return RedactURLs(fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), msg))
}

// urlSecret matches the password of a URL with credentials in it, as a
// remote configured like https://x-access-token:TOKEN@github.com/o/r has.
var urlSecret = regexp.MustCompile(`(://[^/\s:@]*:)[^@\s/]+@`)

// RedactURLs hides the password of every URL in s (a remote may be given
// as one).
func RedactURLs(s string) string { return urlSecret.ReplaceAllString(s, "${1}[redacted]@") }

func (e *gitError) Unwrap() error { return e.err }

func (g *git) run(ctx context.Context, stdin []byte, extraEnv []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.dir
	cmd.Env = append(append(cleanEnv(), g.env...), extraEnv...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if g.trace != nil {
		// A remote given as a URL may carry a token.
		fmt.Fprintf(g.trace, "+ git %s\n", RedactURLs(strings.Join(args, " ")))
	}
	if err := cmd.Run(); err != nil {
		return out.String(), &gitError{args: args, stdout: out.String(), stderr: errb.String(), err: err}
	}
	return strings.TrimSpace(out.String()), nil
}

// exitCode is git's exit status, or -1 when it did not run to an exit.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// remoteTip fetches branch from remote and returns the fetched commit, or ""
// when the remote has no such branch yet (the first publish).
func (g *git) remoteTip(ctx context.Context, remote, branch string) (string, error) {
	out, err := g.run(ctx, nil, nil, "ls-remote", "--heads", remote, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	if out == "" {
		return "", nil
	}
	// A private ref, so that a user's remote-tracking branches are left alone.
	ref := "refs/ceiling-publish/" + branch
	if _, err := g.run(ctx, nil, nil, "fetch", "--quiet", "--no-tags", remote, "+refs/heads/"+branch+":"+ref); err != nil {
		return "", err
	}
	return g.run(ctx, nil, nil, "rev-parse", "--verify", ref+"^{commit}")
}

// show returns the file at path in commit, and whether it exists.
func (g *git) show(ctx context.Context, commit, p string) ([]byte, bool, error) {
	if commit == "" {
		return nil, false, nil
	}
	if _, err := g.run(ctx, nil, nil, "cat-file", "-e", commit+":"+p); err != nil {
		if exitCode(err) == 128 || exitCode(err) == 1 {
			return nil, false, nil
		}
		return nil, false, err
	}
	cmd := exec.CommandContext(ctx, "git", "cat-file", "blob", commit+":"+p)
	cmd.Dir = g.dir
	cmd.Env = append(cleanEnv(), g.env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return nil, false, &gitError{args: cmd.Args[1:], stderr: errb.String(), err: err}
	}
	return out, true, nil
}

// commitFiles writes files (path -> content) on top of parent ("" for none)
// through a private index, so the working tree, the real index and HEAD are
// never touched. It returns the new commit, or "" when the files already
// have exactly this content at parent.
func (g *git) commitFiles(ctx context.Context, parent string, files map[string][]byte, order []string, message string, author []string) (string, error) {
	idx, err := os.CreateTemp("", "ceiling-publish-index-*")
	if err != nil {
		return "", fmt.Errorf("private index: %w", err)
	}
	idx.Close()
	os.Remove(idx.Name()) // git wants to create it; an empty file is "corrupt"
	defer os.Remove(idx.Name())
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}

	if parent != "" {
		if _, err := g.run(ctx, nil, env, "read-tree", parent); err != nil {
			return "", err
		}
	}
	for _, p := range order {
		blob, err := g.run(ctx, files[p], nil, "hash-object", "-w", "--stdin")
		if err != nil {
			return "", err
		}
		if _, err := g.run(ctx, nil, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p); err != nil {
			return "", err
		}
	}
	tree, err := g.run(ctx, nil, env, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", tree, "-F", "-"}
	if parent != "" {
		ptree, err := g.run(ctx, nil, nil, "rev-parse", parent+"^{tree}")
		if err != nil {
			return "", err
		}
		if ptree == tree {
			return "", nil
		}
		args = append(args, "-p", parent)
	}
	return g.run(ctx, []byte(message), author, args...)
}

// isAncestor reports whether a is an ancestor of b; known is false when git
// cannot tell (either is not a commit it has).
func (g *git) isAncestor(ctx context.Context, a, b string) (yes, known bool) {
	_, err := g.run(ctx, nil, nil, "merge-base", "--is-ancestor", a, b)
	switch {
	case err == nil:
		return true, true
	case exitCode(err) == 1:
		return false, true
	}
	return false, false
}

// rejected reports whether a push failed because the remote moved on.
func rejected(err error) bool {
	var ge *gitError
	if !errors.As(err, &ge) {
		return false
	}
	s := ge.stdout + ge.stderr
	return strings.Contains(s, "[rejected]") || strings.Contains(s, "non-fast-forward") ||
		strings.Contains(s, "fetch first") || strings.Contains(s, "stale info") ||
		strings.Contains(s, "cannot lock ref")
}

// cleanRepoPath checks a path given for a file inside the repository.
func cleanRepoPath(flag, p string) (string, error) {
	c := path.Clean(strings.ReplaceAll(p, "\\", "/"))
	if p == "" || path.IsAbs(c) || c == "." || c == ".." || strings.HasPrefix(c, "../") || strings.HasPrefix(c, ".git/") || c == ".git" {
		return "", fmt.Errorf("%s: %q is not a path inside the repository", flag, p)
	}
	return c, nil
}
