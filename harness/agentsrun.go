package harness

import (
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/target"
)

// agentSide is the point's generator side with AGENTS (harness/agentside):
// the coordinator and its agents, in place of the one generator.
func (p *pointRun) agentSide() *agentside.Run {
	pr := p.pr
	return agentside.New(agentside.Point{
		Index: p.spec.Index, Agents: pr.o.Agents.Count, Connections: p.spec.Key.Connections,
		Flags: pr.generator[2:], Bin: pr.agentBin(),
		Warmup: p.warmup, Window: p.window,
		Marker: p.f.marker, JSON: p.f.json, Log: p.f.genLog, Dir: p.f.dir,
		CPUs:    p.genCPUs,
		Environ: target.ChildEnviron(os.Environ(), p.target.PassEnv, target.GeneratorEnvPrefixes),
		NoFile:  pr.o.noFile(), Grace: InterruptGrace(pr.grace),
		ConnectTimeout: connectTimeout, JoinTimeout: pr.joinTimeout() + pr.rampTime(p.spec.Key.Connections), ExitTimeout: exitTimeout,
		Env: pr.agents, Listen: pr.o.Agents.Listen, PortRange: pr.o.Agents.PortRange,
		Hub: pr.remoteHub,
	})
}

// agentBin is the `ceiling` binary the agents run: this one, or the one a
// GENERATOR of the form "PATH load" names.
func (pr *ProcRunner) agentBin() string { return pr.generator[0] }

// serverHost is {host}: the agents' bridge address in their lab, the
// host AGENTS_LISTEN names (unless empty or unspecified), else "" (the
// loopback).
func (pr *ProcRunner) serverHost() string {
	o := pr.o
	if o.Agents.Count < 1 {
		return ""
	}
	if o.Agents.Listen != "" {
		h, _, _ := net.SplitHostPort(o.Agents.Listen)
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
	case pr.o.Agents.JoinTimeout > 0:
		return pr.o.Agents.JoinTimeout
	case pr.o.Agents.Listen != "":
		return 2 * time.Minute
	}
	return connectTimeout
}

// remoteHub is AGENTS_LISTEN's hub and its coordinator.log, opened at the
// sweep's first point and kept to its end (Close).
func (pr *ProcRunner) remoteHub() (*agents.Hub, io.Writer, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.hub != nil {
		return pr.hub, pr.hubLog, nil
	}
	h, log, err := agentside.OpenHub(pr.o.Agents.Listen, pr.o.Agents.Count, pr.o.Agents.Token.Text(), pr.o.AgentsTLS, pr.o.Point.WorkDir)
	if err != nil {
		return nil, nil, err
	}
	pr.hub, pr.hubLog = h, log
	return h, log, nil
}

// Close ends what the runner keeps across points: AGENTS_LISTEN's agents
// are told the sweep is done (they exit).
func (pr *ProcRunner) Close() {
	pr.closeLive()
	pr.mu.Lock()
	h := pr.hub
	pr.hub = nil
	pr.mu.Unlock()
	if h != nil {
		h.Close()
		pr.hubLog.Close()
	}
}
