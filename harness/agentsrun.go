package harness

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
)

// newAgentSide is a point's generator side with AGENTS (harness/agentside):
// the coordinator and its agents, in place of the one generator, running
// the `ceiling` binary the generator's command names (this one, or the
// one a GENERATOR of the form "PATH load" names).
func newAgentSide(e *procEnv, s pointSetup, f pointFiles) *agentside.Run {
	o := e.plan
	return agentside.New(agentside.Point{
		Index: s.spec.Index, Agents: o.Agents.Count, Connections: s.spec.Key.Connections,
		Flags: e.generator[2:], Bin: e.generator[0],
		Warmup: s.warmup, Window: s.window,
		Marker: f.marker, JSON: f.json, Log: f.genLog, Dir: f.dir,
		CPUs:    s.genCPUs,
		Environ: target.ChildEnviron(os.Environ(), s.target.PassEnv, target.GeneratorEnvPrefixes),
		NoFile:  o.noFile(), Grace: InterruptGrace(e.grace),
		ConnectTimeout: connectTimeout, JoinTimeout: joinTimeout(o.Agents) + rampTime(o.Point, s.spec.Key.Connections), ExitTimeout: exitTimeout,
		Env: e.agents, Listen: o.Agents.Listen, PortRange: o.Agents.PortRange,
		Hub: e.hub.open,
	})
}

// serverHost is {host}: the agents' bridge address in their lab, the
// host AGENTS_LISTEN names (unless empty or unspecified), else "" (the
// loopback).
func serverHost(a knob.Agents, env agentside.Env) string {
	if a.Count < 1 {
		return ""
	}
	if a.Listen != "" {
		h, _, _ := net.SplitHostPort(a.Listen)
		if ip, err := netip.ParseAddr(h); err == nil && ip.IsUnspecified() {
			return ""
		}
		return h
	}
	if env.Lab != nil {
		return agentside.LabHost
	}
	return ""
}

// joinTimeout bounds a point's wait for every agent to join and be ready.
func joinTimeout(a knob.Agents) time.Duration {
	switch {
	case a.JoinTimeout > 0:
		return a.JoinTimeout
	case a.Listen != "":
		return 2 * time.Minute
	}
	return connectTimeout
}

// uncheckedAgents warns of remote agents whose counts nothing checks: the
// target names no server counter for the scenario (metrics.counts).
func uncheckedAgents(o *Plan, t target.Spec) string {
	if o.Agents.Listen == "" {
		return ""
	}
	if m := t.Metrics; m != nil && m.Counts[o.Point.Scenario] != "" {
		return ""
	}
	return fmt.Sprintf("AGENTS_LISTEN: the target names no server counter for scenario %s (metrics.counts), so nothing checks the remote agents' counts against the server's own (docs/targets.md, \"Server metrics\")", o.Point.Scenario)
}
