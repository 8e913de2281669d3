package harness

import (
	"github.com/ceiling-bench/ceiling/calibrate"
	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/redact"
)

// draft is a Plan being resolved: the knobs as given, filled in and
// checked by Resolve's steps, then split into the Plan (plan).
type draft struct {
	knob.Options
	Target      target.Spec
	BaseTarget  *target.Spec
	AgentsTLS   agents.TLSFiles
	RunAs       *runas.User
	Calibration *calibrate.Doc
	Notes       []string
	NoFile      uint64
}

// plan splits the resolved knobs by reader.
func (d *draft) plan(secrets *redact.Set) *Plan {
	g := d.Groups()
	return &Plan{CPUs: g.CPUs, Schedule: g.Schedule, Point: g.Point, Compare: g.Compare, Fault: g.Fault, Agents: g.Agents, Files: g.Files,
		Target: d.Target, BaseTarget: d.BaseTarget, Secrets: secrets, AgentsTLS: d.AgentsTLS, RunAs: d.RunAs, Calibration: d.Calibration, Notes: d.Notes,
		NoFile: d.NoFile}
}
