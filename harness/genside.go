package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/load"
)

// generatorSide is where a point's load comes from, as its pipeline
// (pointRun.run) drives it: start, wait for the marker, measure the
// window, collect, stop. Two strategies: the one generator process
// (genProc), or AGENTS' coordinator and agent processes
// (agentside.Run). A step's reason of "" is no failure; the process
// returned with a reason is the one whose log tail explains it (nil:
// none). The pipeline puts the reason in the phase it was in.
type generatorSide interface {
	// Start starts it for the point's url with its `ceiling load`
	// flags, in cgroup ("": none).
	Start(ctx context.Context, url string, flags []string, cgroup string) (tail supervise.Process, err error)
	// Procs are its processes on this machine started so far: their
	// trees are sampled and attributed, the first one's affinity read
	// back, their logs redacted, and they are stopped (by Name) when
	// the point ends.
	Procs() []supervise.Process
	// Group: the Procs are sampled at the same instants as one side.
	Group() bool
	// MarkerWait is how long after the warm-up the marker may take.
	MarkerWait() time.Duration
	// MarkerFailed is looked at before the servers, NoMarker after
	// them: why no marker will come, "" while it still may.
	MarkerFailed() (string, supervise.Process)
	NoMarker(overdue bool, wait time.Duration) (string, supervise.Process)
	// Finished is closed when it ended by itself; collect waits for it
	// at most CollectWait after the window (else StillRunning).
	Finished() <-chan struct{}
	CollectWait() time.Duration
	StillRunning(wait time.Duration) (string, supervise.Process)
	// Ended (before the servers are looked at) and Failed (after) judge
	// how it ended; ResultFailed is why its JSON could not be read.
	Ended(out *verdict.Outcome) (string, supervise.Process)
	Failed() (string, supervise.Process)
	ResultFailed(err error) (string, supervise.Process)
	// Release frees what it holds besides its processes, once they
	// stopped.
	Release()
}

// newSide is the point's generator side: AGENTS' agents, or the one
// generator.
func (p *pointRun) newSide() generatorSide {
	if p.pr.o.Agents.Count > 0 {
		return p.agentSide()
	}
	return &genProc{p: p}
}

// genProc is the one generator process: `ceiling load` or GENERATOR,
// pinned to the generator CPUs, writing the marker and the JSON itself.
type genProc struct {
	p    *pointRun
	proc supervise.Process
}

// Start starts the generator. A FAULT's point gives it the fault's split;
// a duet's, a start gate its partner opens with it.
func (g *genProc) Start(ctx context.Context, _ string, flags []string, cgroup string) (supervise.Process, error) {
	p, pr, spec := g.p, g.p.pr, g.p.spec
	args := append(append([]string(nil), pr.generator[1:]...), flags...)
	if p.fault != nil {
		args = append(args, p.fault.splitArgs...)
	}
	gate := filepath.Join(p.f.dir, "start.gate")
	if spec.Gate != nil {
		args = append(args, "--start-gate", gate)
	}
	gen, err := pr.starter().Start(ctx, supervise.Spec{
		Name: "generator", Path: pr.generator[0],
		Args:    args,
		Env:     []string{"GOMAXPROCS=" + strconv.Itoa(len(p.genCPUs))},
		Environ: target.ChildEnviron(os.Environ(), p.target.PassEnv, target.GeneratorEnvPrefixes),
		CPUs:    p.genCPUs,
		NoFile:  pr.o.noFile(),
		Cgroup:  cgroup, // joined before exec: capped from its first instruction, children too
		LogPath: p.f.genLog,
		Grace:   InterruptGrace(pr.grace),
	})
	if err != nil {
		return nil, fmt.Errorf("start generator: %v", err)
	}
	g.proc = gen
	if spec.Gate != nil {
		pids := []int{gen.Pid()}
		for _, s := range p.srvs {
			pids = append(pids, s.Pid())
		}
		spec.Gate.Register(spec.Half, gate, pids...)
	}
	return nil, nil
}

func (g *genProc) Procs() []supervise.Process {
	if g.proc == nil {
		return nil
	}
	return []supervise.Process{g.proc}
}

func (g *genProc) Group() bool { return false }

// MarkerWait is the connect bound, and the time the ramp of
// SCENARIO=connections takes to open the rung.
func (g *genProc) MarkerWait() time.Duration {
	return connectTimeout + g.p.pr.rampTime(g.p.spec.Key.Connections)
}

// MarkerFailed is "": a generator that exited may have lost its server,
// whose exit is the reason then (NoMarker).
func (g *genProc) MarkerFailed() (string, supervise.Process) { return "", nil }

func (g *genProc) NoMarker(overdue bool, wait time.Duration) (string, supervise.Process) {
	gen := g.proc
	switch {
	case gen.Exited():
		return fmt.Sprintf("generator exited before creating its measure marker (%s)%s", exitText(gen), lastWords(gen)), gen
	case overdue:
		return fmt.Sprintf("generator created no measure marker within warm-up + %s", wait), gen
	}
	return "", nil
}

func (g *genProc) Finished() <-chan struct{} { return g.proc.Done() }

// CollectWait: the drop check may wait load.DropTimeout for a server
// that no longer answers: that is its finding (server_up false), not a
// stuck generator.
func (g *genProc) CollectWait() time.Duration {
	if g.p.pr.o.Point.Drop {
		return exitTimeout + load.DropTimeout
	}
	return exitTimeout
}

func (g *genProc) StillRunning(wait time.Duration) (string, supervise.Process) {
	return fmt.Sprintf("generator still running %s after its window", wait), g.proc
}

func (g *genProc) Ended(*verdict.Outcome) (string, supervise.Process) { return "", nil }

// Failed: a generator that exits 0 without writing its JSON fails the
// point at ResultFailed (the files were fresh, so nothing older can stand
// in).
//
// A generator that exits non-zero says why in its JSON (summary.failure:
// nothing arrived, a refused preflight, its errors by reason) when it
// wrote one: the reason carries it, where the exit status alone said
// nothing a reader could act on.
func (g *genProc) Failed() (string, supervise.Process) {
	err := g.proc.ExitErr()
	if err == nil {
		return "", nil
	}
	why := fmt.Sprintf("generator failed (%v)", err)
	if res, rerr := readLoad(g.p.f.json); rerr == nil && res.Summary.Failure != "" {
		why += ": " + res.Summary.Failure
	}
	return why, g.proc
}

func (g *genProc) ResultFailed(err error) (string, supervise.Process) {
	return fmt.Sprintf("generator result: %v", err), g.proc
}

func (g *genProc) Release() {}
