package harness

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/limits"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
)

// The limits that cap a connection ladder, checked before anything
// boots (harness/limits; docs/sweep.md, "Limits that cap a ladder"):
// resolveKnobs checks the generator's side from the knobs alone, Resolve
// both sides once the targets say how many servers share a rung. The
// RLIMIT_NOFILE each child asks for is raised with the ladder
// (limits.Want): the plan's NoFile.

// machineLimits reads this machine for an ask.
func machineLimits(a limits.Ask, agentsPortRange int) limits.Machine {
	return limits.Read(limits.Want(a, NoFileLimit), pinning.ReachableNoFile, agentsPortRange)
}

// checkConnKnobs refuses SCENARIO=connections's knobs given to another
// scenario, which would not read them.
func (o *draft) checkConnKnobs() error {
	if o.Scenario == knob.ConnectionsScenario {
		return nil
	}
	switch {
	case o.ConnRamp != knob.DefaultConnRamp:
		return fmt.Errorf("CONN_RAMP (--conn-ramp): the ramp is SCENARIO=%s's (its --ramp), not %s's", knob.ConnectionsScenario, o.Scenario)
	case o.ConnInterval != knob.DefaultConnInterval:
		return fmt.Errorf("CONN_INTERVAL (--conn-interval): the interval is SCENARIO=%s's (its --send-interval), not %s's", knob.ConnectionsScenario, o.Scenario)
	}
	return nil
}

// checkLimits checks the largest rungs against read's machine, and sets
// the RLIMIT_NOFILE the children ask for. targets are the sweep's
// servers (a two-arm sweep's both): nil, before they are read, checks
// the generator's side alone.
func (o *draft) checkLimits(head, base *target.Spec, read func(limits.Ask, int) limits.Machine) error {
	a := o.limitsAsk(head, base)
	o.NoFile = limits.Want(a, NoFileLimit)
	portRange := 0
	if o.Agents > 0 && o.AgentsListen == "" && o.AgentsPortRange != "" {
		if lo, hi, err := knob.ParsePortRange(o.AgentsPortRange); err == nil {
			portRange = hi - lo + 1
		}
	}
	return limits.Check(a, read(a, portRange))
}

// limitsAsk is what the sweep asks of the machine at its largest rungs.
func (o *draft) limitsAsk(head, base *target.Spec) limits.Ask {
	a := limits.Ask{
		Generators: max(1, o.Agents), LocalGenerators: o.AgentsListen == "",
		Servers: 1, ConnectConcurrency: knob.ConnectConcurrency, ServerBytesPerConn: o.ServerConnBytes,
	}
	for _, b := range o.BatchLadder {
		a.Ladders = append(a.Ladders, limits.Ladder{Knob: fmt.Sprintf("CONNS_LADDER_%d (--conns-ladder)", b), Top: o.ConnsLadder(b).Top()})
	}
	addrs, auto, err := load.ParseSourceAddrs(o.SourceAddrs)
	switch {
	case err != nil || auto:
		a.SourceAddrs = 0
	case len(addrs) == 0:
		a.SourceAddrs = -1 // off
	default:
		a.SourceAddrs = len(addrs)
	}
	// Local agents dial from addresses of their own, as many as they
	// need (docs/agents.md).
	a.AutoSpread = o.Agents > 0 && a.LocalGenerators
	for _, t := range []*target.Spec{head, base} {
		if t == nil {
			continue
		}
		if !t.External {
			a.BootedServers = true
		}
		urls := o.scenarioURLs(*t)
		a.Servers = max(a.Servers, len(urls))
		a.AutoSpread = a.AutoSpread || allLoopback(urls)
	}
	return a
}

// scenarioURLs are the URLs the scenario's connections spread over: the
// block's several (load.MultiURLBlock), or its one.
func (o *draft) scenarioURLs(t target.Spec) []string {
	u, err := t.URLFor(o.Scenario)
	if err != nil {
		return nil
	}
	if t.URL == "" {
		if blk, err := t.Block(o.Scenario); err == nil {
			if m, ok := blk.(load.MultiURLBlock); ok && len(m.URLs()) > 0 {
				return m.URLs()
			}
		}
	}
	return []string{u}
}

// allLoopback reports whether every URL is a booted server's address
// (its {addr} or {host}: 127.0.0.1) or an IPv4 loopback one, which
// SOURCE_ADDRS=auto spreads over 127.0.0.x.
func allLoopback(urls []string) bool {
	if len(urls) == 0 {
		return false
	}
	for _, s := range urls {
		if strings.Contains(s, "{addr}") || strings.Contains(s, "{host}") {
			continue
		}
		u, err := url.Parse(s)
		if err != nil {
			return false
		}
		if h := u.Hostname(); h != "localhost" && !strings.HasPrefix(h, "127.") {
			return false
		}
	}
	return true
}
