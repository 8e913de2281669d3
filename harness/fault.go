package harness

import (
	"context"
	"fmt"
	"os"
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
// the measured window, timed from the generator's marker. Its rules (which
// sweeps may take one, which server each URL is on, the verdict) are
// package harness/fault's; here is what touches the processes: the
// signal sent at its instant, a frozen server continued before the
// point's servers are stopped, each server probed after the window.

// ErrResilience is returned (with a written result) when a resilience
// point's verdict is not held: the other servers did not keep serving, or
// the evidence is missing. Exit status 1.
var ErrResilience = fmt.Errorf("FAULT: the resilience point did not hold: result written")

// faultRun is FAULT in one point.
type faultRun struct {
	spec   knob.Fault
	server int // index in pointRun.srvs
	// splitArgs are the generator's flags that split its accounting at
	// the fault's fraction (load.FaultDef.SplitArgs).
	splitArgs []string

	mu     sync.Mutex
	rec    result.Fault
	frozen bool
	// started: startFault ran (the window began); done is closed when
	// its signal was sent or given up. A point that failed before its
	// window has neither, and nothing to wait for.
	started bool
	done    chan struct{}
}

// newFaultRun is the point's fault, or nil for a point without one.
func (p *pointRun) newFaultRun() *faultRun {
	f := p.pr.o.Fault
	if f.IsZero() || p.spec.Role != result.RoleResilience {
		return nil
	}
	fr := &faultRun{spec: f, server: -1, done: make(chan struct{})}
	if d := fault.Def(p.pr.o.Point.Scenario); d != nil { // fault.Check refused a scenario without one
		fr.splitArgs = d.SplitArgs(f.Fraction)
	}
	fr.rec = result.Fault{Kind: f.Kind, Server: f.Server, Fraction: f.Fraction}
	for i, s := range p.booted {
		if s.Name == f.Server {
			fr.server = i
		}
	}
	return fr
}

// faulted reports whether server i is the one the fault stops.
func (p *pointRun) faulted(i int) bool { return p.fault != nil && p.fault.server == i }

// startFault sends the signal at the fraction of the window, timed from
// the marker (the generator's window start), unless ctx ends first.
func (p *pointRun) startFault(ctx context.Context) {
	fr := p.fault
	if fr == nil {
		return
	}
	fr.mu.Lock()
	fr.started = true
	fr.mu.Unlock()
	go func() {
		defer close(fr.done)
		fi, err := os.Stat(p.f.marker)
		if err != nil {
			fr.fail("no marker time: %v", err)
			return
		}
		clock := p.pr.clock()
		start := fi.ModTime()
		at := start.Add(time.Duration(fr.spec.Fraction * float64(p.window)))
		select {
		case <-ctx.Done():
			fr.fail("interrupted before the fault")
			return
		case <-clock.After(at.Sub(clock.Now())):
		}
		if fr.server < 0 || fr.server >= len(p.srvs) {
			fr.fail("server %s was not booted", fr.spec.Server)
			return
		}
		srv := p.srvs[fr.server]
		if srv.Exited() {
			fr.fail("server %s had already exited (%s)", fr.spec.Server, exitText(srv))
			return
		}
		sig := syscall.SIGKILL
		if fr.spec.Kind == knob.FaultStop {
			sig = syscall.SIGSTOP
		}
		err = srv.Signal(sig)
		sent := clock.Now()
		fr.mu.Lock()
		defer fr.mu.Unlock()
		if err != nil {
			fr.rec.Error = err.Error()
			return
		}
		fr.rec.Sent, fr.rec.AtNs = true, int64(sent.Sub(start))
		fr.frozen = sig == syscall.SIGSTOP
	}()
}

// sent reports whether the signal was sent.
func (fr *faultRun) sent() bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return fr.rec.Sent
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

// thaw continues a frozen server so that it can be stopped with its
// grace, as any other; it first waits for a pending signal to be sent or
// given up (at most the rest of the window).
func (p *pointRun) thaw() {
	fr := p.fault
	if fr == nil || !fr.began() {
		return
	}
	<-fr.done
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if fr.frozen {
		_ = p.srvs[fr.server].Signal(syscall.SIGCONT)
		fr.frozen = false
	}
}

// recordFault probes every server after the window, joins each one's
// clients' share by its URL's port, and judges the point (out.Fault).
func (p *pointRun) recordFault(ctx context.Context, out *verdict.Outcome) {
	fr := p.fault
	if fr == nil {
		return
	}
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
	owner := p.cluster().Owners(len(shares))
	for i, s := range p.booted {
		fs := result.FaultServer{Name: s.Name, Faulted: i == fr.server}
		fs.Up, fs.UpReason = p.serverUp(ctx, i)
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
func (p *pointRun) serverUp(ctx context.Context, i int) (bool, string) {
	if i >= len(p.srvs) {
		return false, "not booted"
	}
	srv := p.srvs[i]
	if srv.Exited() {
		return false, "exited: " + exitText(srv)
	}
	probe, err := supervise.ParseProbe(target.Expand(p.booted[i].Ready, p.addr))
	if err != nil {
		return false, err.Error()
	}
	if err := p.pr.starter().WaitReady(ctx, srv, probe, 2*time.Second); err != nil {
		return false, "its ready probe did not answer within 2s"
	}
	return true, ""
}

// servedURLs is, for each booted server, the scenario URL (expanded) it
// serves; "" for none.
func (p *pointRun) servedURLs() []string { return p.cluster().Served(p.addr) }

// cluster is the point's target as it booted it.
func (p *pointRun) cluster() fault.Cluster {
	return fault.Cluster{Target: p.target, Scenario: p.pr.o.Point.Scenario, Booted: p.booted}
}
