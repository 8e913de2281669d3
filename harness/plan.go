package harness

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ceiling-bench/ceiling/calibrate"
	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/fault"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/secrets"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
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

// Env is what Resolve reads besides the knobs.
type Env struct {
	// Available are the CPUs this process may run on (its affinity);
	// the default sets are carved from it.
	Available pinning.CPUSet
	// Environ is the environment whose secret-looking variables are
	// redacted (os.Environ()).
	Environ []string
	// LoadTarget reads a target file; nil: LoadTarget. Each file is read
	// once.
	LoadTarget func(path string) (target.Spec, error)
}

// ResolveKnobs fills what the knobs left open and validates every knob
// together, before anything boots, without reading a target file: a plan
// for a Sweep whose PointRunner boots nothing, and the first half of
// Resolve. Each error names the knob as both its variable and its flag.
func ResolveKnobs(o knob.Options, available pinning.CPUSet) (*Plan, error) {
	d := &draft{Options: o}
	if err := d.resolveKnobs(available); err != nil {
		return nil, err
	}
	plan := d.plan(redact.New())
	if err := settleBudget(plan); err != nil {
		return nil, err
	}
	if err := plan.checkBounds(o.AllowLong); err != nil {
		return nil, err
	}
	return plan, nil
}

// Resolve is ResolveKnobs, then the target files: TARGET (and BASE_TARGET
// in a two-arm sweep) read once each, the flag overrides and the
// scenario's defaults applied (its connection ladders and objective), the
// knobs checked against the target, and the secrets gathered. Every error
// is the user's to fix (exit 2): nothing has booted.
func Resolve(o knob.Options, env Env) (*Plan, error) {
	srvGiven := len(o.ServerCPUs) > 0 // before the knobs pick one
	p := &draft{Options: o}
	if err := p.resolveKnobs(env.Available); err != nil {
		return nil, err
	}
	read := env.LoadTarget
	if read == nil {
		read = target.Load
	}
	if err := p.resolveTarget(read); err != nil {
		return nil, err
	}
	if p.RunAs != nil && p.Target.External {
		return nil, fmt.Errorf("SRV_USER (--srv-user): does not apply to an external target (TARGET %s has \"external\": true: the harness boots no server); unset it", p.TargetFile)
	}
	if p.Target.External && srvGiven {
		// Refused, not ignored: whoever set it expects the server pinned.
		return nil, fmt.Errorf("SRV_CPUSET: does not apply to an external target (TARGET %s has \"external\": true: the harness boots and pins no server); unset it", p.TargetFile)
	}
	if p.TwoArm() {
		if err := p.resolveBaseTarget(read); err != nil {
			return nil, err
		}
	}
	set, notes, err := secrets.Gather(p.Generator, p.Target, env.Environ)
	if err != nil {
		return nil, err
	}
	if p.BaseTarget != nil {
		// Checked with its file (target.Spec.Check refuses short ones).
		set.Add(p.BaseTarget.Secrets()...)
	}
	if p.AgentsToken != "" {
		set.Add(p.AgentsToken.Text())
	}
	p.Notes = append(p.Notes, notes...)
	if err := p.checkLimits(&p.Target, p.BaseTarget, machineLimits); err != nil {
		return nil, err
	}
	p.resolveObjective()
	if err := fault.Check(&p.Options, p.Target); err != nil {
		return nil, err
	}
	if p.CompareMode == knob.ModeDuet && (p.Target.External || p.BaseTarget != nil && p.BaseTarget.External) {
		p.CompareMode, p.DuetServerCPUs, p.DuetGeneratorCPUs = knob.ModeInterleaved, nil, nil
		p.Notes = append(p.Notes, "COMPARE_MODE: interleaved, since an external server is not booted on a half of this machine")
	}
	plan := p.plan(set)
	plan.targeted = true
	// Last: the target's scenario may have set the connection ladders.
	if err := settleBudget(plan); err != nil {
		return nil, err
	}
	if err := plan.checkBounds(o.AllowLong); err != nil {
		return nil, err
	}
	return plan, nil
}

// resolveTarget reads TARGET and applies the flag overrides and the
// scenario's defaults to it.
func (p *draft) resolveTarget(read func(string) (target.Spec, error)) error {
	t, err := read(p.TargetFile)
	if err != nil {
		return err
	}
	if p.ServerCmd != "" {
		t.Command = strings.Fields(p.ServerCmd)
		// Indexes into the file's command say nothing about another
		// one; its secrets are its secret flags' values, or "secrets".
		t.SecretArgs = nil
	}
	if p.URL != "" {
		t.OverrideURL(p.Scenario, p.URL)
	}
	if p.Ready != "" {
		t.Ready = p.Ready
	}
	if err := p.forSweep(&t); err != nil {
		return fmt.Errorf("TARGET %s: %w", p.TargetFile, err)
	}
	if p.AllowUnpinnedURL {
		t.AllowUnpinnedURL = true
	}
	if err := t.Check(); err != nil {
		return fmt.Errorf("target %s with flag overrides: %w", p.TargetFile, err)
	}
	if err := t.CheckRunnable(p.Scenario); err != nil {
		return fmt.Errorf("TARGET %s: %w", p.TargetFile, err)
	}
	if err := checkTargetFor(t, &p.Options); err != nil {
		return fmt.Errorf("TARGET %s: %w", p.TargetFile, err)
	}
	p.Target = t
	return nil
}

// resolveBaseTarget reads BASE_TARGET. The flag overrides of the target
// (--server-cmd, --url, --ready) are the head's alone; SCENARIO_FILE is
// the sweep's, so both arms run the same file, and the ladder is the
// head's (already set).
func (p *draft) resolveBaseTarget(read func(string) (target.Spec, error)) error {
	t, err := read(p.BaseTargetFile)
	if err != nil {
		return fmt.Errorf("BASE_TARGET (--base-target): %w", err)
	}
	if err := p.forSweep(&t); err != nil {
		return fmt.Errorf("BASE_TARGET %s: %w", p.BaseTargetFile, err)
	}
	if err := t.CheckRunnable(p.Scenario); err != nil {
		return fmt.Errorf("BASE_TARGET %s: %w", p.BaseTargetFile, err)
	}
	if err := scrape.CheckProfile(t, p.ProfileDir); err != nil {
		return fmt.Errorf("BASE_TARGET %s: %w", p.BaseTargetFile, err)
	}
	p.BaseTarget = &t
	return nil
}

// resolveObjective takes OBJECTIVE from the target's scenario block when
// the knob left it open.
func (p *draft) resolveObjective() {
	if p.Objective != "" {
		return
	}
	blk, err := p.Target.Block(p.Scenario)
	if err != nil {
		return
	}
	if ob, ok := blk.(load.ObjectiveBlock); ok && ob.Objective() != "" {
		p.Objective = ob.Objective()
		p.Notes = append(p.Notes, fmt.Sprintf("objective from the scenario (%s): %s", target.BlockKey(p.Scenario), p.Objective))
	}
}

// errNoTarget: Run was given a plan of knobs alone.
var errNoTarget = errors.New("harness: Run needs a plan with its target (Resolve, not ResolveKnobs)")

// noFile is the RLIMIT_NOFILE each child asks for.
func (p *Plan) noFile() uint64 {
	if p.NoFile == 0 {
		return NoFileLimit
	}
	return p.NoFile
}
