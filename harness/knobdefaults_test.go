package harness

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
)

// TestKnobDefaultText: each knob's Default, as the flags' help and the
// docs' tables write it, is what the code starts from or resolves to.
//
// A default that starts with a backquoted value is DefaultOptions' value
// of the knob (and "quick: `X`" the quick defaults'), unless the table
// leaves the knob at its zero value and something else fills it in: then
// it, like every default in words other than off, none and unset, must
// have an entry in resolved, which checks the code that fills it in.
func TestKnobDefaultText(t *testing.T) {
	lead := regexp.MustCompile("^`([^`]*)`")
	quickLit := regexp.MustCompile("quick: `([^`]*)`")
	unsetWords := regexp.MustCompile(`^(off|none|unset)\b`)
	full, quick := knob.DefaultOptions(false), knob.DefaultOptions(true)
	checked := map[string]bool{}
	for _, k := range knob.Knobs {
		name := k.Name()
		got := k.Get(&full)
		check, isResolved := resolvedDefaults[name]
		if isResolved {
			checked[name] = true
			if !zeroValue(got) {
				t.Errorf("%s: DefaultOptions sets %q, yet the default %q is said to be filled in elsewhere", name, got, k.Default)
			}
			check(t)
			continue
		}
		if m := lead.FindStringSubmatch(k.Default); m != nil {
			if !sameValue(m[1], got) {
				t.Errorf("%s: the default is written %q, DefaultOptions has %q", name, k.Default, got)
			}
			if m := quickLit.FindStringSubmatch(k.Default); m != nil {
				if qv := k.Get(&quick); !sameValue(m[1], qv) {
					t.Errorf("%s: the quick default is written %q, DefaultOptions(quick) has %q", name, k.Default, qv)
				}
			}
			continue
		}
		if unsetWords.MatchString(k.Default) {
			if !zeroValue(got) {
				t.Errorf("%s: the default is written %q, DefaultOptions has %q", name, k.Default, got)
			}
			continue
		}
		t.Errorf("%s: the default %q is in words: add a check of what fills it in to resolvedDefaults", name, k.Default)
	}
	for name := range resolvedDefaults {
		if !checked[name] {
			t.Errorf("resolvedDefaults: %s is no knob of the table", name)
		}
	}
}

// resolvedDefaults check, for each knob whose default another part of the
// harness fills in (the knob table leaves it at its zero value), that the
// default the docs give is the one that code fills in.
var resolvedDefaults = map[string]func(t *testing.T){
	"SRV_CPUSET (--srv-cpuset)": func(t *testing.T) { checkDefaultSets(t) },
	"LT_CPUSET (--lt-cpuset)":   func(t *testing.T) { checkDefaultSets(t) },
	"CONNS_LADDER_<batch> (--conns-ladder)": func(t *testing.T) {
		o := knob.DefaultOptions(false)
		for _, b := range o.BatchLadder {
			if got, want := o.ConnsLadder(b), knob.DefaultConnsLadder(b); !slices.Equal(got, want) || len(got) == 0 {
				t.Errorf("CONNS_LADDER_%d: %v, want the default ladder %v", b, got, want)
			}
		}
	},
	"GENERATOR (--generator)": func(t *testing.T) {
		p := planOf(knob.DefaultOptions(false))
		pr, err := NewProcRunner(p, agentside.Env{}, ProcOptions{})
		if err != nil {
			t.Fatal(err)
		}
		self, _ := os.Executable()
		if !slices.Equal(pr.e.generator, []string{self, "load"}) {
			t.Errorf("GENERATOR unset: %q, want this binary's load", pr.e.generator)
		}
	},
	"AGENTS_JOIN_TIMEOUT (--agents-join-timeout)": func(t *testing.T) {
		o := knob.DefaultOptions(false)
		if got := joinTimeout(planOf(o).Agents); got != 60*time.Second {
			t.Errorf("AGENTS_JOIN_TIMEOUT unset: %s, want 60s", got)
		}
		o.AgentsListen = "127.0.0.1:1"
		if got := joinTimeout(planOf(o).Agents); got != 2*time.Minute {
			t.Errorf("AGENTS_JOIN_TIMEOUT unset with AGENTS_LISTEN: %s, want 2m", got)
		}
	},
	"AGENTS_PORT_RANGE (--agents-port-range)": func(t *testing.T) {
		if agentside.PortRangeSize("") < 1 {
			t.Error("AGENTS_PORT_RANGE unset: no port range from the kernel")
		}
	},
	"--server-cmd": func(t *testing.T) { checkFromTargetFile(t) },
	"--url":        func(t *testing.T) { checkFromTargetFile(t) },
	"--ready":      func(t *testing.T) { checkFromTargetFile(t) },
	"--ready-timeout": func(t *testing.T) {
		if ready, _ := (target.Spec{}).Durations(); ready != 10*time.Second {
			t.Errorf("--ready-timeout and the target's unset: %s, want 10s", ready)
		}
	},
	"--work-dir": func(t *testing.T) {
		// Run makes one when none is given (TestMiniSweep and the
		// integration tests run without --work-dir's default); here, that
		// no default location is hard-wired.
		if o := knob.DefaultOptions(false); o.WorkDir != "" {
			t.Errorf("--work-dir defaults to %q", o.WorkDir)
		}
	},
	"SCENARIO_FILE (--scenario-file)": func(t *testing.T) {
		p, err := ResolveKnobs(knob.DefaultOptions(false), pinning.CPUSet{0, 1})
		if err != nil {
			t.Fatal(err)
		}
		if p.Point.ScenarioFile != "" {
			t.Errorf("SCENARIO_FILE unset resolved to %q, want the target's own block", p.Point.ScenarioFile)
		}
	},
	"OBJECTIVE (--objective)": func(t *testing.T) {
		p := &draft{Options: knob.DefaultOptions(false)}
		p.resolveObjective() // no target block: none
		if p.Objective != "" {
			t.Errorf("OBJECTIVE without a scenario objective: %q, want none", p.Objective)
		}
	},
	"DUET_CPUSETS (--duet-cpusets)": func(t *testing.T) {
		o := knob.DefaultOptions(false)
		o.BaseTargetFile, o.ServerCPUs, o.GeneratorCPUs = "base.json", pinning.CPUSet{1}, pinning.CPUSet{0}
		p, err := ResolveKnobs(o, pinning.CPUSet{0, 1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.CPUs.DuetServer) == 0 || len(p.CPUs.DuetGenerator) == 0 || pinning.Overlap(append(p.CPUs.DuetServer, p.CPUs.DuetGenerator...), pinning.CPUSet{0, 1}) != nil {
			t.Errorf("DUET_CPUSETS unset on 4 CPUs: %s/%s, want a half picked from CPUs 2-3", p.CPUs.DuetServer, p.CPUs.DuetGenerator)
		}
	},
}

// checkDefaultSets: unset SRV_CPUSET and LT_CPUSET give the generator
// the first CPU and the server all the others.
func checkDefaultSets(t *testing.T) {
	p, err := ResolveKnobs(knob.DefaultOptions(false), pinning.CPUSet{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if p.CPUs.Generator.String() != "0" || p.CPUs.Server.String() != "1-3" {
		t.Errorf("on CPUs 0-3: server %s, generator %s; want 1-3 and 0", p.CPUs.Server, p.CPUs.Generator)
	}
}

// checkFromTargetFile: without the override the target's field stands.
func checkFromTargetFile(t *testing.T) {
	p, err := Resolve(knob.DefaultOptions(false), Env{Available: pinning.CPUSet{0, 1}, LoadTarget: func(string) (target.Spec, error) {
		tg := target.Spec{Name: "t", Command: []string{"true", "--addr", "{addr}"}, Ready: "tcp:{addr}"}
		tg.SetBlock("echo_url", []byte(`"ws://{addr}/echo"`))
		return tg, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := p.Target.URLFor("echo"); !slices.Equal(p.Target.Command, []string{"true", "--addr", "{addr}"}) || p.Target.Ready != "tcp:{addr}" || u != "ws://{addr}/echo" {
		t.Errorf("target without overrides: %+v", p.Target)
	}
}

// zeroValue reports whether a knob's rendered value is its zero value.
func zeroValue(s string) bool { return s == "" || s == "0" || s == "0s" || s == "false" }

// sameValue compares a default as the docs write it with the value
// rendered by the table: durations and numbers by value, 1 as true.
func sameValue(doc, got string) bool {
	if doc == got || doc == "1" && got == "true" || doc == "0" && got == "false" {
		return true
	}
	if a, err := time.ParseDuration(doc); err == nil {
		b, err := time.ParseDuration(got)
		return err == nil && a == b
	}
	a, err1 := strconv.ParseFloat(doc, 64)
	b, err2 := strconv.ParseFloat(got, 64)
	return err1 == nil && err2 == nil && a == b
}
