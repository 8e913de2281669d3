package harness

import (
	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// attribRoots are the point's own process trees for attribution: the
// servers and the generator (or its local agents).
func (p *pointRun) attribRoots() attrib.Roots {
	var r attrib.Roots
	for _, s := range p.srvs {
		r.Server = append(r.Server, s.Pid)
	}
	if p.side != nil {
		for _, g := range p.side.Procs() {
			r.Generator = append(r.Generator, g.Pid)
		}
	}
	// AGENTS_LISTEN's agents are no child of ours; those that dialed in
	// from this machine are found by their sessions' addresses.
	if hub := p.pr.listenHub(); hub != nil {
		for _, pid := range procfs.TCPOwners(hub.Peers()) {
			r.Generator = append(r.Generator, pid)
		}
	}
	if g := p.spec.Gate; g != nil {
		r.Partner = g.partners(p.spec.Half)
	}
	return r
}

// attribution is a side's share of the report, or nil when the scan
// failed (then the residual rule decides, see Contention).
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

// listenHub is AGENTS_LISTEN's hub once a point opened it, else nil.
func (pr *ProcRunner) listenHub() *agents.Hub {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.hub
}
