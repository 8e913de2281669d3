package harness

import (
	"context"
	"path/filepath"
	"time"

	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
)

// External servers: a target with "external": true names a server someone
// else runs (a pod behind a Service, a staging host). The harness boots,
// pins, samples and stops nothing of it: before every point's load it
// polls the target's ready probe (if any), and its CPU over the window
// comes from the server's own metrics, the change of
// process_cpu_seconds_total between the reads that bracket the window,
// against the cores the target says it may use (external_cpus). Without
// both the server's CPU is unknown and no point can be server-saturated
// (verdict.Judge): the verdict is then never invented, only generator-capped,
// both or neither.

// externalServer is an external target's serverStage: nothing started,
// nothing stopped, nothing of it sampled.
type externalServer struct {
	ports portGiver
	dir   string
	ready time.Duration
	clock Clock
	set   *serverSet
}

func newExternalServer(e *procEnv, s pointSetup, dir string) *externalServer {
	return &externalServer{ports: portGiver{free: e.opts.FreePorts, host: e.host}, dir: dir, ready: e.ready, clock: e.opts.Clock,
		set: &serverSet{target: s.target, logDir: dir}}
}

// up waits for the target's ready probe, if it has one.
func (x *externalServer) up(ctx context.Context) (*serverSet, time.Duration, error) {
	addr, err := x.ports.addr(x.set.target, x.dir, nil)
	if err != nil {
		return nil, 0, failAt(PhaseFiles, nil, "%v", err)
	}
	x.set.addr = addr
	start := x.clock.Now()
	err = x.waitReady(ctx)
	return x.set, x.clock.Now().Sub(start), err
}

func (x *externalServer) waitReady(ctx context.Context) error {
	t := x.set.target
	if t.Ready == "" {
		return nil
	}
	probe, err := supervise.ParseProbe(target.Expand(t.Ready, x.set.addr))
	if err != nil {
		return failAt(PhaseReady, nil, "target ready: %v", err)
	}
	if err := supervise.WaitProbe(ctx, "external server", probe, x.ready); err != nil {
		if ctx.Err() != nil {
			return interruptedAt(PhaseReady)
		}
		return failAt(PhaseReady, nil, "external server never became ready: %v", err)
	}
	return nil
}

func (x *externalServer) down(context.Context, time.Duration) serversDown { return serversDown{} }

func (x *externalServer) logs() []string { return []string{filepath.Join(x.dir, "server.log")} }

// account: the generator's side as ever, the server's from its metrics.
func (x *externalServer) account(w meter.Window, s pointSetup, out *verdict.Outcome) {
	_, out.GeneratorCPU, _ = meter.Sides(w, s.srvCPUs, s.genCPUs, false)
	out.ServerCPU = verdict.ExternalCPU(out.ServerMetrics, s.target.ExternalCPUs)
}

// memory: an external server is nobody's child here; nothing of it is
// read.
func (x *externalServer) memory(meter.Window, []meter.Baseline, int, *verdict.Outcome) {}
