package harness

import (
	"context"

	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/result"
)

// profiler is the runner's Profiler.
func (pr *ProcRunner) profiler() *cpuprof.Profiler {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.Profiler == nil {
		pr.Profiler = cpuprof.New(cpuprof.Real())
	}
	return pr.Profiler
}

// startProfile prepares a profiled point's CPU profile once its servers
// are ready (nil for any other point; measure enables it as the window
// opens): the target's profile URL where it names
// one, else perf on the servers' processes. With --profile the window's
// capture already fetches that URL (a Go server serves one CPU profile at
// a time): recordProfile takes the capture's file instead.
func (p *pointRun) startProfile(ctx context.Context) *cpuprof.Recording {
	if !p.spec.Profile || p.target.External {
		return nil
	}
	s := cpuprof.Spec{Dir: p.f.dir, Window: p.window, CPUs: p.srvCPUs.Ints()}
	if t := p.target.Profile; t != nil && t.URL != "" {
		if p.pr.o.Point.ProfileDir != "" {
			return nil
		}
		s.PprofURL = target.ExpandProfile(t.URL, p.addr, p.window)
	} else {
		s.Pids = func() []int {
			var pids []int
			for _, srv := range p.srvs {
				pids = append(pids, programs(srv.Pid())...)
			}
			return pids
		}
	}
	return p.pr.profiler().Start(ctx, s)
}

// programs are the processes below a server's supervisor (the program
// and what it forked), or the root itself when it has none.
func programs(root int) []int {
	if kids, err := procfs.Descendants(root); err == nil && len(kids) > 0 {
		return kids
	}
	return []int{root}
}

// recordProfile puts a profiled point's profile on out.
func (p *pointRun) recordProfile(out *verdict.Outcome) {
	if !p.spec.Profile {
		return
	}
	switch {
	case p.prof != nil:
		out.CPUProfile = p.prof.Finish()
	case p.target.External:
		out.CPUProfile = &result.CPUProfile{Reason: "an external server: the harness profiles only the servers it boots"}
	case out.ProfileFile != "":
		out.CPUProfile = &result.CPUProfile{Tool: result.ProfilerPprof, File: out.ProfileFile, DurationNs: int64(p.window)}
	default:
		out.CPUProfile = &result.CPUProfile{Tool: result.ProfilerPprof, Reason: "the target's profile: " + out.ProfileError}
	}
}

// ProfileDiff compares the profiled points of both arms: TwoArmRunner.
func (pr *ProcRunner) ProfileDiff(ctx context.Context, points []result.Point, dir, relTo string) *result.ProfileDiff {
	return pr.profiler().Diff(ctx, cpuprof.DiffInput{Points: points, Dir: dir, RelTo: relTo,
		Title: "CPU per message, head against base"})
}
