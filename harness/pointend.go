package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/secrets"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// stop stops the generator, removes the headroom cgroup, then stops the
// servers and waits for their ports (stopServers), each with grace; or,
// on a warm arm, freezes them again (park) and leaves them up. It returns
// the sides that had to be SIGKILLed, the processes that escaped
// containment (killed by Stop), and the servers' stop error (the
// generator's does not unmake a point whose JSON was read). An interrupt
// (ctx) cuts a long grace short: see stopProc.
func (p *pointRun) stop(ctx context.Context, grace time.Duration) (escalated []string, escaped []result.EscapedProcess, err error) {
	p.thaw()
	if p.side != nil {
		// The generator ("generator"), or each agent ("agent 2").
		for _, g := range p.side.Procs() {
			if esc, _ := stopProc(ctx, p.pr.clock(), g, grace); esc {
				escalated = append(escalated, g.Name())
			}
			escaped = append(escaped, escapedOf(g)...)
		}
		p.side.Release()
	}
	if p.throttle != nil {
		_ = p.throttle.Remove()
	}
	if p.live != nil {
		p.armDown, err = p.park()
		return escalated, escaped, err
	}
	clock := p.pr.clock()
	start := clock.Now()
	esc, esd, err := p.stopServers(ctx, grace)
	if len(p.srvs) > 0 {
		p.stopCost = clock.Now().Sub(start)
	}
	return append(escalated, esc...), append(escaped, esd...), err
}

// stopServers stops the servers in reverse order, each with its own
// grace (a cluster's later nodes were started last), then waits for
// every port they named to be free. The first stop error is the
// point's.
func (p *pointRun) stopServers(ctx context.Context, grace time.Duration) (escalated []string, escaped []result.EscapedProcess, err error) {
	for i := len(p.srvs) - 1; i >= 0; i-- {
		esc, serr := stopProc(ctx, p.pr.clock(), p.srvs[i], grace)
		if esc {
			escalated = append(escalated, p.label(i))
		}
		if serr != nil && err == nil {
			err = fmt.Errorf("%s: %w", p.label(i), serr)
			if !p.target.Multi() {
				err = serr
			}
		}
		escaped = append(escaped, escapedOf(p.srvs[i])...)
	}
	if len(p.srvs) > 0 {
		portWait := grace
		if ctx.Err() != nil {
			portWait = InterruptGrace(grace)
		}
		// Every port a server's command, env or ready names.
		var named []int
		for _, s := range p.booted {
			all := strings.Join(append(slices.Clone(s.Command), s.Ready), " ")
			for _, v := range s.Env {
				all += " " + v
			}
			for _, n := range target.PortsNamed(all) {
				if !slices.Contains(named, n) {
					named = append(named, n)
				}
			}
		}
		if !slices.Contains(named, 1) {
			named = append(named, 1)
		}
		slices.Sort(named)
		for _, n := range named {
			if port := p.addr.PortN(n); port > 0 {
				_ = supervise.WaitPortFree(net.JoinHostPort(cmp.Or(p.addr.Host, "127.0.0.1"), strconv.Itoa(port)), portWait)
			}
		}
	}
	return escalated, escaped, err
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

// scrub redacts the point's files once its processes are gone: what the
// server or the generator printed (a config with a secret in it) stays in
// the work dir only while the point runs.
func (p *pointRun) scrub() {
	if p.f.dir == "" || p.pr.Secrets.Len() == 0 {
		return
	}
	paths := []string{p.f.genLog, p.f.json}
	if p.side != nil {
		for _, g := range p.side.Procs() { // the agents' logs
			if !slices.Contains(paths, g.LogPath()) {
				paths = append(paths, g.LogPath())
			}
		}
	}
	switch {
	case p.live != nil:
		// A warm point's servers log in their arm's directory, redacted
		// when the arm stops.
	case len(p.booted) == 0:
		paths = append(paths, p.f.serverLog)
	default:
		for i := range p.booted {
			paths = append(paths, p.serverLog(i))
		}
	}
	for _, path := range paths {
		if err := secrets.RedactFile(path, p.pr.Secrets); err != nil {
			p.pr.mu.Lock()
			p.pr.late = append(p.pr.late, fmt.Sprintf("point %d: could not redact %s: %v", p.spec.Index, path, err))
			p.pr.mu.Unlock()
		}
	}
}

// readLoad reads and checks the generator's JSON document.
func readLoad(path string) (*load.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no JSON written: %w", err)
	}
	var r load.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.SchemaVersion != load.SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, want %d", path, r.SchemaVersion, load.SchemaVersion)
	}
	return &r, nil
}
