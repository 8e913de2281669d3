package harness

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/pinning"
)

// attribRoots are the point's own process trees for attribution: the
// servers and the generator (or its local agents).
func (p *pointRun) attribRoots() attrib.Roots {
	var r attrib.Roots
	for _, s := range p.srvs {
		r.Server = append(r.Server, s.Pid)
	}
	switch {
	case p.ag != nil:
		for _, a := range p.ag.procs {
			r.Generator = append(r.Generator, a.Pid)
		}
	case p.gen != nil:
		r.Generator = append(r.Generator, p.gen.Pid)
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

// maxNamed is how many foreign processes a side's Attribution names.
const maxNamed = 5

// attribution is a side's share of the report, or nil when the scan
// failed (then the residual rule decides, see Contention).
func attribution(r attrib.Report, cpus pinning.CPUSet) *Attribution {
	if r.Err != nil || r.Scans < 2 || r.WallSeconds <= 0 || len(cpus) == 0 {
		return nil
	}
	s := r.Share(cpus.Ints())
	a := &Attribution{Foreign: s.Foreign, Server: s.Server, Generator: s.Generator, Harness: s.Harness, Kernel: s.Kernel, Partner: s.Partner}
	for _, t := range s.Tasks {
		if t.Fraction < NameFraction || len(a.Tasks) == maxNamed {
			break
		}
		a.Tasks = append(a.Tasks, ForeignTask{Comm: t.Comm, Pid: t.Pid, Fraction: t.Fraction})
	}
	return a
}

// Contenders names who took the pinned CPUs of a curve's contended
// points, for the table's CONTENDED line and the warning: each foreign
// process with the most it took of a side's CPUs in any one point,
// largest first (at most maxNamed), and the most the hypervisor stole.
// "" when no contended point has a name to give (a document from before
// attribution).
func Contenders(curve []Point) string {
	type who struct {
		comm, side string
		pid        int
	}
	most := map[who]float64{}
	var order []who
	steal := 0.0
	for _, p := range curve {
		if !p.Contended {
			continue
		}
		for _, s := range []struct {
			side string
			c    CPUStats
		}{{"server", p.ServerCPU}, {"generator", p.GeneratorCPU}} {
			if Stolen(s.c) {
				steal = max(steal, s.c.StealFraction)
			}
			if a := s.c.Attribution; a != nil && a.Foreign > ForeignMax {
				for _, t := range a.Tasks {
					k := who{t.Comm, s.side, t.Pid}
					if _, ok := most[k]; !ok {
						order = append(order, k)
					}
					most[k] = max(most[k], t.Fraction)
				}
			}
		}
	}
	slices.SortStableFunc(order, func(a, b who) int { return cmp.Compare(most[b], most[a]) })
	var parts []string
	for i, k := range order {
		if i == maxNamed {
			parts = append(parts, fmt.Sprintf("and %d more", len(order)-maxNamed))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (pid %d) took up to %.0f%% of the %s CPUs", k.comm, k.pid, most[k]*100, k.side))
	}
	if steal > 0 {
		parts = append(parts, fmt.Sprintf("the hypervisor stole up to %.1f%%", steal*100))
	}
	return strings.Join(parts, ", ")
}

// listenHub is AGENTS_LISTEN's hub once a point opened it, else nil.
func (pr *ProcRunner) listenHub() *agents.Hub {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.hub
}
