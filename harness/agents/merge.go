package agents

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/atomicfile"
	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/load"
)

// Agent is one agent's part of a point as the coordinator hands it over
// (defined in internal/wire, so that the verdict that judges it links no
// agent): what the point's document lists (result.AgentReport) and the
// agent's own load.Result.
type Agent = wire.Agent

// Report is one agent's part of a point (Agent) and the coordinator's
// own state.
type Report struct {
	Agent
	latency, lag *load.Histogram
	joined       bool
	ready        bool
	started      bool
	done         bool
}

// Merge merges the agents' results into one load.Result for the point:
// counts and rates summed over the common window, latency from the merged
// histogram (checked configuration, no value dropped), the generator's
// evidence the worst agent's. It fails when any agent failed or when the
// merge would not be exact.
func Merge(reports []*Report, conns int, rate float64, windowNs int64) (*load.Result, error) {
	lat := load.NewHistogram()
	var lag *load.Histogram
	var res *load.Result
	var why []string
	for _, a := range reports {
		if a.Result == nil || a.latency == nil {
			return nil, fmt.Errorf("agent %d: no result", a.Index)
		}
		if f := a.Result.Summary.Failure; f != "" {
			return nil, fmt.Errorf("agent %d could not measure: %s", a.Index, f)
		}
		var err error
		if lag, err = mergeHistograms(a, lat, lag); err != nil {
			return nil, err
		}
		if res == nil {
			cp := *a.Result
			res = &cp
			res.Summary = load.Summary{}
			res.Generator = load.GeneratorStats{}
		}
		mergeSummary(&res.Summary, &a.Result.Summary, a.Index)
		mergeGenerator(&res.Generator, &a.Result.Generator)
		if a.Result.Summary.Saturated {
			why = append(why, fmt.Sprintf("agent %d: %s", a.Index, a.Result.Summary.SaturatedReason))
		}
	}
	if res == nil {
		return nil, fmt.Errorf("no agent reported")
	}
	finishSummary(&res.Summary, reports, conns, rate, windowNs, why)
	// Values out of the histogram's range each agent counted in its
	// errors already (latency_out_of_range): summed above.
	res.Summary.Latency = lat.Latency()
	finishGenerator(&res.Generator, reports, lag)
	res.Config.Connections = conns
	res.Config.Rate = rate
	res.Config.MeasureMarker = ""
	return res, nil
}

// mergeHistograms merges agent a's latency into lat and its schedule lag
// into lag (made on the first agent that has one), exactly: histograms
// of another configuration, or a value dropped, are an error.
func mergeHistograms(a *Report, lat, lag *load.Histogram) (*load.Histogram, error) {
	want := load.NewHistogram().Config()
	for name, h := range map[string]*load.Histogram{"latency": a.latency, "lag": a.lag} {
		if h != nil && h.Config() != want {
			return lag, fmt.Errorf("agent %d: %s histogram configuration %+v, want %+v: no exact merge", a.Index, name, h.Config(), want)
		}
	}
	if n, err := lat.MergeExact(a.latency); err != nil || n != 0 {
		return lag, fmt.Errorf("agent %d: latency histogram merge dropped %d values (%v)", a.Index, n, err)
	}
	if a.lag == nil {
		return lag, nil
	}
	if lag == nil {
		lag = load.NewHistogram()
	}
	if n, err := lag.MergeExact(a.lag); err != nil || n != 0 {
		return lag, fmt.Errorf("agent %d: lag histogram merge dropped %d values (%v)", a.Index, n, err)
	}
	return lag, nil
}

// finishSummary sets what the merged summary says of the whole point:
// the first agent's scenario and mode, the rate asked, the connections,
// the shortest window an agent measured, and every agent's saturation.
func finishSummary(s *load.Summary, reports []*Report, conns int, rate float64, windowNs int64, why []string) {
	first := reports[0].Result
	s.Scenario, s.Mode = first.Summary.Scenario, first.Summary.Mode
	if s.Mode == "open" {
		r := rate
		s.RequestedOpsPerS = &r
	}
	s.ConnectionsRequested = conns
	s.MeasuredNs = windowNs
	for _, a := range reports {
		s.MeasuredNs = min(s.MeasuredNs, a.Result.Summary.MeasuredNs) // a window cut short shows
	}
	s.Saturated = len(why) > 0
	s.SaturatedReason = strings.Join(why, "; ")
}

// finishGenerator sets the merged generator's figures that are not sums:
// the schedule lag, messages per read over every agent's reads, the load
// threads' delay fraction, and the agents' memory.
func finishGenerator(g *load.GeneratorStats, reports []*Report, lag *load.Histogram) {
	if lag != nil {
		g.ScheduleLag = lag.Latency()
	}
	if g.ReadSyscalls > 0 {
		// Each agent's own messages read (its scenario's counters, not
		// its summary's window count), over every agent's reads.
		var read float64
		for _, a := range reports {
			read += a.Result.Generator.MessagesPerRead * float64(a.Result.Generator.ReadSyscalls)
		}
		g.MessagesPerRead = read / float64(g.ReadSyscalls)
	}
	if lt := g.LoadThreads; lt != nil {
		lt.RunDelayFraction = load.DelayFraction(lt.RunNs, lt.RunDelayNs)
	}
	g.Memory = sumMemory(reports)
}

// mergeSummary adds one agent's summary: counts and per-second rates sum
// (each agent's rate is over its own window, the common one).
func mergeSummary(dst, src *load.Summary, index int) {
	dst.AttemptedOpsPerS += src.AttemptedOpsPerS
	dst.AchievedOpsPerS += src.AchievedOpsPerS
	dst.ThroughputPerS += src.ThroughputPerS
	dst.BytesPerS += src.BytesPerS
	dst.Messages += src.Messages
	dst.Errors += src.Errors
	if dst.ErrorsByReason == nil {
		dst.ErrorsByReason = map[string]int64{}
	}
	for k, v := range src.ErrorsByReason {
		dst.ErrorsByReason[k] += v
	}
	addPtr := func(dst **int64, src *int64) {
		if src == nil {
			return
		}
		if *dst == nil {
			*dst = new(int64)
		}
		**dst += *src
	}
	addPtr(&dst.Dropped, src.Dropped)
	addPtr(&dst.Reconnects, src.Reconnects)
	dst.ConnectionsOpen += src.ConnectionsOpen
	if len(src.Blocks) > 0 {
		// A scenario's own block has no generic merge: each agent's is
		// kept under agent_<i> until its scenario learns to merge it.
		if dst.Blocks == nil {
			dst.Blocks = map[string]json.RawMessage{}
		}
		keys := make([]string, 0, len(src.Blocks))
		for k := range src.Blocks {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			dst.Blocks[fmt.Sprintf("%s_agent_%d", k, index)] = src.Blocks[k]
		}
	}
}

// mergeGenerator makes the point's generator evidence the worst agent's
// (any agent behind is the point behind) and its CPU the sum.
func mergeGenerator(dst, src *load.GeneratorStats) {
	dst.CPUCores += src.CPUCores
	dst.CPUUserS += src.CPUUserS
	dst.CPUSystemS += src.CPUSystemS
	dst.ScheduleLagP99 = max(dst.ScheduleLagP99, src.ScheduleLagP99, src.ScheduleLag.P99)
	dst.LateSendsFrac = max(dst.LateSendsFrac, src.LateSendsFrac)
	dst.RunnableP99Ns = max(dst.RunnableP99Ns, src.RunnableP99Ns)
	dst.OSRunDelayNs = max(dst.OSRunDelayNs, src.OSRunDelayNs)
	dst.ReadSyscalls += src.ReadSyscalls
	if dst.Engine == "" {
		dst.Engine = src.Engine
	}
	if dst.IOPattern == "" {
		dst.IOPattern = src.IOPattern // every agent runs the same flags
	}
	if l := src.Loops; l != nil {
		if dst.Loops == nil {
			dst.Loops = &load.LoopStats{BusyFraction: []float64{}}
		}
		dst.Loops.Count += l.Count
		dst.Loops.BusyFraction = append(dst.Loops.BusyFraction, l.BusyFraction...)
		dst.Loops.MaxBusy = max(dst.Loops.MaxBusy, l.MaxBusy)
		dst.Loops.LagP99Ns = max(dst.Loops.LagP99Ns, l.LagP99Ns)
		dst.Loops.LagMaxNs = max(dst.Loops.LagMaxNs, l.LagMaxNs)
	}
	if t := src.LoadThreads; t != nil {
		if dst.LoadThreads == nil {
			dst.LoadThreads = &load.ThreadStats{}
		}
		d := dst.LoadThreads
		d.Threads += t.Threads
		d.RunNs += t.RunNs
		d.RunDelayNs += t.RunDelayNs
		d.MaxThreadFraction = max(d.MaxThreadFraction, t.MaxThreadFraction)
	}
}

// merge merges the agents' results into the Outcome and writes the
// merged result and the agents' reports where the plan asks.
func (pt *point) merge() (*Outcome, error) {
	p, out := pt.p, pt.out
	merged, err := Merge(pt.reports, p.Connections, p.Rate, int64(p.Duration))
	if err != nil {
		return pt.fail(invalid("%v", err))
	}
	out.Merged = merged
	pt.listOut()

	if p.JSON != "" {
		if err := load.WriteJSONFile(p.JSON, merged); err != nil {
			return out, err
		}
		b, err := json.MarshalIndent(out.Agents, "", "  ")
		if err == nil {
			err = atomicfile.Write(filepath.Join(filepath.Dir(p.JSON), "agents.json"), append(b, '\n'))
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// sumMemory is the agents' own memory summed, reading by reading: the
// generator's as a whole. Nil unless every agent reported it, in one
// measure.
func sumMemory(reports []*Report) *load.SelfMemory {
	var sum *load.SelfMemory
	for _, a := range reports {
		m := a.Result.Generator.Memory
		switch {
		case m == nil, sum != nil && m.Measure != sum.Measure:
			return nil
		case sum == nil:
			sum = &load.SelfMemory{Measure: m.Measure}
		}
		sum.BeforeConnectBytes += m.BeforeConnectBytes
		sum.WindowStartBytes += m.WindowStartBytes
		sum.WindowEndBytes += m.WindowEndBytes
	}
	return sum
}
