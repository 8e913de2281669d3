//go:build linux

package supervise

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	line := "4242 (we ird) (x)) S 17 4242 17 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	got, err := parseStat(4242, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := ProcStat{Pid: 4242, Comm: "we ird) (x)", PPid: 17, PGrp: 4242, State: 'S', Flags: 4194560, UTicks: 5, STicks: 3, StartTicks: 987654, Processor: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseStat(1, []byte("1 (init S 0")); err == nil {
		t.Error("malformed stat accepted")
	}
}

func TestReadStatSelf(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPid != os.Getppid() || st.StartTicks == 0 {
		t.Errorf("ReadStat(self) = %+v, want ppid %d and a start time", st, os.Getppid())
	}
}

func TestDescendantsWalkMatchesScan(t *testing.T) {
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
		if walk, err = Descendants(p.Pid); err != nil {
			t.Fatal(err)
		}
	}
	scan, err := descendantsByScan(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// p.Pid is the supervisor: the target shell is one more.
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
func TestSupervisorForksFromItsMainThread(t *testing.T) {
	for i := range 5 {
		p := start(t, sh(`echo ready; exec sleep 60`))
		target := p.TargetPid()
		if target == p.Pid {
			t.Fatalf("run %d: TargetPid is the supervisor %d itself", i, p.Pid)
		}
		if kids := threadChildren(p.Pid, p.Pid); len(kids) == 0 || kids[0] != target {
			t.Errorf("run %d: supervisor %d's main thread has children %v, want target %d first", i, p.Pid, kids, target)
		}
	}
}
