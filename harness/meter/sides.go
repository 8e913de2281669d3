package meter

import (
	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// Sides is each side's CPU over a window: the trees' CPU against the
// pinned cores, how busy the cores were and the steal, the two sides'
// use of each other's cores when the sets overlap, and who else ran on
// them. servers are each server's own share (when each: a target that
// lists its servers), with the set's busy, steal and attribution. For an
// external server, server is left for its metrics (verdict.ExternalCPU)
// and only the generator's is made.
func Sides(w Window, srvSet, genSet pinning.CPUSet, each bool) (server, generator result.CPUStats, servers []result.CPUStats) {
	generator = cpuStats(w.Generator, len(genSet))
	g := w.GeneratorCores
	pinnedCPU(&generator, g.Start, g.End, g.StartOK, g.EndOK)
	if w.External {
		generator.Attribution = attribution(w.Who, genSet)
		return result.CPUStats{}, generator, nil
	}
	pinned := len(srvSet)
	server = cpuStats(w.Server, pinned)
	s := w.ServerCores
	pinnedCPU(&server, s.Start, s.End, s.StartOK, s.EndOK)
	attributeOverlap(&server, &generator, srvSet, genSet)
	server.Attribution = attribution(w.Who, srvSet)
	generator.Attribution = attribution(w.Who, genSet)
	if each {
		for _, st := range w.Servers {
			c := cpuStats(st, pinned)
			// The pinned CPUs are the servers' together: how busy they
			// were, and the steal, are the set's.
			c.PinnedBusy, c.StealFraction = server.PinnedBusy, server.StealFraction
			c.Attribution = server.Attribution
			servers = append(servers, c)
		}
	}
	return server, generator, servers
}

// cpuStats is one side's sampled CPU against its pinned cores.
func cpuStats(s cpusample.Stats, pinned int) result.CPUStats {
	c := result.CPUStats{
		Samples:       s.Samples,
		MeanCores:     s.MeanCores,
		P95Cores:      s.P95Cores,
		PinnedCores:   pinned,
		UserSeconds:   s.UserSeconds,
		SystemSeconds: s.SystemSeconds,
	}
	c.FractionMean, c.FractionP95 = s.Fraction(pinned)
	return c
}

// attribution is a side's share of the report, or nil when the scan
// failed (then the residual rule decides, see result.Contention).
func attribution(r attrib.Report, cpus pinning.CPUSet) *result.Attribution {
	if r.Err != nil || r.Scans < 2 || r.WallSeconds <= 0 || len(cpus) == 0 {
		return nil
	}
	s := r.Share(cpus.Ints())
	a := &result.Attribution{Foreign: s.Foreign, Server: s.Server, Generator: s.Generator, Harness: s.Harness, Kernel: s.Kernel, Partner: s.Partner}
	for _, t := range s.Tasks {
		if t.Fraction < result.NameFraction || len(a.Tasks) == result.MaxNamed {
			break
		}
		a.Tasks = append(a.Tasks, result.ForeignTask{Comm: t.Comm, Pid: t.Pid, Fraction: t.Fraction})
	}
	return a
}
