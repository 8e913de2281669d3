package harness

import (
	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// attribRoots are a point's own process trees for attribution: the
// servers and the generator (or its local agents); AGENTS_LISTEN's
// agents that dialed in from this machine through hub (nil: none), found
// by their sessions' addresses, since they are no child of ours; and in
// a duet its partner's.
func attribRoots(s pointSetup, set *serverSet, gen *generation, hub *agents.Hub) attrib.Roots {
	var r attrib.Roots
	for _, p := range set.procs {
		r.Server = append(r.Server, p.Pid())
	}
	for _, g := range gen.side.Procs() {
		r.Generator = append(r.Generator, g.Pid())
	}
	if hub != nil {
		for _, pid := range procfs.TCPOwners(hub.Peers()) {
			r.Generator = append(r.Generator, pid)
		}
	}
	if g := s.spec.Gate; g != nil {
		r.Partner = g.Partners(s.spec.Half)
	}
	return r
}
