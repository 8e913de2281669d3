//go:build e2e && linux

package pinning

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// offMainEnv makes a supervisor exec'ed from this test binary push its
// main goroutine off the main thread before Init.
const offMainEnv = "PINNING_TEST_OFF_MAIN"

func init() {
	beforeInit = func() {
		if os.Getenv(offMainEnv) != "" && len(os.Args) > 2 && os.Args[1] == superviseArg {
			leaveMainThread()
		}
	}
}

// leaveMainThread does what the runtime may do to an unlocked main
// goroutine at any time: it moves it to another thread. Another
// goroutine takes the main thread and keeps it (with GOMAXPROCS=1 it runs
// there when main waits for it); main then resumes elsewhere. A main
// goroutine locked to its thread (pinning's init) cannot be moved, and
// nothing else gets the main thread.
func leaveMainThread() {
	for range 10 {
		onMain := make(chan bool)
		go func() {
			runtime.LockOSThread()
			isMain := unix.Gettid() == unix.Getpid()
			onMain <- isMain
			if isMain {
				select {} // hold it
			}
		}()
		if <-onMain {
			return
		}
	}
}

// The supervisor forks its target from its main thread, whatever thread
// its main goroutine was on before: the harness finds the target among
// that thread's children (supervise.Proc.TargetPid). Once the runtime
// moved the unlocked main goroutine during start-up, and the target was
// forked from another thread (a test waited 10 s for it in vain). Here
// the move is forced in the supervisor, so it is not left to chance. A
// real supervisor process: this test is in the e2e lane.
func TestSupervisorForksFromItsMainThread(t *testing.T) {
	env := append(os.Environ(), offMainEnv+"=1", "GOMAXPROCS=1")
	c, target, _ := startSupervised(t, Spec{Env: env}, `echo $$; exec sleep 60`)
	sup := strconv.Itoa(c.Pid())
	b, err := os.ReadFile("/proc/" + sup + "/task/" + sup + "/children")
	if err != nil {
		t.Fatal(err)
	}
	if kids := strings.Fields(string(b)); !slices.Contains(kids, strconv.Itoa(target)) {
		t.Errorf("the supervisor's main thread has children %q, want its target %d", kids, target)
	}
	if b, _ := os.ReadFile("/proc/" + sup + "/comm"); strings.TrimSpace(string(b)) != SupervisorComm {
		t.Errorf("the supervisor is named %q, want %q", b, SupervisorComm)
	}
	_ = unix.Kill(c.Pid(), unix.SIGTERM)
	_ = waitChild(t, c)
}
