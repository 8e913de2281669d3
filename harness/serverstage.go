package harness

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// serverStage is how a point has its servers, chosen once for the point
// (newPoint): booted afresh for it (freshServers, boot.go), a warm arm's
// kept up between points, thawed for it (warmServers, warmarm.go), or an
// external server someone else runs, probed (externalServer,
// external.go). The pipeline runs every variant the same way; what
// differs is each variant's own.
type serverStage interface {
	// up brings the servers up, and says what that cost the point: its
	// own servers' boot (start to readiness), an external one's probe;
	// nothing for a warm arm's.
	up(ctx context.Context) (*serverSet, time.Duration, error)
	// down takes them down once the generator stopped, each with grace
	// (cut short by an interrupt): stopped, frozen again, or left alone.
	down(ctx context.Context, grace time.Duration) serversDown
	// logs are the server logs the point redacts when it ends (a warm
	// arm's are its arm's, redacted when the arm stops).
	logs() []string
	// account puts the servers' side of the window on out: the sampled
	// trees' CPU (and each server's share), or an external server's
	// from its metrics (out.ServerMetrics, recorded before).
	account(w meter.Window, cpus pointSetup, out *verdict.Outcome)
	// memory puts the servers' memory on out, per connection over open
	// ones, from their baselines (before the generator) and the window.
	memory(w meter.Window, base []meter.Baseline, open int, out *verdict.Outcome)
}

// serversDown is what taking a point's servers down found: the ones
// SIGKILLed after their grace, what escaped their containment, the
// first stop error, its cost (SIGTERM to exit and free ports, for a
// point's own servers) and whether a warm arm went down.
type serversDown struct {
	escalated []string
	escaped   []result.EscapedProcess
	err       error
	cost      time.Duration
	armDown   bool
}

// ownServers is the window's account of servers that are processes of
// the harness's (booted for the point, or a warm arm's): their trees'
// CPU, each one's share by name and URL, their memory.
type ownServers struct{ set *serverSet }

func (o ownServers) account(w meter.Window, s pointSetup, out *verdict.Outcome) {
	var parts []result.CPUStats
	out.ServerCPU, out.GeneratorCPU, parts = meter.Sides(w, s.srvCPUs, s.genCPUs, s.target.Multi())
	if len(parts) == 0 {
		return
	}
	urls := o.set.cluster(s.scenario).Served(o.set.addr)
	for i, c := range parts {
		out.Servers = append(out.Servers, result.NamedCPU{Name: o.set.booted[i].Name, URL: urls[i], CPUStats: c})
	}
}

func (o ownServers) memory(w meter.Window, base []meter.Baseline, open int, out *verdict.Outcome) {
	out.ServerMemory = meter.ServerMemory(w, base, o.set.names(), open)
}
