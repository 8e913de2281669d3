package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// ErrShuttingDown is returned by Start once the registry was closed by a
// signal (OnSignal): no new child may boot while the harness winds down.
var ErrShuttingDown = errors.New("shutting down: no new children")

// ErrInterrupted is the cause of the context OnSignal returns when a signal
// arrived; the received signal is named in the wrapping error.
var ErrInterrupted = errors.New("interrupted")

// Registry is the set of live children, so that a signal can stop them all.
type Registry struct {
	mu     sync.Mutex
	procs  map[*Proc]struct{}
	closed bool
}

// Live holds every Proc that Start started and that has not exited yet.
var Live = &Registry{}

// start runs fork under the lock and registers the Proc it produced until
// it exits.
func (r *Registry) start(p *Proc, fork func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrShuttingDown
	}
	if err := fork(); err != nil {
		return err
	}
	if r.procs == nil {
		r.procs = make(map[*Proc]struct{})
	}
	r.procs[p] = struct{}{}
	go func() {
		<-p.Done()
		r.remove(p)
	}()
	return nil
}

func (r *Registry) remove(p *Proc) {
	r.mu.Lock()
	delete(r.procs, p)
	r.mu.Unlock()
}

// Procs returns the live children.
func (r *Registry) Procs() []*Proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Proc, 0, len(r.procs))
	for p := range r.procs {
		out = append(out, p)
	}
	return out
}

// Close makes every later Start fail with ErrShuttingDown.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}

// reopen undoes Close (tests).
func (r *Registry) reopen() {
	r.mu.Lock()
	r.closed = false
	r.mu.Unlock()
}

// KillAll stops every live child concurrently (Stop(grace): SIGTERM to its
// group, SIGKILL after grace) and returns once all are gone, with their
// errors joined.
func (r *Registry) KillAll(grace time.Duration) error {
	procs := r.Procs()
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.Stop(grace)
			// Now, not when the watcher above gets to run: a caller
			// reading Procs after KillAll must see none that exited.
			if p.Exited() {
				r.remove(p)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// KillAll stops every child in Live; see Registry.KillAll.
func KillAll(grace time.Duration) error { return Live.KillAll(grace) }

// OnSignal returns a context that is cancelled (cause wrapping
// ErrInterrupted) at the first SIGINT or SIGTERM. On that signal it closes
// Live (no new child boots), cancels the context so the harness stops its
// loop and writes what it has, and stops every live child with grace.
// After the first signal the default action is restored, so a second
// Ctrl-C kills the harness outright (and the parent-death signal takes the
// children with it).
//
// Call stop when done (defer it): it stops listening and, if a signal
// came, waits until the children are gone.
func OnSignal(parent context.Context, grace time.Duration) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			Live.Close()
			cancel(fmt.Errorf("%w by %v", ErrInterrupted, s))
			_ = Live.KillAll(grace)
		case <-quit:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(quit)
			<-finished
			cancel(context.Canceled)
		})
	}
}
