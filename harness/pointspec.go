package harness

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/harness/duet"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// PointSpec is what a PointRunner is asked to measure.
type PointSpec struct {
	Index int // 1-based position in the run
	Role  string
	Key   result.PointKey
	// Arm is the server of a two-arm sweep (ArmBase, ArmHead); empty:
	// the one target.
	Arm string
	// Duration and Warmup are this point's window and warm-up when
	// Duration > 0 (the compare phase's); else the plan's.
	Duration, Warmup time.Duration
	// Warm: the point measures its arm's servers kept up between points
	// (ArmRunner.BootArm), thawed for it and frozen after it, instead of
	// booting and stopping its own.
	Warm bool
	// Half, in a duet, is the half of the machine the point runs on
	// (nil: the plan's CPUs), and Gate starts its load on the same
	// instant as its partner's (duet.go).
	Half *duet.Half
	Gate *duet.Gate
	// Profile asks for a CPU profile of the point's servers over its
	// window (harness/cpuprof): a two-arm sweep's profiled blocks, run
	// after its verdict. It never fails the point.
	Profile bool
}

// PointRunner measures one point: boot the server, run the generator,
// sample both sides, stop the server. ProcRunner is the real one.
type PointRunner interface {
	RunPoint(ctx context.Context, spec PointSpec) verdict.Outcome
}
