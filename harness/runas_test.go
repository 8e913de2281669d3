package harness

import (
	"syscall"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/result"
)

// A two-arm sweep runs only the head's servers as SRV_USER: the base's
// code is trusted, and as the harness's user it is out of the head's
// reach (a server may signal its own user's processes).
func TestRunAsOnlyTheHead(t *testing.T) {
	r := &runas.User{Name: "nobody", Cred: &syscall.Credential{Uid: 65534, Gid: 65534}, Home: "/nonexistent"}
	e := &procEnv{plan: &Plan{RunAs: r}}
	for arm, want := range map[string]*runas.User{result.ArmBase: nil, result.ArmHead: r, "": r} {
		if got := e.setup(PointSpec{Arm: arm}).runAs; got != want {
			t.Errorf("arm %q: runAs %v, want %v", arm, got, want)
		}
	}
	if got := (&procEnv{plan: &Plan{}}).setup(PointSpec{}).runAs; got != nil || got.Credential() != nil {
		t.Errorf("no SRV_USER: runAs %v", got)
	}
}
