package runas

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Environ gives the server the user's HOME, USER and LOGNAME in place of
// the harness's; a nil User (no SRV_USER) changes nothing.
func TestEnviron(t *testing.T) {
	r := &User{Name: "nobody", Cred: &syscall.Credential{Uid: 65534, Gid: 65534}, Home: "/nonexistent"}
	env := r.Environ([]string{"PATH=/bin", "HOME=/root", "USER=root", "LOGNAME=root", "X=1"})
	want := []string{"PATH=/bin", "X=1", "HOME=/nonexistent", "USER=nobody", "LOGNAME=nobody"}
	if !slices.Equal(env, want) {
		t.Errorf("Environ = %q, want %q", env, want)
	}
	var none *User
	if got := none.Environ([]string{"HOME=/root"}); !slices.Equal(got, []string{"HOME=/root"}) || none.Credential() != nil {
		t.Errorf("no SRV_USER: Environ %q, Credential %v", got, none.Credential())
	}
	if r.Credential() != r.Cred {
		t.Error("Credential is not the user's")
	}
}

// Resolve refuses root (by name or uid) and a user that does not exist,
// naming the knob; "" is no SRV_USER.
func TestResolve(t *testing.T) {
	if u, err := Resolve(""); u != nil || err != nil {
		t.Errorf(`Resolve("") = %v, %v`, u, err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Skip("no /etc/passwd")
	}
	for name, want := range map[string]string{
		"root":                   "is root (uid 0)",
		"0":                      "is root (uid 0)",
		"ceiling-no-such-user-x": "no such user",
	} {
		u, err := Resolve(name)
		if u != nil || err == nil || !strings.HasPrefix(err.Error(), `SRV_USER (--srv-user) "`+name+`": `) || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q) = %v, %v; want an error saying %q", name, u, err, want)
		}
	}
}
