package harness

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/result"
)

// pointProfile is a profiled point's CPU profile (PointSpec.Profile,
// harness/cpuprof) over its window: perf on its servers' processes, or
// the target's profile URL where it names one; or, with --profile, whose
// window's capture already fetches that URL (a Go server serves one CPU
// profile at a time), the file the capture fetched. nil for a point that
// asks none, and for an external server's: the harness profiles only the
// servers it boots. Every method is a no-op on nil.
type pointProfile struct {
	rec    *cpuprof.Recording // nil: the capture's file
	window time.Duration
}

// startProfile prepares a point's profile once its servers are ready
// (measure enables it as the window opens).
func startProfile(ctx context.Context, p *lazyProfiler, s pointSetup, set *serverSet, dir, profileDir string) *pointProfile {
	if !s.spec.Profile || s.target.External {
		return nil
	}
	pp := &pointProfile{window: s.window}
	c := cpuprof.Spec{Dir: dir, Window: s.window, CPUs: s.srvCPUs.Ints()}
	if t := s.target.Profile; t != nil && t.URL != "" {
		if profileDir != "" {
			return pp
		}
		c.PprofURL = target.ExpandProfile(t.URL, set.addr, s.window)
	} else {
		c.Pids = func() []int {
			var pids []int
			for _, srv := range set.procs {
				pids = append(pids, programs(srv.Pid())...)
			}
			return pids
		}
	}
	pp.rec = p.get().Start(ctx, c)
	return pp
}

// programs are the processes below a server's supervisor (the program
// and what it forked), or the root itself when it has none.
func programs(root int) []int {
	if kids, err := procfs.Descendants(root); err == nil && len(kids) > 0 {
		return kids
	}
	return []int{root}
}

// enable starts the sampling: the window opened.
func (pp *pointProfile) enable() {
	if pp != nil {
		pp.rec.Enable()
	}
}

// windowEnded stops it.
func (pp *pointProfile) windowEnded() {
	if pp != nil {
		pp.rec.WindowEnded()
	}
}

// finish ends the recording, whatever became of the point.
func (pp *pointProfile) finish() {
	if pp != nil {
		pp.rec.Finish()
	}
}

// record puts the profile on out.
func (pp *pointProfile) record(out *verdict.Outcome) {
	switch {
	case pp == nil:
	case pp.rec != nil:
		out.CPUProfile = pp.rec.Finish()
	case out.ProfileFile != "":
		out.CPUProfile = &result.CPUProfile{Tool: result.ProfilerPprof, File: out.ProfileFile, DurationNs: int64(pp.window)}
	default:
		out.CPUProfile = &result.CPUProfile{Tool: result.ProfilerPprof, Reason: "the target's profile: " + out.ProfileError}
	}
}
