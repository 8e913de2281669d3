package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/load"
)

// forSweep applies the sweep's knobs that reach into t's scenario block:
// SCENARIO_FILE replaces its file (TargetDef.WithFile), and a block that
// brings a connection ladder (a scenario file's "sweep") sets the ladder
// of every batch the sweep was given none for.
func (o *draft) forSweep(t *target.Spec) error {
	d, ok := load.Lookup(o.Scenario)
	if !ok || d.Target == nil {
		return nil
	}
	if o.ScenarioFile != "" && d.Target.WithFile != nil {
		raw, err := d.Target.WithFile(t.Blocks[d.Target.Key], o.ScenarioFile)
		if err != nil {
			return target.BlockError(d.Target.Key, err)
		}
		t.SetBlock(d.Target.Key, raw)
	}
	blk, err := t.Block(o.Scenario)
	if err != nil {
		return nil // CheckRunnable says so
	}
	lb, ok := blk.(load.LadderBlock)
	if !ok {
		return nil
	}
	l := lb.ConnsLadder(o.Quick)
	if l == nil {
		return nil
	}
	for _, b := range o.BatchLadder {
		if _, given := o.ConnsLadders[b]; !given {
			if o.ConnsLadders == nil {
				o.ConnsLadders = knob.ConnsLadders{}
			}
			o.ConnsLadders[b] = slices.Clone(knob.Ladder(l))
			o.Notes = append(o.Notes, fmt.Sprintf("CONNS_LADDER_%d: %s, the scenario file's", b, knob.Ladder(l).String()))
		}
	}
	return nil
}

// checkTargetFor checks t against the sweep's knobs: a fan-out target
// spreads its subscribers over fanout.channels, so every point needs at
// least that many connections (the generator refuses fewer, after boot).
func checkTargetFor(t target.Spec, o *knob.Options) error {
	if err := scrape.CheckProfile(t, o.ProfileDir); err != nil {
		return err
	}
	blk, err := t.Block(o.Scenario)
	if err != nil {
		return nil // CheckRunnable says so
	}
	for _, b := range o.BatchLadder {
		if l := o.ConnsLadder(b); len(l) > 0 {
			if err := blk.CheckLadder(l[0]); err != nil {
				return fmt.Errorf("%w (CONNS_LADDER_%d)", target.BlockError(target.BlockKey(o.Scenario), err), b)
			}
		}
	}
	return nil
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
