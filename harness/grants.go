package harness

import (
	"fmt"
	"slices"
	"sync"

	"github.com/ceiling-bench/ceiling/harness/duet"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// grants are what the machine granted a sweep's points, read back from
// their processes as they start: each side's affinity (the first point's
// that booted it), the lowest file limit, the headroom probe's cgroup
// version, and a duet's second half's mismatches. Points add to it, at
// once in a duet; the result takes it at the end (record).
type grants struct {
	mu                sync.Mutex
	server, generator pinning.CPUSet
	noFile            uint64
	cgroup            string // the headroom probe's cgroup version, once used
	halfWarnings      []string
}

// note reads back the affinity the kernel granted pid, whose side
// ("server", "generator") asked for asked on half (nil: no duet): the
// first of the first half's (or of a sweep that is no duet) is the
// side's; a duet's second half is checked here, its mismatch kept for
// record's warnings.
func (g *grants) note(side string, half *duet.Half, asked pinning.CPUSet, pid int) {
	set, err := pinning.Granted(pid)
	if err != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	dst := &g.server
	if side == "generator" {
		dst = &g.generator
	}
	switch {
	case half == nil || half.Name == duet.HalfA:
		if *dst == nil {
			*dst = set
		}
	case set.String() != asked.String():
		w := fmt.Sprintf("duet half %s: %s asked for CPUs %s but the kernel granted %s", half.Name, side, asked, set)
		if !slices.Contains(g.halfWarnings, w) {
			g.halfWarnings = append(g.halfWarnings, w)
		}
	}
	if n, err := pinning.NoFile(pid); err == nil && (g.noFile == 0 || n < g.noFile) {
		g.noFile = n
	}
}

// usedCgroup records the cgroup version the headroom probe capped its
// generator with.
func (g *grants) usedCgroup(version int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cgroup = fmt.Sprintf("v%d", version)
}

// record copies what was granted into r, and warns where it differs
// from what cpus asked for.
func (g *grants) record(r *result.Result, cpus knob.CPUs) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r.Meta.Pinning.ServerGranted = g.server.Ints()
	r.Meta.Pinning.GeneratorGranted = g.generator.Ints()
	if g.noFile > 0 {
		r.Meta.Pinning.NoFileLimit = g.noFile
	}
	if r.HeadroomProbe != nil {
		r.HeadroomProbe.Cgroup = g.cgroup
	}
	if g.server != nil && g.server.String() != cpus.Server.String() {
		r.Warn(fmt.Sprintf("server asked for CPUs %s but the kernel granted %s", cpus.Server, g.server))
	}
	if g.generator != nil && g.generator.String() != cpus.Generator.String() {
		r.Warn(fmt.Sprintf("generator asked for CPUs %s but the kernel granted %s", cpus.Generator, g.generator))
	}
	for _, w := range g.halfWarnings {
		r.Warn(w)
	}
}
