package harness

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
)

// lastWords is ": " and the last line a process wrote (its own error,
// as "ceiling load: preflight: ... 401 ..."), at most 300 bytes, or ""
// when it wrote nothing: the cause belongs on the terminal's first line,
// not only in the result's log_tail.
func lastWords(pr supervise.Process) string {
	lines := strings.Split(strings.TrimSpace(pr.Tail(tailLines)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	if len(last) > 300 {
		last = strings.ToValidUTF8(last[:300], "") + "…"
	}
	return ": " + last
}

// exitText is a child's exit for a reason: its error, or "exit status 0".
func exitText(pr supervise.Process) string {
	if err := pr.ExitErr(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}

// boot starts the servers, in order, each under its own supervisor pinned
// to the server CPUs with its own log, then waits for each one's readiness
// probe in the same order: all are started first, as a cluster's node may
// only be ready once its peers are up (a JetStream node's /healthz waits
// for the meta group's quorum). A server that exits or is not ready fails
// the point with its name and log tail.
func (p *pointRun) boot(ctx context.Context) error {
	pr, addr := p.pr, p.addr
	if p.target.External {
		return p.readyExternal(ctx) // nothing to boot, nothing to stop later
	}
	p.booted = p.target.Booted()
	for i, s := range p.booted {
		if len(s.Command) == 0 {
			return p.fail(PhaseBoot, nil, "boot %s: no command", p.label(i))
		}
		argv := make([]string, len(s.Command))
		for j, a := range s.Command {
			argv[j] = target.Expand(a, addr)
		}
		var env []string
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			env = append(env, k+"="+target.Expand(s.Env[k], addr))
		}
		runAs := p.runAs()
		srv, err := pr.starter().Start(ctx, supervise.Spec{
			Name: p.label(i), Path: argv[0], Args: argv[1:], Env: env, Dir: p.target.Dir,
			Environ: runAs.Environ(target.ChildEnviron(os.Environ(), p.target.PassEnv, nil)),
			CPUs:    p.srvCPUs, NoFile: p.pr.o.noFile(), LogPath: p.serverLog(i),
			Grace: InterruptGrace(pr.grace), // used only when ctx ends: an interrupt
			User:  runAs.Credential(),
		})
		if err != nil {
			return p.fail(PhaseBoot, nil, "boot %s: %v", p.label(i), err)
		}
		p.srvs = append(p.srvs, srv)
	}
	clock := pr.clock()
	deadline := clock.Now().Add(pr.ready)
	for i, s := range p.booted {
		srv := p.srvs[i]
		probe, err := supervise.ParseProbe(target.Expand(s.Ready, addr))
		if err != nil {
			return p.fail(PhaseReady, nil, "target %s: %v", p.readyField(i), err)
		}
		// One readiness budget for all: the later ones have had the time
		// the earlier took to come up.
		if err := pr.starter().WaitReady(ctx, srv, probe, max(deadline.Sub(clock.Now()), time.Second)); err != nil {
			if ctx.Err() != nil {
				return p.interrupted(PhaseReady)
			}
			return p.fail(PhaseReady, srv, "%s never became ready: %v", p.label(i), err)
		}
		// Before any other has exited: one that died while a later one
		// came up fails the point by its own name.
		for j := range i {
			if p.srvs[j].Exited() {
				return p.fail(PhaseReady, p.srvs[j], "%s exited while %s came up (%s)", p.label(j), p.label(i), exitText(p.srvs[j]))
			}
		}
	}
	p.noteGranted(&pr.serverGranted, p.srvCPUs, "server", p.srvs[0].Pid())
	return nil
}

// label names server i in messages: "server" for a one-server target,
// "server NAME" for one of several.
func (p *pointRun) label(i int) string {
	if !p.target.Multi() {
		return "server"
	}
	return "server " + p.booted[i].Name
}

func (p *pointRun) readyField(i int) string {
	if !p.target.Multi() {
		return "ready"
	}
	return fmt.Sprintf("servers[%d].ready", i)
}

// serverLog is server i's log: server.log, or server-NAME.log for one of
// several.
func (p *pointRun) serverLog(i int) string {
	if p.live != nil {
		return p.live.serverLog(i) // a warm arm's, in its own directory
	}
	if !p.target.Multi() {
		return p.f.serverLog
	}
	return filepath.Join(p.f.dir, "server-"+p.booted[i].Name+".log")
}

// exitedServer is the first server that has exited, if any: the one a
// FAULT killed is not counted once its signal was sent.
func (p *pointRun) exitedServer() (int, bool) {
	for i, s := range p.srvs {
		if s.Exited() && !(p.faulted(i) && p.fault.sent()) {
			return i, true
		}
	}
	return 0, false
}

// anyServerDone is closed when the first server exits, but for the one a
// FAULT stops: its exit is the fault's, not the window's end.
func (p *pointRun) anyServerDone() <-chan struct{} {
	var chs []<-chan struct{}
	for i, s := range p.srvs {
		if !p.faulted(i) {
			chs = append(chs, s.Done())
		}
	}
	return firstDone(chs...)
}

// firstDone is closed when the first of chs is.
func firstDone(chs ...<-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	var once sync.Once
	for _, c := range chs {
		go func() {
			<-c
			once.Do(func() { close(done) })
		}()
	}
	return done
}
