package harness

import (
	"time"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// Bounds on the phases of a point that have no knob, so that a stuck child
// fails its point instead of hanging the sweep.
const (
	connectTimeout = 60 * time.Second // spawn to marker, on top of the warm-up
	exitTimeout    = 30 * time.Second // window end to the generator's exit
)

// procEnv is what every point of a ProcRunner reads, set once by
// NewProcRunner (and SetBase, before the first point): the plan, the
// seams with their defaults filled in, the generator's command and the
// servers' bounds; and the sweep-wide records the points add to, each
// behind its own lock.
type procEnv struct {
	plan      *Plan
	opts      ProcOptions
	agents    agentside.Env
	generator []string // argv before the load flags
	// ready is the servers' readiness timeout, grace their stop grace:
	// the longer of both arms' targets' (unless --ready-timeout).
	ready, grace time.Duration
	head         target.Spec
	base         *target.Spec // a two-arm sweep's base arm (PointSpec.Arm), else nil
	host         string       // {host}: the agents' way to the servers ("" loopback)

	grants   *grants
	late     *lateWork
	hub      *remoteHub
	arms     *armRegistry
	profiler *lazyProfiler
}

// pointSetup is what a point is, before anything of it runs: its
// server (a two-arm sweep's arm), window and warm-up, its CPU sets (the
// plan's, or its duet half's) and the identity its servers start with.
type pointSetup struct {
	spec             PointSpec
	scenario         string // SCENARIO
	target           target.Spec
	window, warmup   time.Duration
	srvCPUs, genCPUs pinning.CPUSet
	runAs            *runas.User
}

// setup is spec's pointSetup.
func (e *procEnv) setup(spec PointSpec) pointSetup {
	o := e.plan
	s := pointSetup{spec: spec, scenario: o.Point.Scenario, target: e.head, window: o.Point.Duration, warmup: o.Point.Warmup,
		srvCPUs: o.CPUs.Server, genCPUs: o.CPUs.Generator, runAs: o.RunAs}
	if spec.Arm == result.ArmBase {
		// The base's code is trusted, and as the harness's user it is
		// out of the head's reach (a server may signal its own user's
		// processes).
		s.runAs = nil
		if e.base != nil {
			s.target = *e.base
		}
	}
	if spec.Duration > 0 {
		s.window, s.warmup = spec.Duration, spec.Warmup
	}
	if h := spec.Half; h != nil {
		s.srvCPUs, s.genCPUs = h.Server, h.Generator
	}
	return s
}
