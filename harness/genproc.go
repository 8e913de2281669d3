package harness

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/harness/duet"
	"github.com/ceiling-bench/ceiling/harness/side"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/load"
)

// genProc is the one generator process (side.Generator): `ceiling load`
// or GENERATOR, pinned to the generator CPUs, writing the marker and the
// JSON itself.
type genProc struct {
	starter Starter
	argv    []string       // the command, before the point's flags
	extra   []string       // after them: a fault's split
	run     supervise.Spec // what it runs as: CPUs, limits, environment, log
	json    string
	bounds  side.Bounds
	// In a duet, the gate its partner opens with it (gateFile, its
	// --start-gate) and the half it runs on; servers are the point's
	// processes it registers with the gate.
	gate     *duet.Gate
	half     *duet.Half
	gateFile string
	servers  []supervise.Process
	proc     supervise.Process
}

var _ side.Generator = (*genProc)(nil)

// newGenProc is the generator of a point of setup s, its files f, its
// servers set and its fault.
func newGenProc(e *procEnv, s pointSetup, f pointFiles, set *serverSet, fs faultStage) *genProc {
	collect := exitTimeout
	if e.plan.Point.Drop {
		// The drop check may wait load.DropTimeout for a server that no
		// longer answers: that is its finding (server_up false), not a
		// stuck generator.
		collect += load.DropTimeout
	}
	return &genProc{
		starter: e.opts.Starter, argv: e.generator, extra: fs.splitArgs(), json: f.json,
		run: supervise.Spec{
			Name: "generator", Path: e.generator[0],
			Env:     []string{"GOMAXPROCS=" + strconv.Itoa(len(s.genCPUs))},
			Environ: target.ChildEnviron(os.Environ(), s.target.PassEnv, target.GeneratorEnvPrefixes),
			CPUs:    s.genCPUs, NoFile: e.plan.noFile(), LogPath: f.genLog,
			Grace: InterruptGrace(e.grace),
		},
		// The marker waits for the connect bound, and the time the ramp
		// of SCENARIO=connections takes to open the rung.
		bounds: side.Bounds{Window: connectTimeout + rampTime(e.plan.Point, s.spec.Key.Connections), End: collect},
		gate:   s.spec.Gate, half: s.spec.Half, gateFile: f.gate, servers: set.procs,
	}
}

// Start starts the generator, in cgroup (joined before exec: capped from
// its first instruction, children too). A duet's registers with its
// gate.
func (g *genProc) Start(ctx context.Context, _ string, flags []string, cgroup string) (supervise.Process, error) {
	spec := g.run
	spec.Args = append(append(append([]string(nil), g.argv[1:]...), flags...), g.extra...)
	if g.gate != nil {
		spec.Args = append(spec.Args, "--start-gate", g.gateFile)
	}
	spec.Cgroup = cgroup
	gen, err := g.starter.Start(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("start generator: %v", err)
	}
	g.proc = gen
	if g.gate != nil {
		pids := []int{gen.Pid()}
		for _, s := range g.servers {
			pids = append(pids, s.Pid())
		}
		g.gate.Register(g.half, g.gateFile, pids...)
	}
	return nil, nil
}

func (g *genProc) Procs() []supervise.Process {
	if g.proc == nil {
		return nil
	}
	return []supervise.Process{g.proc}
}

func (g *genProc) Done() <-chan struct{} { return g.proc.Done() }

func (g *genProc) Bounds() side.Bounds { return g.bounds }

// Why: a generator that exited before its window failed (a server that
// exited first is the reason then, which the pipeline looks at before).
func (g *genProc) Why(step side.Step, wait time.Duration, err error) (string, supervise.Process) {
	gen := g.proc
	switch step {
	case side.Unready:
		if gen.Exited() {
			return fmt.Sprintf("generator exited before creating its measure marker (%s)%s", exitText(gen), lastWords(gen)), gen
		}
		return "", nil
	case side.Overdue:
		return fmt.Sprintf("generator created no measure marker within warm-up + %s", wait), gen
	case side.StillRunning:
		return fmt.Sprintf("generator still running %s after its window", wait), gen
	}
	return fmt.Sprintf("generator result: %v", err), gen
}

// Ended: a generator that exits 0 without writing its JSON fails the
// point at side.Result (the files were fresh, so nothing older can stand
// in).
//
// A generator that exits non-zero says why in its JSON (summary.failure:
// nothing arrived, a refused preflight, its errors by reason) when it
// wrote one: the reason carries it, where the exit status alone said
// nothing a reader could act on.
func (g *genProc) Ended(*verdict.Outcome) (string, supervise.Process) {
	err := g.proc.ExitErr()
	if err == nil {
		return "", nil
	}
	why := fmt.Sprintf("generator failed (%v)", err)
	if res, rerr := readLoad(g.json); rerr == nil && res.Summary.Failure != "" {
		why += ": " + res.Summary.Failure
	}
	return why, g.proc
}

func (g *genProc) Release() {}
