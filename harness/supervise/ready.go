package supervise

import (
	"context"
	"fmt"
	"time"
)

// pollEvery is the pause between readiness attempts.
const pollEvery = 50 * time.Millisecond

// attemptTimeout bounds one connect or GET (the last may end after the
// overall timeout: its failure is the one worth reporting).
const attemptTimeout = time.Second

// ExitedError says the process exited before it was ready (WaitReady) or
// while it was needed (Proc.ExitedError). It carries the end of its log for
// the result.
type ExitedError struct {
	Name    string
	Pid     int
	Err     error  // the exit status (*exec.ExitError), nil for status 0
	LogTail string // last TailLines lines of its log
}

func (e *ExitedError) Error() string {
	status := "exit status 0"
	if e.Err != nil {
		status = e.Err.Error()
	}
	return fmt.Sprintf("%s (pid %d) exited (%s)", e.Name, e.Pid, status)
}

func (e *ExitedError) Unwrap() error { return e.Err }

// NotReadyError says the probe did not succeed within the timeout.
type NotReadyError struct {
	Name    string
	Probe   string
	Timeout time.Duration
	Last    error  // the last attempt's failure
	LogTail string // last TailLines lines of its log
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("%s not ready after %s (probe %s): %v", e.Name, e.Timeout, e.Probe, e.Last)
}

func (e *NotReadyError) Unwrap() error { return e.Last }

// ExitedError builds the typed error for a process that has exited (for a
// point whose server died mid-way); nil while it runs.
func (p *Proc) ExitedError() *ExitedError { return exitedError(p) }

func exitedError(p Process) *ExitedError {
	if !p.Exited() {
		return nil
	}
	return &ExitedError{Name: p.Name(), Pid: p.Pid(), Err: p.ExitErr(), LogTail: p.Tail(TailLines)}
}

// WaitReady polls probe every 50 ms until it succeeds, the process exits
// (*ExitedError, at once: no waiting out the timeout), timeout passes
// (*NotReadyError) or ctx ends (its error). A probe that succeeds while the
// process has already exited (another process holds the port) counts as
// an exit.
func WaitReady(ctx context.Context, p Process, probe Probe, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if p.Exited() {
			return exitedError(p)
		}
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := probe.Check(actx, p.LogPath())
		cancel()
		if err == nil {
			if p.Exited() {
				return exitedError(p)
			}
			return nil
		}
		last = err
		if !time.Now().Before(deadline) {
			return &NotReadyError{Name: p.Name(), Probe: probe.String(), Timeout: timeout, Last: last, LogTail: p.Tail(TailLines)}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s to be ready: %w", p.Name(), context.Cause(ctx))
		case <-p.Done():
		case <-time.After(pollEvery):
		}
	}
}

// WaitProbe polls probe every 50 ms, with no process of ours behind it (a
// server someone else runs), until it succeeds, timeout passes
// (*NotReadyError named name) or ctx ends (its error). A log: probe has no
// log to read and fails every attempt.
func WaitProbe(ctx context.Context, name string, probe Probe, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := probe.Check(actx, "")
		cancel()
		if err == nil {
			return nil
		}
		if !time.Now().Before(deadline) {
			return &NotReadyError{Name: name, Probe: probe.String(), Timeout: timeout, Last: err}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s to be ready: %w", name, context.Cause(ctx))
		case <-time.After(pollEvery):
		}
	}
}
