package pinning

import (
	"os/exec"
	"runtime"
)

// Child is a process started by Start.
type Child struct {
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts cmd from a goroutine locked to its own OS thread and keeps
// that thread alive until the child exits, then reaps it (cmd.Wait).
//
// Why: the parent-death signal (SysProcAttr.Pdeathsig) fires when the
// *thread* that forked the child exits, not the process, and the Go runtime
// may end threads (a goroutine that exits while locked takes its thread
// with it). Forking from a thread that outlives the child means the signal
// fires only when this whole process dies.
//
// Do not call cmd.Wait yourself; use Child.Wait or Child.Done.
func Start(cmd *exec.Cmd) (*Child, error) {
	c := &Child{Cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, after the
		// child has been reaped.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.err = cmd.Wait()
		close(c.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}

// Pid is the child's process id (also its process group id with Command).
func (c *Child) Pid() int { return c.Cmd.Process.Pid }

// Done is closed once the child has exited and been reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Wait blocks until the child has exited and returns cmd.Wait's error
// (*exec.ExitError for a non-zero status or a signal). It may be called
// any number of times, from any goroutine.
func (c *Child) Wait() error {
	<-c.done
	return c.err
}
