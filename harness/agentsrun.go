package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/argv"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// agentRun is a point's generator side with AGENTS: the coordinator (in
// this process, harness/agents) and its `ceiling agent` processes, each
// pinned to the generator CPUs like the one generator would be. The
// coordinator creates the point's marker at the common window's start and
// writes the merged load.Result where the generator's JSON goes, so the
// point's phases (marker, measure, collect) run as they do for one
// generator.
type agentRun struct {
	procs     []*supervise.Proc
	throttles []*pinning.Throttle // agentside.Env.Quota's, removed after the agents stopped
	done      chan struct{}       // closed when the coordinator's Run returned
	out       *agents.Outcome
	err       error
}

// agentBin is the `ceiling` binary the agents run: this one, or the one a
// GENERATOR of the form "PATH load" names.
func (pr *ProcRunner) agentBin() string { return pr.generator[0] }

// pointRate is the --rate among a point's flags (0: closed loop).
func pointRate(args []string) float64 {
	v, _ := argv.Value(args, "rate")
	r, _ := strconv.ParseFloat(v, 64)
	return r
}

// serverHost is {host}: the agents' bridge address in their lab, the
// host AGENTS_LISTEN names (unless empty or unspecified), else "" (the
// loopback).
func (pr *ProcRunner) serverHost() string {
	o := pr.o
	if o.Agents < 1 {
		return ""
	}
	if o.AgentsListen != "" {
		h, _, _ := net.SplitHostPort(o.AgentsListen)
		if a, err := netip.ParseAddr(h); err == nil && a.IsUnspecified() {
			return ""
		}
		return h
	}
	if pr.agents.Lab != nil {
		return agentside.LabHost
	}
	return ""
}

// joinTimeout bounds a point's wait for every agent to join and be ready.
func (pr *ProcRunner) joinTimeout() time.Duration {
	switch {
	case pr.o.AgentsJoinTimeout > 0:
		return pr.o.AgentsJoinTimeout
	case pr.o.AgentsListen != "":
		return 2 * time.Minute
	}
	return connectTimeout
}

// remoteHub is AGENTS_LISTEN's hub, opened at the sweep's first point and
// kept to its end (Close).
func (pr *ProcRunner) remoteHub() (*agents.Hub, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.hub != nil {
		return pr.hub, nil
	}
	token, err := agents.ParseToken("AGENTS_TOKEN", pr.o.AgentsToken.Text()) // checked by Resolve already
	if err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(pr.o.WorkDir, "coordinator.log"))
	if err != nil {
		return nil, fmt.Errorf("coordinator log: %w", err)
	}
	pr.hubLog = &syncWriter{w: f}
	var tlsConf *tls.Config
	if !pr.o.AgentsTLS.IsZero() {
		if tlsConf, err = pr.o.AgentsTLS.ServerConfig(); err != nil {
			return nil, fmt.Errorf("AGENTS_TLS_*: %w", err)
		}
	}
	h, err := agents.NewHub(pr.o.AgentsListen, pr.o.Agents, token, pr.hubLog, tlsConf)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("AGENTS_LISTEN %s: %w", pr.o.AgentsListen, err)
	}
	pr.hub = h
	return h, nil
}

// Close ends what the runner keeps across points: AGENTS_LISTEN's agents
// are told the sweep is done (they exit).
func (pr *ProcRunner) Close() {
	pr.mu.Lock()
	h := pr.hub
	pr.hub = nil
	pr.mu.Unlock()
	if h != nil {
		h.Close()
		pr.hubLog.w.Close()
	}
}

// startAgents starts the coordinator, then the agents that dial it (none
// with AGENTS_LISTEN: the sweep's hub runs the point with the remote
// agents that joined it).
func (p *pointRun) startAgents(ctx context.Context, url, cgroup string) error {
	pr, spec := p.pr, p.spec
	// A GENERATOR of `PATH load FLAGS...` gives every point its FLAGS.
	args := append(append([]string(nil), pr.generator[2:]...), pr.loadArgs(p.target, spec.Key, p.addr, url, p.window, p.warmup, p.f)...)
	n := agents.Active(pr.o.Agents, spec.Key.Connections)
	logf, err := os.Create(p.f.genLog)
	if err != nil {
		return p.fail(PhaseGenerator, nil, "coordinator log: %v", err)
	}
	plan := agents.Plan{
		Agents: n, Args: args, Connections: spec.Key.Connections, Rate: pointRate(args),
		Warmup: p.warmup, Duration: p.window, Marker: p.f.marker, JSON: p.f.json,
		ReadyTimeout: pr.joinTimeout(), ResultTimeout: exitTimeout, Log: &syncWriter{w: logf},
	}
	lab := pr.agents.Lab
	portRange := agentside.PortRangeSize(pr.o.AgentsPortRange)
	switch {
	case pr.o.AgentsListen != "":
		// Remote agents bring their own addresses (SOURCE_ADDRS for all).
	case lab != nil:
		plan.AgentArgs = func(i, conns int) []string {
			var s []string
			for _, a := range agentside.Addrs(i, agentside.AddrCount(conns, portRange)) {
				s = append(s, a.String())
			}
			return []string{"--source-addrs", strings.Join(s, ",")}
		}
	default:
		plan.AgentArgs = agents.LoopbackSourceAddrs(args, url, load.LocalPortRange())
	}
	ag := &agentRun{done: make(chan struct{})}
	p.ag = ag
	if pr.o.AgentsListen != "" {
		hub, err := pr.remoteHub()
		if err != nil {
			logf.Close()
			return p.fail(PhaseGenerator, nil, "coordinator: %v", err)
		}
		fmt.Fprintf(logf, "coordinator: %d remote agents on %s (AGENTS_LISTEN)\n", n, hub.Addr())
		// The hub's lines go to the sweep's coordinator.log (joins and
		// leaves between points) and, during the point, to its log too.
		plan.Log = io.MultiWriter(plan.Log, pr.hubLog)
		go func() {
			defer close(ag.done)
			defer logf.Close()
			ag.out, ag.err = hub.Run(ctx, plan)
			hub.SetLog(pr.hubLog)
		}()
		return nil
	}
	listen := "127.0.0.1:0"
	if lab != nil {
		listen = agentside.LabHost + ":0"
	}
	// The point's own token: only the agents started below hold it (in
	// their environment, which other users cannot read; an argv they can).
	token := agents.NewToken()
	co, err := agents.Listen(listen, plan, token)
	if err != nil {
		logf.Close()
		return p.fail(PhaseGenerator, nil, "coordinator: %v", err)
	}
	go func() {
		defer close(ag.done)
		defer logf.Close()
		ag.out, ag.err = co.Run(ctx)
	}()
	for i := range n {
		cg := cgroup
		if q, ok := pr.agents.Quota[i]; ok {
			th, err := pinning.NewThrottle(supervise.CgroupName(fmt.Sprintf("agent%d-quota", i), spec.Index), q)
			if err != nil {
				return p.fail(PhaseGenerator, nil, "agent %d: quota: %v", i, err)
			}
			ag.throttles = append(ag.throttles, th)
			cg = th.Path
		}
		proc, err := supervise.Start(ctx, supervise.Spec{
			Name: fmt.Sprintf("agent %d", i), Path: pr.agentBin(),
			Args:     append([]string{"agent", "--coordinator", co.Addr(), "--index", strconv.Itoa(i), "--dial-timeout", connectTimeout.String()}, pr.agents.Args[i]...),
			Env:      []string{"GOMAXPROCS=" + strconv.Itoa(len(p.genCPUs)), agents.TokenEnv + "=" + token.Text()},
			Environ:  ChildEnviron(os.Environ(), p.target.PassEnv, generatorEnvPrefixes),
			CPUs:     p.genCPUs,
			NoFile:   NoFileLimit,
			Cgroup:   cg,
			LogPath:  p.agentLog(i),
			Grace:    InterruptGrace(pr.grace),
			NewNetNS: lab != nil,
		})
		if err != nil {
			return p.fail(PhaseGenerator, nil, "start agent %d: %v", i, err)
		}
		ag.procs = append(ag.procs, proc)
		if lab != nil {
			conns, _ := agents.Segment(spec.Key.Connections, 0, n, i)
			if err := lab.Attach(proc.Pid, agentside.Addrs(i, agentside.AddrCount(conns, portRange)), pr.o.AgentsPortRange); err != nil {
				return p.fail(PhaseGenerator, proc, "agent %d: network namespace: %v", i, err)
			}
		}
	}
	return nil
}

func (p *pointRun) agentLog(i int) string {
	return filepath.Join(p.f.dir, fmt.Sprintf("agent-%d.log", i))
}

// exitedAgent is the first agent process that has exited, if any.
func (ag *agentRun) exitedAgent() (int, bool) {
	for i, a := range ag.procs {
		if a.Exited() {
			return i, true
		}
	}
	return 0, false
}

// anyDone is closed when the coordinator returns or an agent exits.
func (ag *agentRun) anyDone() <-chan struct{} {
	chs := []<-chan struct{}{ag.done}
	for _, a := range ag.procs {
		chs = append(chs, a.Done())
	}
	return firstDone(chs...)
}

// trees are the agents' process trees, for sampling together.
func (ag *agentRun) trees() []cpusample.Source {
	var t []cpusample.Source
	for _, a := range ag.procs {
		t = append(t, cpusample.Tree(a.Pid))
	}
	return t
}

// markerFailed says why no marker will come, or "" while it still may.
func (p *pointRun) agentsMarkerFailed() (string, *supervise.Proc) {
	ag := p.ag
	select {
	case <-ag.done:
		if ag.err != nil {
			return fmt.Sprintf("before the measured window: %v", ag.err), p.agentNamed(ag.err.Error())
		}
	default:
	}
	if i, ok := ag.exitedAgent(); ok {
		// The coordinator sees the lost session and says which; give it
		// a moment so the reason is its.
		select {
		case <-ag.done:
			if ag.err != nil {
				return fmt.Sprintf("before the measured window: %v", ag.err), p.agentNamed(ag.err.Error())
			}
		case <-time.After(2 * time.Second):
		}
		return fmt.Sprintf("agent %d exited before the measured window (%s)", i, exitText(ag.procs[i])), ag.procs[i]
	}
	return "", nil
}

// agentNamed is the agent process a reason names first ("agent 2"), for
// its log tail.
func (p *pointRun) agentNamed(reason string) *supervise.Proc {
	for i, a := range p.ag.procs {
		if strings.Contains(reason, fmt.Sprintf("agent %d ", i)) || strings.Contains(reason, fmt.Sprintf("agent %d:", i)) {
			return a
		}
	}
	return nil
}

// collectAgents waits for the coordinator's merge and the agents' exits.
func (p *pointRun) collectAgents(ctx context.Context, out *verdict.Outcome) error {
	ag := p.ag
	select {
	case <-ag.done:
	case <-time.After(exitTimeout + 5*time.Second):
		return p.fail(PhaseCollect, nil, "coordinator still waiting %s after the window", exitTimeout+5*time.Second)
	case <-ctx.Done():
		return p.interrupted(PhaseCollect)
	}
	if ag.out != nil {
		out.Agents = ag.out.Agents
		network := "loopback"
		switch {
		case p.pr.o.AgentsListen != "":
			network = "remote"
		case p.pr.agents.Lab != nil:
			network = "netns"
		}
		for i := range out.Agents {
			out.Agents[i].Network = network
		}
	}
	// A late start with every result merged is the verdict's to judge
	// (verdict.Point judges each agent): a starved agent, or a clock that
	// was off.
	var late *agents.LateStartError
	if ag.err != nil && !errors.As(ag.err, &late) {
		return p.fail(PhaseCollect, p.agentNamed(ag.err.Error()), "%v", ag.err)
	}
	if i, ok := p.exitedServer(); ok {
		return p.fail(PhaseCollect, p.srvs[i], "%s exited during the point (%v)", p.label(i), p.srvs[i].ExitErr())
	}
	res, err := readLoad(p.f.json)
	if err != nil {
		return p.fail(PhaseCollect, nil, "merged result: %v", err)
	}
	out.Load = res
	return nil
}

// stopAgents stops every agent process; it returns the ones SIGKILLed.
func (p *pointRun) stopAgents(ctx context.Context, grace time.Duration) (escalated []string, escaped []result.EscapedProcess) {
	for i, a := range p.ag.procs {
		if esc, _ := stopProc(ctx, a, grace); esc {
			escalated = append(escalated, fmt.Sprintf("agent %d", i))
		}
		escaped = append(escaped, escapedOf(a)...)
	}
	for _, th := range p.ag.throttles {
		_ = th.Remove()
	}
	return escalated, escaped
}

// syncWriter serialises the coordinator's log lines.
type syncWriter struct {
	mu sync.Mutex
	w  *os.File
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}
