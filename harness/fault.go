package harness

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/harness/fault"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// FAULT (knob.Fault) adds one resilience point to the sweep: one server
// of a multi-server target is sent SIGKILL (or SIGSTOP) at a fraction of
// the measured window, timed from the window's opening (the generator's
// signal). Its rules (which sweeps may take one, which server each URL is
// on, the verdict) are package harness/fault's; here is what touches the
// processes: the signal sent at its instant, a frozen server continued
// before the point's servers are stopped, each server probed after the
// window.

// faultStage is a point's fault, chosen once for the point (newPoint):
// none (noFault), or FAULT's signal in a resilience point (faultRun).
type faultStage interface {
	// splitArgs are the generator's flags that split its accounting at
	// the fault's fraction.
	splitArgs() []string
	// faulted reports whether server i is the one the fault stops, and
	// sent whether its signal was sent: its exit is then the fault's.
	faulted(i int) bool
	sent() bool
	// start sends the signal at its fraction of the window, which opened
	// at opened (the Clock's), unless ctx ends first.
	start(ctx context.Context, opened time.Time)
	// thaw continues a frozen server before the servers are stopped.
	thaw()
	// record probes each server after the window and judges the point
	// (out.Fault).
	record(ctx context.Context, out *verdict.Outcome)
}

// noFault is a point without a fault: every step does nothing.
type noFault struct{}

func (noFault) splitArgs() []string                      { return nil }
func (noFault) faulted(int) bool                         { return false }
func (noFault) sent() bool                               { return false }
func (noFault) start(context.Context, time.Time)         {}
func (noFault) thaw()                                    {}
func (noFault) record(context.Context, *verdict.Outcome) {}

// faultRun is FAULT in one point, on its servers once they are up.
type faultRun struct {
	spec     knob.Fault
	scenario string
	window   time.Duration
	clock    Clock
	starter  Starter // its WaitReady probes the servers after the window
	set      *serverSet
	server   int // index in set.procs, -1 for none
	split    []string

	mu     sync.Mutex
	rec    result.Fault
	frozen bool
	// started: start ran (the window began); done is closed when its
	// signal was sent or given up. A point that failed before its
	// window has neither, and nothing to wait for.
	started bool
	done    chan struct{}
}

// newFaultRun is f in a point of setup s on set's servers.
func newFaultRun(f knob.Fault, s pointSetup, set *serverSet, clock Clock, starter Starter) *faultRun {
	fr := &faultRun{spec: f, scenario: s.scenario, window: s.window, clock: clock, starter: starter, set: set, server: -1, done: make(chan struct{})}
	if d := fault.Def(s.scenario); d != nil { // fault.Check refused a scenario without one
		fr.split = d.SplitArgs(f.Fraction)
	}
	fr.rec = result.Fault{Kind: f.Kind, Server: f.Server, Fraction: f.Fraction}
	for i, b := range set.booted {
		if b.Name == f.Server {
			fr.server = i
		}
	}
	return fr
}

func (fr *faultRun) splitArgs() []string { return fr.split }

func (fr *faultRun) faulted(i int) bool { return fr.server == i }

// sent reports whether the signal was sent.
func (fr *faultRun) sent() bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return fr.rec.Sent
}

func (fr *faultRun) start(ctx context.Context, opened time.Time) {
	fr.mu.Lock()
	fr.started = true
	fr.mu.Unlock()
	go func() {
		defer close(fr.done)
		at := opened.Add(time.Duration(fr.spec.Fraction * float64(fr.window)))
		select {
		case <-ctx.Done():
			fr.fail("interrupted before the fault")
			return
		case <-fr.clock.After(at.Sub(fr.clock.Now())):
		}
		fr.signal(opened)
	}()
}

// signal sends the fault's signal now, recording when, from opened.
func (fr *faultRun) signal(opened time.Time) {
	if fr.server < 0 || fr.server >= len(fr.set.procs) {
		fr.fail("server %s was not booted", fr.spec.Server)
		return
	}
	srv := fr.set.procs[fr.server]
	if srv.Exited() {
		fr.fail("server %s had already exited (%s)", fr.spec.Server, exitText(srv))
		return
	}
	sig := syscall.SIGKILL
	if fr.spec.Kind == knob.FaultStop {
		sig = syscall.SIGSTOP
	}
	err := srv.Signal(sig)
	sent := fr.clock.Now()
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if err != nil {
		fr.rec.Error = err.Error()
		return
	}
	fr.rec.Sent, fr.rec.AtNs = true, int64(sent.Sub(opened))
	fr.frozen = sig == syscall.SIGSTOP
}

func (fr *faultRun) fail(format string, args ...any) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	fr.rec.Error = fmt.Sprintf(format, args...)
}

// began reports whether the fault's timer was started.
func (fr *faultRun) began() bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return fr.started
}

// thaw waits for a pending signal to be sent or given up (at most the
// rest of the window), and continues a server it froze, so that it can
// be stopped with its grace as any other.
func (fr *faultRun) thaw() {
	if !fr.began() {
		return
	}
	<-fr.done
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if fr.frozen {
		_ = fr.set.procs[fr.server].Signal(syscall.SIGCONT)
		fr.frozen = false
	}
}

// record probes every server after the window, joins each one's
// clients' share by its URL's port, and judges the point (out.Fault).
func (fr *faultRun) record(ctx context.Context, out *verdict.Outcome) {
	if fr.began() {
		select {
		case <-fr.done:
		case <-ctx.Done():
			return
		}
	} else {
		fr.fail("the point ended before its window")
	}
	fr.mu.Lock()
	rec := fr.rec
	fr.mu.Unlock()
	var shares []load.ServerShare
	if out.Load != nil {
		shares = out.Load.Summary.ServerShares()
		rec.SplitAtNs = out.Load.Summary.SplitAtNs()
	}
	owner := fr.set.cluster(fr.scenario).Owners(len(shares))
	for i, s := range fr.set.booted {
		fs := result.FaultServer{Name: s.Name, Faulted: i == fr.server}
		fs.Up, fs.UpReason = fr.serverUp(ctx, i)
		for k, o := range owner {
			if o == i {
				sh := shares[k]
				fs.Share = &sh
			}
		}
		rec.Servers = append(rec.Servers, fs)
	}
	out.Fault = &rec
}

// serverUp says whether server i is alive and its ready probe answers
// within 2 s.
func (fr *faultRun) serverUp(ctx context.Context, i int) (bool, string) {
	if i >= len(fr.set.procs) {
		return false, "not booted"
	}
	srv := fr.set.procs[i]
	if srv.Exited() {
		return false, "exited: " + exitText(srv)
	}
	probe, err := supervise.ParseProbe(target.Expand(fr.set.booted[i].Ready, fr.set.addr))
	if err != nil {
		return false, err.Error()
	}
	if err := fr.starter.WaitReady(ctx, srv, probe, 2*time.Second); err != nil {
		return false, "its ready probe did not answer within 2s"
	}
	return true, ""
}
