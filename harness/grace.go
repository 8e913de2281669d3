package harness

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
)

// MaxInterruptGrace bounds the SIGTERM-to-SIGKILL grace of every stop
// after an interrupt, whatever the target's stop_grace: CI cancellation
// gives a job seconds, and the partial result must be written by then.
const MaxInterruptGrace = 2 * time.Second

// InterruptGrace is the grace a stop gets once the sweep was interrupted:
// the target's stop_grace, at most MaxInterruptGrace.
func InterruptGrace(stopGrace time.Duration) time.Duration {
	return min(stopGrace, MaxInterruptGrace)
}

// stopProc is proc.Stop(grace), except that an interrupt arriving while
// it waits out the grace bounds the wait to InterruptGrace from then on,
// then kills the tree (Proc.KillTree): a stop already begun cannot be given
// a shorter grace, and a server ignoring SIGTERM with a long stop_grace
// would otherwise hold the interrupted harness for all of it. It reports
// whether the process had to be SIGKILLed.
func stopProc(ctx context.Context, clock Clock, proc supervise.Process, grace time.Duration) (escalated bool, err error) {
	done := make(chan error, 1)
	go func() { done <- proc.Stop(grace) }()
	select {
	case err = <-done:
		return proc.Escalated(), err
	case <-ctx.Done():
	}
	select {
	case err = <-done:
		return proc.Escalated(), err
	case <-clock.After(InterruptGrace(grace)):
	}
	// Stop, still waiting, sees the exit and sweeps.
	proc.KillTree()
	return true, <-done
}
