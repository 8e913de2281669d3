package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// ApplyOptions bound the stages of Apply.
type ApplyOptions struct {
	RunningTimeout time.Duration // until the coordinator and N agents run
	DoneTimeout    time.Duration // until the run ends (0: do not wait for it)
	Keep           bool          // leave the objects behind on success
	Logs           io.Writer     // the coordinator's log once it ended; may be nil
}

// Apply is `ceiling k8s apply`: submit, wait until everything runs, wait
// until the run is over, copy the coordinator's log, and clean up. Cleanup
// runs on every way out (an error, ctx cancelled) unless Keep is set and
// all went well; its own error is joined to the run's.
func (r *Runner) Apply(ctx context.Context, o Objects, opt ApplyOptions) (err error) {
	defer func() {
		if opt.Keep && err == nil {
			return
		}
		if cerr := r.Cleanup(o); cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
		}
	}()
	if err := r.Submit(ctx, o); err != nil {
		return err
	}
	if err := r.WaitRunning(ctx, o, opt.RunningTimeout); err != nil {
		return err
	}
	r.logf("all running")
	if opt.DoneTimeout <= 0 {
		return nil
	}
	done := r.WaitDone(ctx, o, opt.DoneTimeout)
	if o.Coordinator != nil && opt.Logs != nil {
		var pe *PodError
		if done == nil || errors.As(done, &pe) {
			if err := r.Logs(ctx, o.Coordinator.Name, opt.Logs); err != nil {
				return errors.Join(done, err)
			}
		}
	}
	return done
}
