package fault

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/load"
)

// Check refuses a FAULT the target t cannot take (exit 2, before
// anything boots); o is the sweep's knobs, t its target as resolved.
func Check(o *knob.Options, t target.Spec) error {
	f := o.Fault
	if f.IsZero() {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("FAULT (--fault) %s: "+format, append([]any{f.String()}, args...)...)
	}
	var names []string
	for _, s := range t.Servers {
		names = append(names, s.Name)
	}
	switch {
	case Def(o.Scenario) == nil:
		need := "a scenario"
		if s := load.FaultScenarios(); len(s) > 0 {
			need = "SCENARIO=" + strings.Join(s, " or ")
		}
		return bad("needs %s, which accounts each server's deliveries before and after the fault (SCENARIO is %s)", need, o.Scenario)
	case t.External || !t.Multi():
		return bad("needs a target that boots several servers (\"servers\"; TARGET %s boots %s)", o.TargetFile, map[bool]string{true: "none", false: "one"}[t.External])
	case !slices.Contains(names, f.Server):
		return bad("TARGET %s has no server %q (its servers: %s)", o.TargetFile, f.Server, strings.Join(names, ", "))
	case o.TwoArm():
		return bad("not with BASE_TARGET: a resilience point belongs to one server's sweep")
	case o.Agents > 0:
		return bad("not with AGENTS yet: each agent would split its own accounting on its own clock")
	case o.URL != "":
		return bad("not with --url: the target's own URLs name which server each client is on")
	}
	return nil
}

// Def is the scenario's part in a FAULT; nil when it cannot take one.
func Def(scenario string) *load.FaultDef {
	d, _ := load.Lookup(scenario)
	return d.Fault
}
