package verdict

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/objective"
	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/result"
)

// Outcome is what measuring one point produced. Load is nil when the point
// failed; FailReason and LogTail then say why.
type Outcome struct {
	Load         *wire.Result
	ServerCPU    result.CPUStats
	Servers      []result.NamedCPU // each server's, of several (ServerCPU is their sum)
	GeneratorCPU result.CPUStats
	// ServerMemory and GeneratorMemory are each side's memory over the
	// window (nil where none was read).
	ServerMemory, GeneratorMemory *result.Memory

	FailReason string
	// Refused: the generator stopped at its preflight on a refusal every
	// point would meet (load.Refused); the sweep stops (harness.ErrRefused).
	Refused   bool
	LogTail   string // server log tail, or the generator's stderr tail
	Escaped   []result.EscapedProcess
	StartedAt time.Time
	Wall      time.Duration
	// ReadyCost and StopCost are the point's servers' boot (start to
	// readiness) and stop (SIGTERM to exit and free ports), when it
	// booted its own; 0 on a warm arm's point. ArmDown: the warm arm's
	// server the point measured was found exited.
	ReadyCost, StopCost time.Duration
	ArmDown             bool
	// Interrupted: the sweep's context ended before the point finished;
	// the point is no measurement and the harness's sweep leaves it out
	// of the curve (it never asks Point).
	Interrupted bool
	// Escalated names the sides ("server", "generator") that outlived
	// SIGTERM by their stop grace and were SIGKILLed.
	Escalated []string
	// The server's own metrics and profile over the window (the harness's
	// window capture).
	ServerMetrics             *result.ServerMetrics
	ProfileFile, ProfileError string
	// CPUProfile is the point's CPU profile when its spec asked for one
	// (harness/cpuprof): where it is, or why there is none.
	CPUProfile *result.CPUProfile
	// Agents is each agent's part of the point with AGENTS (nil without).
	Agents []wire.Agent
	// CountSeries is the target's counter for the point's scenario
	// (metrics.counts; "" for none), CountOverlapS the seconds of the
	// window its two reads cover (0: they cover none, or one failed), and
	// CountWindowS the window's own seconds (0: unknown).
	CountSeries   string
	CountOverlapS float64
	CountWindowS  float64
	// CountSkip says why the count cannot be checked although a series
	// is named ("": it can).
	CountSkip string
	// Fault is FAULT's record of a resilience point (nil in any other).
	Fault *result.Fault
}

// Point turns what point i measured (role, key k) into its curve point
// with its verdict, in the order the package comment gives: a failure, the
// generator's summary, contention, the rule (Judge), the agents, the count
// check. The objective is Objective's, on the point this returns.
func Point(i int, role string, k result.PointKey, out Outcome, th Thresholds) result.Point {
	p := result.Point{
		Index: i, Role: role, Batch: k.Batch, Connections: k.Connections, Rep: k.Rep,
		ServerCPU: out.ServerCPU, Servers: out.Servers, GeneratorCPU: out.GeneratorCPU,
		ServerMemory: out.ServerMemory, GeneratorMemory: out.GeneratorMemory,
		StartedAt: out.StartedAt, WallTimeNs: int64(out.Wall), ReadyNs: int64(out.ReadyCost), StopNs: int64(out.StopCost),
		Escalated: out.Escalated,
		Escaped:   out.Escaped,

		ServerMetrics: out.ServerMetrics, ProfileFile: out.ProfileFile, ProfileError: out.ProfileError,
		CPUProfile: out.CPUProfile,
		Agents:     agentReports(out.Agents),
	}
	if out.FailReason == "" && out.Load != nil && out.Load.Summary.Failure != "" {
		// The generator says it could not measure: its figures are none.
		out.FailReason = "generator could not measure: " + out.Load.Summary.Failure
	}
	if out.Load == nil || out.FailReason != "" {
		reason := out.FailReason
		if reason == "" {
			reason = "no generator result"
		}
		return failedPoint(p, reason, out.LogTail)
	}
	base := p
	s := out.Load.Summary
	p.Status = result.StatusOK
	p.Scenario = s.Blocks
	p.Drop = s.Drop
	p.ThroughputPerS = s.ThroughputPerS
	if cp := out.CPUProfile; cp != nil && cp.File != "" {
		// The messages the server handled while it was profiled.
		c := *cp
		c.Messages = s.ThroughputPerS * time.Duration(cp.DurationNs).Seconds()
		p.CPUProfile = &c
	}
	p.LatencyNs = s.Latency
	p.Errors = s.Errors
	if len(s.ErrorsByReason) > 0 {
		p.ErrorsByReason = maps.Clone(s.ErrorsByReason)
	}
	p.Saturated = s.Saturated
	p.Clean = MeasuredClean(s)
	// And its pinned CPUs to itself: a point measured on cores shared
	// with other work (or stolen by the hypervisor) measures the
	// neighbour too, and never becomes a ceiling.
	p.Contended = result.Contention(out.ServerCPU, out.GeneratorCPU) != ""
	p.Clean = p.Clean && !p.Contended
	p.Generator = out.Load.Generator
	p.Verdict, p.VerdictReason = Judge(th, out.ServerCPU, out.GeneratorCPU, s, out.Load.Generator)
	judgeAgents(&p, out.Agents, th, out.GeneratorCPU)
	if late := lateNotBehind(p.Agents); late != "" {
		base.Agents = p.Agents
		return failedPoint(base, "agents: "+late, out.LogTail)
	}
	if out.CountSeries != "" {
		if out.CountSkip != "" {
			p.CountCheck = &result.CountCheck{Series: out.CountSeries, GeneratorPerS: s.ThroughputPerS, Verdict: result.CountsUnchecked, Reason: out.CountSkip}
		} else {
			p.CountCheck = checkCount(out.CountSeries, out.CountOverlapS, out.CountWindowS, out.ServerMetrics, s.ThroughputPerS, int64(k.Batch)*int64(k.Connections))
		}
		switch p.CountCheck.Verdict {
		case result.CountsDisagree:
			base.Agents, base.CountCheck = p.Agents, p.CountCheck
			return failedPoint(base, countDisagreement(p), out.LogTail)
		case result.CountsUnchecked:
			p.Clean = false
			p.VerdictReason += "; its count is unchecked: " + p.CountCheck.Reason
		}
	}
	p.LowerBound = result.IsLowerBound(p.Verdict)
	return p
}

// lateNotBehind names the agents that started their window late
// (result.AgentReport.LateStart) and yet kept their schedule: the late
// "started" was then not starvation but a clock that was off, and the
// window did not line up.
func lateNotBehind(as []result.AgentReport) string {
	var late []string
	for _, a := range as {
		if a.LateStart && !a.Behind {
			late = append(late, fmt.Sprintf("agent %d started its window %v late (start skew over the limit) and kept its schedule: not starved, so its window may not have lined up with the others'", a.Index, time.Duration(a.StartSkewNs)))
		}
	}
	return strings.Join(late, "; ")
}

// failedPoint is p (as Point lays it out, before its figures) failed
// for reason, with its log tail.
func failedPoint(p result.Point, reason, logTail string) result.Point {
	p.Status, p.Verdict = result.StatusFailed, result.VerdictFailed
	p.FailReason, p.VerdictReason = reason, reason
	p.LogTail = logTail
	return p
}

// agentReports are the agents' parts of a point as its document lists
// them (nil without agents).
func agentReports(as []wire.Agent) []result.AgentReport {
	if as == nil {
		return nil
	}
	out := make([]result.AgentReport, len(as))
	for i, a := range as {
		out[i] = a.AgentReport
	}
	return out
}

// judgeAgents applies the generator half of the verdict rule to each agent
// alone (their CPU is the set's they share), by its own result in as (in
// the order of p.Agents): a point is generator-capped when any agent fell
// behind, and its reason names them.
func judgeAgents(p *result.Point, as []wire.Agent, th Thresholds, gen result.CPUStats) {
	if len(p.Agents) == 0 {
		return
	}
	p.Agents = slices.Clone(p.Agents)
	var behind []string
	for i := range p.Agents {
		a := &p.Agents[i]
		if i >= len(as) || as[i].Result == nil {
			continue
		}
		r := as[i].Result
		a.Behind, a.Evidence = generatorBehind(th, gen, r.Summary, r.Generator)
		if a.Behind && a.LateStart {
			a.Evidence += fmt.Sprintf("; its window's start was reported %v late", time.Duration(a.StartSkewNs))
		}
		if a.Behind {
			behind = append(behind, strconv.Itoa(a.Index))
		}
	}
	if len(behind) == 0 {
		return
	}
	switch p.Verdict {
	case result.VerdictServerSaturated:
		p.Verdict = result.VerdictBoth
	case result.VerdictNeither:
		p.Verdict = result.VerdictGeneratorCapped
	}
	p.VerdictReason += "; agent " + strings.Join(behind, ", ") + " fell behind"
}

// MeasuredClean is what clean asks of the generator's own summary: no
// errors, not saturated in open loop, and a throughput. It also needs every
// connection open and none lost: a point with fewer connections than its
// rung is another point. And a window in which nothing was measured is no
// measurement (a starved generator on a busy machine can produce one).
// Point adds the CPUs' side (not contended).
func MeasuredClean(s wire.Summary) bool {
	short := s.ConnectionsRequested > 0 && s.ConnectionsOpen < s.ConnectionsRequested
	dropped := s.Dropped != nil && *s.Dropped > 0
	return s.Errors == 0 && !s.Saturated && !short && !dropped && s.ThroughputPerS > 0
}

// Objective evaluates the sweep's objective (spec, config.objective; ""
// for none) on a measured point, on the generator's summary in out and
// the point's memory on both sides (server_memory.per_connection_bytes,
// generator_memory.peak_bytes). An objective that cannot be evaluated is
// not met, and says why.
func Objective(p *result.Point, spec string, out Outcome) {
	if spec == "" || p.Status != result.StatusOK || out.Load == nil {
		return
	}
	o, err := objective.Parse(spec)
	var res objective.Result
	if err == nil {
		var doc map[string]any
		if doc, err = objectiveDoc(out.Load.Summary, p); err == nil {
			res, err = o.Eval(doc)
		}
	}
	if err != nil {
		res = objective.Result{Conditions: []objective.Evaluated{{Why: "objective: " + err.Error()}}}
	}
	p.Objective = &res
}

// objectiveDoc is what an objective's paths name: the generator's
// summary, and beside its members the point's server_memory and
// generator_memory (absent where none was read: a condition on them is
// then not met).
func objectiveDoc(s wire.Summary, p *result.Point) (map[string]any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if p.ServerMemory != nil {
		doc["server_memory"] = p.ServerMemory
	}
	if p.GeneratorMemory != nil {
		doc["generator_memory"] = p.GeneratorMemory
	}
	return doc, nil
}
