package result

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// ScenarioConnections is the connection-scale sweep's scenario
// (load/scenario/connections): its ceiling is a number of connections
// held (ConnectionCeiling).
const ScenarioConnections = "connections"

// ConnectionCeiling is a connection-scale sweep's ceiling: the largest
// rung of the headline batch that is clean and meets the objective
// (Config.Objective: the scenario's p99 bound, or the user's, which may
// bound memory too), with what holding it costs.
type ConnectionCeiling struct {
	// Found is false when no rung was clean and met the objective (Why
	// says so); the figures below are then absent.
	Found       bool   `json:"found"`
	Why         string `json:"why,omitempty"`
	Connections int    `json:"connections"`
	Index       int    `json:"index"` // its point in the curve
	Objective   string `json:"objective"`
	// AtLadderTop: the ceiling is the ladder's top rung, so the server
	// may hold more (widen CONNS_LADDER_1).
	AtLadderTop bool         `json:"at_ladder_top"`
	LatencyNs   wire.Latency `json:"latency_ns"`
	// OpenNs is how long opening them all took (the scenario's block;
	// with agents, the slowest agent's); 0 when not reported.
	OpenNs int64 `json:"open_ns,omitempty"`
	// ServerCores is the server's mean CPU, in cores, with the
	// connections held (each sending once per interval).
	ServerCores float64 `json:"server_cpu_cores"`
	// ServerMemory and GeneratorMemory are each side's at that rung.
	ServerMemory    *Memory `json:"server_memory,omitempty"`
	GeneratorMemory *Memory `json:"generator_memory,omitempty"`
	// MarginalServerBytes is the server's cost of a connection between
	// the two largest rungs that met the objective: (peak at the ceiling
	// - peak at the rung below) / (the connections between them), which
	// leaves out what serving any load costs; nil with one such rung.
	MarginalServerBytes *float64 `json:"marginal_server_bytes_per_connection,omitempty"`
	// MemoryNoisePct is the A-A repeat's server memory per connection
	// against the ceiling's, |repeat - ceiling| / ceiling * 100: how far
	// the figure moves when measured again; nil without a clean repeat.
	MemoryNoisePct *float64 `json:"memory_noise_floor_pct"`
}

// connectionCeiling is the curve's connection ceiling (nil outside a
// connection-scale sweep).
func (r *Result) connectionCeiling() *ConnectionCeiling {
	if r.Config.Scenario != ScenarioConnections {
		return nil
	}
	cc := &ConnectionCeiling{Objective: r.Config.Objective}
	var top BatchCeiling
	for _, c := range r.Ceilings {
		if c.Batch == r.Config.HeadlineBatch {
			top = c
		}
	}
	if !top.Found {
		cc.Why = "no rung of the ladder was clean and met the objective"
		return cc
	}
	var at, below *Point
	for i := range r.Curve {
		p := &r.Curve[i]
		if p.Role != RoleSweep || p.Arm == ArmBase || p.Batch != top.Batch || !p.Clean || p.Objective != nil && !p.Objective.Met {
			continue
		}
		switch {
		case p.Connections == top.Connections && at == nil:
			at = p
		case p.Connections < top.Connections && (below == nil || p.Connections > below.Connections):
			below = p
		}
	}
	if at == nil {
		cc.Why = "the ceiling's point is not in the curve"
		return cc
	}
	cc.Found, cc.Connections, cc.Index, cc.AtLadderTop = true, at.Connections, at.Index, top.AtLadderTop
	cc.LatencyNs, cc.ServerCores = at.LatencyNs, at.ServerCPU.MeanCores
	cc.ServerMemory, cc.GeneratorMemory = at.ServerMemory, at.GeneratorMemory
	cc.OpenNs = openNs(at.Scenario)
	if below != nil && at.ServerMemory != nil && below.ServerMemory != nil && at.ServerMemory.Measure == below.ServerMemory.Measure {
		v := (float64(at.ServerMemory.PeakBytes) - float64(below.ServerMemory.PeakBytes)) / float64(at.Connections-below.Connections)
		cc.MarginalServerBytes = &v
	}
	c, okC := at.ServerMemory.PerConnection()
	for _, p := range r.Curve {
		if p.Role != RoleAARepeat || !p.Clean || p.Batch != at.Batch || p.Connections != at.Connections {
			continue
		}
		if v, ok := p.ServerMemory.PerConnection(); ok && okC && c != 0 && p.ServerMemory.Measure == at.ServerMemory.Measure {
			n := math.Abs(v-c) / math.Abs(c) * 100
			cc.MemoryNoisePct = &n
		}
	}
	return cc
}

// openNs is the time the scenario's block says opening the connections
// took: the slowest of the agents' blocks (connections_agent_N) where
// there are several.
func openNs(blocks map[string]json.RawMessage) int64 {
	var most int64
	for k, raw := range blocks {
		if k != ScenarioConnections && !strings.HasPrefix(k, ScenarioConnections+"_agent_") {
			continue
		}
		var b struct {
			OpenNs int64 `json:"open_ns"`
		}
		if json.Unmarshal(raw, &b) == nil {
			most = max(most, b.OpenNs)
		}
	}
	return most
}

// ConnectionsHeadline is the ceiling in words, as the headline line
// writes it: "20000 connections held (objective met, clean), p99 3.1ms;
// per connection server 17.2 KB, generator 2.9 KB (pss); server CPU 0.21
// cores with them held; opened in 4.0s".
func ConnectionsHeadline(cc *ConnectionCeiling) string {
	s := fmt.Sprintf("%d connections held (objective met, clean), p99 %s", cc.Connections, FormatLatency(cc.LatencyNs.P99))
	if cc.AtLadderTop {
		s += " (the ladder's top: it may hold more)"
	}
	srv, okS := cc.ServerMemory.PerConnection()
	gen, okG := cc.GeneratorMemory.PerConnection()
	switch {
	case okS && okG:
		s += fmt.Sprintf("; per connection server %s, generator %s (%s)", Bytes(srv), Bytes(gen), cc.ServerMemory.Measure)
	case okS:
		s += fmt.Sprintf("; per connection server %s (%s)", Bytes(srv), cc.ServerMemory.Measure)
	}
	if m := cc.MarginalServerBytes; m != nil {
		s += fmt.Sprintf(", %s between the top two rungs", Bytes(*m))
	}
	s += fmt.Sprintf("; server CPU %.2f cores with them held", cc.ServerCores)
	if cc.OpenNs > 0 {
		s += "; opened in " + time.Duration(cc.OpenNs).Round(time.Millisecond).String()
	}
	return s
}

// HeadlinePoint is the curve's point the headline is: the headline
// batch's ceiling (its first clean sweep point at those connections,
// within the objective where there is one); nil without a clean
// headline.
func (r *Result) HeadlinePoint() *Point {
	h := r.Headline
	if !h.Clean {
		return nil
	}
	for i := range r.Curve {
		p := &r.Curve[i]
		if p.Role == RoleSweep && p.Arm != ArmBase && p.Batch == h.Batch && p.Connections == h.Connections && p.Clean &&
			p.ThroughputPerS == h.ThroughputPerS && (r.Config.Objective == "" || p.Objective != nil && p.Objective.Met) {
			return p
		}
	}
	return nil
}
