//go:build e2e && linux

package supervise

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func testDescendantsWalkMatchesScan(t *testing.T) {
	p := start(t, sh(`sh -c 'sleep 60 & sleep 60 & wait' & sleep 60 & echo ready; wait`))
	if err := WaitReady(context.Background(), p, mustProbe(t, "log:ready"), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	// Let the inner shell fork its sleeps.
	var walk []int
	deadline := time.Now().Add(10 * time.Second)
	for len(walk) < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		var err error
		if walk, err = Descendants(p.Pid()); err != nil {
			t.Fatal(err)
		}
	}
	scan, err := descendantsByScan(p.Pid())
	if err != nil {
		t.Fatal(err)
	}
	// p.Pid() is the supervisor: the target shell is one more.
	if diff := cmp.Diff(scan, walk); diff != "" || len(walk) != 5 {
		t.Errorf("walk %v, scan %v: want the same 5 processes (-scan +walk):\n%s", walk, scan, diff)
	}
	if gone, err := Descendants(1 << 30); err != nil || len(gone) != 0 {
		t.Errorf("Descendants(no such pid) = %v, %v; want none, no error", gone, err)
	}
}

// The supervisor forks its target from its main thread, so that
// TargetPid finds it at the head of that thread's children without
// waiting. A supervisor whose main goroutine had moved to another thread
// once forked from there, and TargetPid waited out its 10 s.
func testSupervisorForksFromItsMainThread(t *testing.T) {
	for i := range 5 {
		p := start(t, sh(`echo ready; exec sleep 60`))
		target := p.TargetPid()
		if target == p.Pid() {
			t.Fatalf("run %d: TargetPid is the supervisor %d itself", i, p.Pid())
		}
		if kids := threadChildren(p.Pid(), p.Pid()); len(kids) == 0 || kids[0] != target {
			t.Errorf("run %d: supervisor %d's main thread has children %v, want target %d first", i, p.Pid(), kids, target)
		}
	}
}

// TestProcessTree: what a supervised child's tree is, and what is left of
// it (Linux): the descendants' walk agrees with a scan of /proc, the
// supervisor forks its target from its main thread, and its subreaper,
// cgroup and marker contain the tree however a process leaves it
// (contain_linux_test.go).
func TestProcessTree(t *testing.T) {
	t.Run("descendants walk matches scan", testDescendantsWalkMatchesScan)
	t.Run("supervisor forks from its main thread", testSupervisorForksFromItsMainThread)
	t.Run("parent death takes daemonized tree", testParentDeathTakesDaemonizedTree)
	t.Run("stop reports escaped process", testStopReportsEscapedProcess)
	t.Run("cgroup holds what left the tree", testCgroupHoldsWhatLeftTheTree)
	t.Run("clean leftovers", testCleanLeftovers)
}
