package harness

import (
	"github.com/ceiling-bench/ceiling/result"
)

// The document model lives in package result (the data and the pure
// functions over it: decide, format, redact), which publish reads without
// the harness. These names keep the harness and its tests reading as
// before; new code uses package result directly.

type (
	AgentReport    = result.AgentReport
	Block          = result.Block
	NearCap        = result.NearCap
	Result         = result.Result
	Meta           = result.Meta
	Runner         = result.Runner
	Pinning        = result.Pinning
	Target         = result.Target
	TargetServer   = result.TargetServer
	Config         = result.Config
	PointKey       = result.PointKey
	Headline       = result.Headline
	CPUStats       = result.CPUStats
	Attribution    = result.Attribution
	ForeignTask    = result.ForeignTask
	NamedCPU       = result.NamedCPU
	Point          = result.Point
	EscapedProcess = result.EscapedProcess
	BatchCeiling   = result.BatchCeiling
	HeadroomProbe  = result.HeadroomProbe
	Comparison     = result.Comparison
	ComparedPoint  = result.ComparedPoint
	UnpairedTest   = result.UnpairedTest
	ArmStats       = result.ArmStats
	MetricsSpec    = result.MetricsSpec
	ServerMetrics  = result.ServerMetrics
	MetricSeries   = result.MetricSeries
)

const (
	CompareGate            = result.CompareGate
	ComparePrimary         = result.ComparePrimary
	CompareMethod          = result.CompareMethod
	StopPocock             = result.StopPocock
	StopOBF                = result.StopOBF
	StopFixed              = result.StopFixed
	DefaultCompareStop     = result.DefaultCompareStop
	DefaultAlpha           = result.DefaultAlpha
	DefaultCompareReps     = result.DefaultCompareReps
	MDCPower               = result.MDCPower
	MaxNamed               = result.MaxNamed
	NearCapMark            = result.NearCapMark
	ForeignMax             = result.ForeignMax
	NameFraction           = result.NameFraction
	SharedMargin           = result.SharedMargin
	StealMax               = result.StealMax
	RoleHeadroom           = result.RoleHeadroom
	RoleResilience         = result.RoleResilience
	HeadroomTolerancePct   = result.HeadroomTolerancePct
	SchemaVersion          = result.SchemaVersion
	OldestSchemaVersion    = result.OldestSchemaVersion
	VerdictServerSaturated = result.VerdictServerSaturated
	VerdictGeneratorCapped = result.VerdictGeneratorCapped
	VerdictBoth            = result.VerdictBoth
	VerdictNeither         = result.VerdictNeither
	VerdictFailed          = result.VerdictFailed
	RoleSweep              = result.RoleSweep
	RoleAARepeat           = result.RoleAARepeat
	RoleCompare            = result.RoleCompare
	ArmBase                = result.ArmBase
	ArmHead                = result.ArmHead
	CompareFaster          = result.CompareFaster
	CompareSlower          = result.CompareSlower
	CompareWithinNoise     = result.CompareWithinNoise
	CompareCannotConclude  = result.CompareCannotConclude
	P99Better              = result.P99Better
	P99Worse               = result.P99Worse
	StatusOK               = result.StatusOK
	StatusFailed           = result.StatusFailed
)

var (
	SequentialLevel  = result.SequentialLevel
	DecideComparison = result.DecideComparison
	Blocks           = result.Blocks
	ComparePoint     = result.ComparePoint
	CleanRepeat      = result.CleanRepeat
	WriteComparison  = result.WriteComparison
	ComparedLine     = result.ComparedLine
	Contenders       = result.Contenders
	Shared           = result.Shared
	Stolen           = result.Stolen
	IsLowerBound     = result.IsLowerBound
	Contention       = result.Contention
	FormatRate       = result.FormatRate
	FormatLatency    = result.FormatLatency
	RedactResult     = result.RedactResult
	RedactTargetArgs = result.RedactTargetArgs
	NoiseFloorPct    = result.NoiseFloorPct
	Regime           = result.Regime
	Rate             = result.Rate
)
