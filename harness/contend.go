package harness

import (
	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// attribRoots are the point's own process trees for attribution: the
// servers and the generator (or its local agents).
func (p *pointRun) attribRoots() attrib.Roots {
	var r attrib.Roots
	for _, s := range p.srvs {
		r.Server = append(r.Server, s.Pid())
	}
	if p.side != nil {
		for _, g := range p.side.Procs() {
			r.Generator = append(r.Generator, g.Pid())
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
		r.Partner = g.Partners(p.spec.Half)
	}
	return r
}

// listenHub is AGENTS_LISTEN's hub once a point opened it, else nil.
func (pr *ProcRunner) listenHub() *agents.Hub {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.hub
}
