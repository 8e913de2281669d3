package harness

import (
	"fmt"
	"slices"

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
