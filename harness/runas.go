package harness

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/ceiling-bench/ceiling/pinning"
)

// RunAs is SRV_USER resolved: the identity a server under test starts
// with when it is not trusted with the harness's own (a pull request's).
// The server's supervisor stays the harness's user, root, so the harness
// still samples, signals and stops the server's whole tree, while the
// server cannot write the harness's files (the work dir, OUT, the
// generator's binary) nor signal the harness, the generator or the
// base's server. docs/targets.md, "A server you do not trust".
type RunAs struct {
	Name string // as /etc/passwd names it
	Cred *syscall.Credential
	Home string // the server's HOME, instead of the harness's
}

// resolveRunAs reads SRV_USER: a user that exists, not root, and a
// harness that may change a child's identity (root, Linux).
func (o *draft) resolveRunAs() error {
	if o.ServerUser == "" {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("SRV_USER (--srv-user) %q: "+format, append([]any{o.ServerUser}, args...)...)
	}
	var u *user.User
	var err error
	if _, numErr := strconv.ParseUint(o.ServerUser, 10, 32); numErr == nil {
		u, err = user.LookupId(o.ServerUser)
	} else {
		u, err = user.Lookup(o.ServerUser)
	}
	if err != nil {
		return bad("no such user (%v)", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return bad("uid %q, gid %q: not numeric", u.Uid, u.Gid)
	}
	if uid == 0 {
		return bad("is root (uid 0): name an unprivileged user, such as nobody")
	}
	if !pinning.Supported {
		return bad("starting a server as another user needs Linux (the supervisor sets its identity)")
	}
	if euid := os.Geteuid(); euid != 0 {
		return bad("the harness runs as uid %d; only a harness running as root may start the server as another user (sudo -E, or the action's input server-user)", euid)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			n, err := strconv.ParseUint(g, 10, 32)
			if err == nil && n != gid && n != 0 {
				cred.Groups = append(cred.Groups, uint32(n))
			}
		}
	}
	o.RunAs = &RunAs{Name: u.Username, Cred: cred, Home: u.HomeDir}
	return nil
}

// environ is a server's environment for this user: HOME, USER and
// LOGNAME are the user's, not the harness's.
func (r *RunAs) environ(env []string) []string {
	if r == nil {
		return env
	}
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME", "USER", "LOGNAME":
		default:
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+r.Home, "USER="+r.Name, "LOGNAME="+r.Name)
}

func (r *RunAs) cred() *syscall.Credential {
	if r == nil {
		return nil
	}
	return r.Cred
}

// stateDir makes the user's {workdir} in a point's directory: "server",
// the user's own, mode 0700.
func (r *RunAs) stateDir(pointDir string) (string, error) {
	dir := filepath.Join(pointDir, "server")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chown(dir, int(r.Cred.Uid), int(r.Cred.Gid)); err != nil {
		return "", fmt.Errorf("SRV_USER %s: %w", r.Name, err)
	}
	return dir, nil
}
