package harness

import (
	"context"

	"github.com/ceiling-bench/ceiling/harness/meter"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"

	"github.com/ceiling-bench/ceiling/harness/supervise"
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

// readyExternal waits for an external server's ready probe, if the target
// has one: nothing is started, and nothing is stopped after.
func (p *pointRun) readyExternal(ctx context.Context) error {
	if p.target.Ready == "" {
		return nil
	}
	probe, err := supervise.ParseProbe(target.Expand(p.target.Ready, p.addr))
	if err != nil {
		return p.fail(PhaseReady, nil, "target ready: %v", err)
	}
	if err := supervise.WaitProbe(ctx, "external server", probe, p.pr.ready); err != nil {
		if ctx.Err() != nil {
			return p.interrupted(PhaseReady)
		}
		return p.fail(PhaseReady, nil, "external server never became ready: %v", err)
	}
	return nil
}

// measureExternal is measure for an external server: the generator's side
// as ever, the server's from its metrics once the after read is in.
func (p *pointRun) measureExternal(ctx context.Context, out *verdict.Outcome, run meter.Run, genDone <-chan struct{}, capture *scrape.Window) {
	select {
	case <-p.pr.clock().After(p.window):
	case <-genDone:
	case <-ctx.Done():
	}
	capture.WindowEnded(ctx)
	p.memWindow = run.Stop()
	_, out.GeneratorCPU, _ = meter.Sides(p.memWindow, p.srvCPUs, p.genCPUs, false)
	recordCapture(capture, out)
	out.ServerCPU = verdict.ExternalCPU(out.ServerMetrics, p.target.ExternalCPUs)
}
