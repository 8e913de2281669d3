package harness

import (
	"context"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// ArmRunner keeps a two-arm sweep's servers up between points (warm arms,
// COMPARE_ARMS): BootArm boots an arm's servers afresh (stopping any it
// kept), waits for their readiness and freezes them until a point thaws
// them; StopArm stops them. ProcRunner is the real one.
type ArmRunner interface {
	BootArm(ctx context.Context, arm string) ArmOutcome
	StopArm(ctx context.Context, arm string) ArmOutcome
}

// ArmOutcome is a warm arm's boot or stop: its time (start to readiness,
// or SIGTERM to exit and free ports), and why it failed.
type ArmOutcome struct {
	Cost       time.Duration
	FailReason string
	LogTail    string
	Escalated  []string
	Escaped    []result.EscapedProcess
}

// TwoArmRunner is what a two-arm sweep runs its steps with.
type TwoArmRunner interface {
	PointRunner
	ArmRunner
	// ProfileDiff compares the profiled points of both arms
	// (harness/cpuprof: it reads what perf recorded), writing its files
	// in dir; relTo is the result's directory.
	ProfileDiff(ctx context.Context, points []result.Point, dir, relTo string) *result.ProfileDiff
	// ProfileUnable is why this machine can take no profile ("": it
	// can): a two-arm sweep then runs no profiled blocks.
	ProfileUnable() string
}

// twoArmSide is what a two-arm runner does beside its points.
type twoArmSide interface {
	ArmRunner
	ProfileDiff(ctx context.Context, points []result.Point, dir, relTo string) *result.ProfileDiff
	ProfileUnable() string
}
