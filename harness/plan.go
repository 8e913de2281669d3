package harness

import (
	"errors"

	"github.com/ceiling-bench/ceiling/calibrate"
	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/redact"
)

// Plan is one sweep resolved once: every knob with its default filled in
// (by the knob table, a target block, a scenario, or this machine), split
// by the part of the run that reads it (knob.Groups), the target files
// read once each with the flag overrides applied, the secrets to redact,
// and a note for each default that did not come from the knob table.
// Resolve makes it and Run only reads it; nothing found while the sweep
// runs is written back into it. Nothing after Resolve reads knob.Options.
type Plan struct {
	CPUs     knob.CPUs
	Schedule knob.Schedule
	Point    knob.Point
	Compare  knob.Compare
	Fault    knob.Fault
	Agents   knob.Agents
	Files    knob.Files

	// Target is TARGET with --server-cmd, --url, --ready and the
	// scenario's defaults applied; BaseTarget is BASE_TARGET (a two-arm
	// sweep), nil in a single-arm one. A plan of knobs alone
	// (ResolveKnobs) has neither and cannot be Run.
	Target     target.Spec
	BaseTarget *target.Spec
	targeted   bool

	// Secrets are redacted from everything the sweep writes.
	Secrets *redact.Set
	// AgentsTLS is AGENTS_TLS_*, checked: the coordinator's side of
	// mutual TLS with the remote agents, read again when the hub opens
	// (a tls.Config is not a plan: it changes as it is used). Zero: none.
	AgentsTLS agents.TLSFiles
	// RunAs is SRV_USER resolved; nil: servers run as the harness.
	RunAs *runas.User
	// Calibration is CALIBRATION's document, read and checked.
	Calibration *calibrate.Doc
	// Notes say where each default that is not the knob table's came
	// from (the CPU sets for this machine, a ladder from the scenario
	// file, the objective from the target block).
	Notes []string
	// NoFile is the RLIMIT_NOFILE the servers and the generators ask
	// for: NoFileLimit, or more when a process's share of the largest
	// rung needs it (limits.Want). 0 in a plan made by hand: NoFileLimit.
	NoFile uint64
}

// NoFileLimit is the RLIMIT_NOFILE both children get at least: every
// socket is a file on both sides.
const NoFileLimit = 1 << 16

// errNoTarget: Run was given a plan of knobs alone.
var errNoTarget = errors.New("harness: Run needs a plan with its target (Resolve, not ResolveKnobs)")

// noFile is the RLIMIT_NOFILE each child asks for.
func (p *Plan) noFile() uint64 {
	if p.NoFile == 0 {
		return NoFileLimit
	}
	return p.NoFile
}
