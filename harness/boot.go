package harness

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
)

// booter starts servers as a point does, for a point or a warm arm, and
// stops them: each under its own supervisor pinned to the server CPUs,
// with its limits, identity and log.
type booter struct {
	starter Starter
	clock   Clock
	ready   time.Duration // the readiness budget, for all of them
	grace   time.Duration // the stop grace (an interrupt's: InterruptGrace)
	cpus    pinning.CPUSet
	noFile  uint64
	runAs   *runas.User
	// started is told the first server's pid once all are ready: its
	// affinity is read back (grants).
	started func(pid int)
}

// newBooter is the booter of a point (or an arm) of setup s.
func newBooter(e *procEnv, s pointSetup) booter {
	half := s.spec.Half
	return booter{starter: e.opts.Starter, clock: e.opts.Clock, ready: e.ready, grace: e.grace, cpus: s.srvCPUs,
		noFile: e.plan.noFile(), runAs: s.runAs,
		started: func(pid int) { e.grants.note("server", half, s.srvCPUs, pid) }}
}

// boot starts set's target's servers, in order, then waits for each
// one's readiness probe in the same order: all are started first, as a
// cluster's node may only be ready once its peers are up (a JetStream
// node's /healthz waits for the meta group's quorum). A server that
// exits or is not ready fails the point with its name and log tail.
func (b booter) boot(ctx context.Context, set *serverSet) error {
	set.booted = set.target.Booted()
	for i, s := range set.booted {
		if len(s.Command) == 0 {
			return failAt(PhaseBoot, nil, "boot %s: no command", set.label(i))
		}
		srv, err := b.starter.Start(ctx, b.spec(set, i))
		if err != nil {
			return failAt(PhaseBoot, nil, "boot %s: %v", set.label(i), err)
		}
		set.procs = append(set.procs, srv)
	}
	deadline := b.clock.Now().Add(b.ready)
	for i, s := range set.booted {
		if err := b.waitReady(ctx, set, i, s, deadline); err != nil {
			return err
		}
	}
	b.started(set.procs[0].Pid())
	return nil
}

// spec is server i's supervise.Spec, its placeholders expanded.
func (b booter) spec(set *serverSet, i int) supervise.Spec {
	s, addr := set.booted[i], set.addr
	argv := make([]string, len(s.Command))
	for j, a := range s.Command {
		argv[j] = target.Expand(a, addr)
	}
	var env []string
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, k+"="+target.Expand(s.Env[k], addr))
	}
	return supervise.Spec{
		Name: set.label(i), Path: argv[0], Args: argv[1:], Env: env, Dir: set.target.Dir,
		Environ: b.runAs.Environ(target.ChildEnviron(os.Environ(), set.target.PassEnv, nil)),
		CPUs:    b.cpus, NoFile: b.noFile, LogPath: set.logPath(i),
		Grace: InterruptGrace(b.grace), // used only when ctx ends: an interrupt
		User:  b.runAs.Credential(),
	}
}

// waitReady waits for server i's readiness, within what is left of the
// budget (the later ones have had the time the earlier took to come
// up), and fails the point by its own name if one started before it
// died meanwhile.
func (b booter) waitReady(ctx context.Context, set *serverSet, i int, s target.Server, deadline time.Time) error {
	srv := set.procs[i]
	probe, err := supervise.ParseProbe(target.Expand(s.Ready, set.addr))
	if err != nil {
		return failAt(PhaseReady, nil, "target %s: %v", set.readyField(i), err)
	}
	if err := b.starter.WaitReady(ctx, srv, probe, max(deadline.Sub(b.clock.Now()), time.Second)); err != nil {
		if ctx.Err() != nil {
			return interruptedAt(PhaseReady)
		}
		return failAt(PhaseReady, srv, "%s never became ready: %v", set.label(i), err)
	}
	for j := range i {
		if set.procs[j].Exited() {
			return failAt(PhaseReady, set.procs[j], "%s exited while %s came up (%s)", set.label(j), set.label(i), exitText(set.procs[j]))
		}
	}
	return nil
}

// stop stops set's servers in reverse order, each with its own grace (a
// cluster's later nodes were started last), then waits for every port
// they named to be free. The first stop error is the point's.
func (b booter) stop(ctx context.Context, set *serverSet, grace time.Duration) serversDown {
	var d serversDown
	for i := len(set.procs) - 1; i >= 0; i-- {
		esc, err := stopProc(ctx, b.clock, set.procs[i], grace)
		if esc {
			d.escalated = append(d.escalated, set.label(i))
		}
		if err != nil && d.err == nil {
			d.err = fmt.Errorf("%s: %w", set.label(i), err)
			if !set.target.Multi() {
				d.err = err
			}
		}
		d.escaped = append(d.escaped, escapedOf(set.procs[i])...)
	}
	if len(set.procs) == 0 {
		return d
	}
	portWait := grace
	if ctx.Err() != nil {
		portWait = InterruptGrace(grace)
	}
	for _, n := range portsNamed(set.booted) {
		if port := set.addr.PortN(n); port > 0 {
			_ = supervise.WaitPortFree(net.JoinHostPort(cmp.Or(set.addr.Host, "127.0.0.1"), strconv.Itoa(port)), portWait)
		}
	}
	return d
}

// portsNamed are the ports (by number: {port} is 1) the servers'
// commands, environments and ready probes name, {port} always, in
// order.
func portsNamed(booted []target.Server) []int {
	named := []int{1}
	for _, s := range booted {
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
	slices.Sort(named)
	return named
}

// freshServers is a point that boots its own servers (serverStage): its
// ports, then the booter's boot; stopped when the point ends.
type freshServers struct {
	ownServers
	b     booter
	ports portGiver
	dir   string
}

func newFreshServers(e *procEnv, s pointSetup, dir string) *freshServers {
	set := &serverSet{target: s.target, logDir: dir}
	return &freshServers{ownServers: ownServers{set}, b: newBooter(e, s), ports: portGiver{free: e.opts.FreePorts, host: e.host}, dir: dir}
}

func (f *freshServers) up(ctx context.Context) (*serverSet, time.Duration, error) {
	addr, err := f.ports.addr(f.set.target, f.dir, f.b.runAs)
	if err != nil {
		return nil, 0, failAt(PhaseFiles, nil, "%v", err)
	}
	f.set.addr = addr
	start := f.b.clock.Now()
	err = f.b.boot(ctx, f.set)
	return f.set, f.b.clock.Now().Sub(start), err
}

func (f *freshServers) down(ctx context.Context, grace time.Duration) serversDown {
	start := f.b.clock.Now()
	d := f.b.stop(ctx, f.set, grace)
	if len(f.set.procs) > 0 {
		d.cost = f.b.clock.Now().Sub(start)
	}
	return d
}

func (f *freshServers) logs() []string {
	if len(f.set.booted) == 0 {
		return []string{filepath.Join(f.dir, "server.log")}
	}
	var out []string
	for i := range f.set.booted {
		out = append(out, f.set.logPath(i))
	}
	return out
}
