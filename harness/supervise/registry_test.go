package supervise

import (
	"os/exec"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

// KillAll returns with every child it stopped gone from the registry,
// whenever that child's watcher (the goroutine Start leaves waiting on
// its Done) gets to run: a caller reading Procs right after KillAll (as
// TestOnSignalStopsEveryChild does) once counted one still there. Here
// the child has exited and was stopped, and its watcher never runs: the
// interleaving that lost the race, made certain. The child is /bin/true,
// reaped before KillAll; nothing is signalled.
func TestKillAllUnregistersWhatItStopped(t *testing.T) {
	child, err := pinning.Start(exec.Command("/bin/true"))
	if err != nil {
		t.Fatal(err)
	}
	<-child.Done()
	p := &Proc{name: "server", pid: child.Pid(), child: child}
	p.stopOnce.Do(func() {}) // stopped already: Stop has nothing left to do
	r := &Registry{procs: map[*Proc]struct{}{p: {}}}
	if err := r.KillAll(time.Second); err != nil {
		t.Fatal(err)
	}
	if got := r.Procs(); len(got) != 0 {
		t.Errorf("after KillAll, %d children still registered, want none", len(got))
	}
}
