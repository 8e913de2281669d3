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
	"sync/atomic"
	"time"
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

// lockContention reports whether git failed because another git process
// held a lock in the same repository (a ref, packed-refs, shallow, the
// index): "cannot lock ref", "Unable to create '....lock': File exists".
// That failure is transient, unlike every other one, so it is retried.
// Git has no exit status of its own for it (it exits 128 or 1, as for
// everything else), so the check is on the exit status and the stable,
// untranslated (LC_ALL=C) prefixes of its messages.
func lockContention(err error) bool {
	var ge *gitError
	if !errors.As(err, &ge) {
		return false
	}
	if c := exitCode(ge.err); c != 128 && c != 1 {
		return false
	}
	s := ge.stderr
	return strings.Contains(s, "cannot lock ref") ||
		(strings.Contains(s, "Unable to create '") && strings.Contains(s, ".lock': File exists")) ||
		strings.Contains(s, "Another git process seems to be running")
}

// Bounds of the retry on lock contention: the other process holds a lock
// for the length of one fetch or ref update, milliseconds on loopback,
// seconds on a slow network.
const (
	lockRetries  = 20
	lockBackoff  = 25 * time.Millisecond
	lockMaxSleep = time.Second
)

// retryLocked runs git like run, again after a short, growing pause while
// it fails on lock contention (lockContention), at most lockRetries times.
func (g *git) retryLocked(ctx context.Context, extraEnv []string, args ...string) (string, error) {
	sleep := lockBackoff
	for i := 0; ; i++ {
		out, err := g.run(ctx, nil, extraEnv, args...)
		if err == nil || !lockContention(err) || i == lockRetries {
			return out, err
		}
		if g.trace != nil {
			fmt.Fprintf(g.trace, "git: another git process holds a lock in %s; retrying in %s (%d of %d)\n", g.dir, sleep, i+1, lockRetries)
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(sleep):
		}
		sleep = min(2*sleep, lockMaxSleep)
	}
}

// tempRefSeq numbers the private refs of one process.
var tempRefSeq atomic.Uint64

// remoteTip fetches branch from remote and returns the fetched commit, or ""
// when the remote has no such branch yet (the first publish).
//
// The fetch lands in a private ref (so that a user's remote-tracking
// branches are left alone) that is unique to this process and call:
// publishes running at once from the same checkout would otherwise all
// update one ref and all but one fail with "cannot lock ref". The ref is
// deleted again once the tip's objects are referenced by name (the
// returned SHA); what the fetch brought stays in the object store.
// FETCH_HEAD is not written, for the same reason.
func (g *git) remoteTip(ctx context.Context, remote, branch string) (string, error) {
	out, err := g.retryLocked(ctx, nil, "ls-remote", "--heads", "--", remote, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	if out == "" {
		return "", nil
	}
	ref := fmt.Sprintf("refs/ceiling-publish/%d-%d-%d/%s", os.Getpid(), time.Now().UnixNano(), tempRefSeq.Add(1), branch)
	defer func() {
		// Best effort: a ref left behind by a failed delete costs nothing
		// but a line in `git for-each-ref`.
		if _, err := g.retryLocked(context.WithoutCancel(ctx), nil, "update-ref", "-d", "--", ref); err != nil && g.trace != nil {
			fmt.Fprintf(g.trace, "git: could not delete the private ref %s: %v\n", ref, err)
		}
	}()
	if _, err := g.retryLocked(ctx, nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", remote, "+refs/heads/"+branch+":"+ref); err != nil {
		return "", err
	}
	return g.run(ctx, nil, nil, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
}

// fullSHA matches a full commit name: 40 hex digits (SHA-1) or 64
// (SHA-256), lower case as git prints them.
var fullSHA = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// IsFullSHA reports whether ref is a full, lower-case hex commit name,
// the only form of meta.git_ref that publish accepts: a branch name, HEAD,
// an abbreviation or anything starting with "-" is refused before git
// sees it.
func IsFullSHA(ref string) bool { return fullSHA.MatchString(ref) }

// hasCommit reports whether sha (a full SHA, IsFullSHA) names a commit in
// the repository. A missing object, or an object that is not a commit,
// is false; a git that does not run is an error.
func (g *git) hasCommit(ctx context.Context, sha string) (bool, error) {
	if !IsFullSHA(sha) {
		return false, nil
	}
	_, err := g.run(ctx, nil, nil, "cat-file", "-e", "--end-of-options", sha+"^{commit}")
	switch c := exitCode(err); {
	case err == nil:
		return true, nil
	case c == 1 || c == 128:
		return false, nil
	}
	return false, err
}

// show returns the file at path in commit, and whether it exists.
func (g *git) show(ctx context.Context, commit, p string) ([]byte, bool, error) {
	if commit == "" {
		return nil, false, nil
	}
	if !IsFullSHA(commit) {
		return nil, false, fmt.Errorf("git show: %q is not a full commit SHA", commit)
	}
	if _, err := g.run(ctx, nil, nil, "cat-file", "-e", "--end-of-options", commit+":"+p); err != nil {
		if exitCode(err) == 128 || exitCode(err) == 1 {
			return nil, false, nil
		}
		return nil, false, err
	}
	cmd := exec.CommandContext(ctx, "git", "cat-file", "blob", "--end-of-options", commit+":"+p)
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

	if parent != "" && !IsFullSHA(parent) {
		return "", fmt.Errorf("git commit: parent %q is not a full commit SHA", parent)
	}
	if parent != "" {
		if _, err := g.run(ctx, nil, env, "read-tree", "--end-of-options", parent); err != nil {
			return "", err
		}
	}
	for _, p := range order {
		blob, err := g.run(ctx, files[p], nil, "hash-object", "-w", "--stdin")
		if err != nil {
			return "", err
		}
		if _, err := g.run(ctx, nil, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p); err != nil { // one argument: p cannot become an option
			return "", err
		}
	}
	tree, err := g.run(ctx, nil, env, "write-tree")
	if err != nil {
		return "", err
	}
	// commit-tree takes no "--"; tree and parent are full SHAs (checked
	// above, and write-tree prints one), so neither can read as an option.
	if !IsFullSHA(tree) {
		return "", fmt.Errorf("git write-tree: printed %q, not a tree SHA", tree)
	}
	args := []string{"commit-tree", tree, "-F", "-"}
	if parent != "" {
		ptree, err := g.run(ctx, nil, nil, "rev-parse", "--verify", "--end-of-options", parent+"^{tree}")
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
// cannot tell (either is not a full SHA, or not a commit it has).
func (g *git) isAncestor(ctx context.Context, a, b string) (yes, known bool) {
	if !IsFullSHA(a) || !IsFullSHA(b) {
		return false, false
	}
	_, err := g.run(ctx, nil, nil, "merge-base", "--is-ancestor", "--end-of-options", a, b)
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
