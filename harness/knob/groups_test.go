package knob

import (
	"reflect"
	"slices"
	"testing"
)

// targetOnly are the knobs Resolve spends on the target, SRV_USER and
// the plan's bound (ALLOW_LONG): no group carries them past it.
var targetOnly = []string{"ServerUser", "ServerCmd", "URL", "Ready", "AllowUnpinnedURL", "AllowLong"}

// renamed are the group fields named other than their knob's field of
// Options (the group's name dropped); every other one keeps it.
var renamed = map[string]string{
	"CPUs.Server": "ServerCPUs", "CPUs.Generator": "GeneratorCPUs",
	"CPUs.DuetServer": "DuetServerCPUs", "CPUs.DuetGenerator": "DuetGeneratorCPUs",
	"Compare.Reps": "CompareReps", "Compare.Stop": "CompareStop", "Compare.Mode": "CompareMode", "Compare.Profile": "CompareProfile",
	"Compare.Duration": "CompareDuration", "Compare.Warmup": "CompareWarmup",
	"Compare.Scope": "CompareScope", "Compare.Budget": "CompareBudget", "Compare.Prefer": "ComparePrefer",
	"Compare.FailOn": "FailOn", "Compare.Arms": "CompareArms", "Compare.RebootEvery": "CompareRebootEvery", "Compare.WindowsGiven": "CompareWindowsGiven",
	"Agents.Count": "Agents", "Agents.Listen": "AgentsListen", "Agents.TokenFile": "AgentsTokenFile",
	"Agents.Token": "AgentsToken", "Agents.TLSCert": "AgentsTLSCert", "Agents.TLSKey": "AgentsTLSKey",
	"Agents.TLSCA": "AgentsTLSCA", "Agents.JoinTimeout": "AgentsJoinTimeout", "Agents.Netns": "AgentsNetns",
	"Agents.PortRange": "AgentsPortRange",
}

// TestGroupsCarryEveryKnob: each field of Options but targetOnly lands
// in exactly one group, under its own name (or renamed's) and type, with
// its value. A new knob that the run reads needs a place in a group.
func TestGroupsCarryEveryKnob(t *testing.T) {
	var o Options
	ov := reflect.ValueOf(&o).Elem()
	for i := range ov.NumField() {
		fill(t, ov.Type().Field(i).Name, ov.Field(i), i+1)
	}
	g := o.Groups()
	gv := reflect.ValueOf(g)
	carried := map[string]string{}
	check := func(group, field string, v reflect.Value) {
		name := field
		if n, ok := renamed[group+"."+field]; ok {
			name = n
		}
		if was, ok := carried[name]; ok {
			t.Errorf("%s is in both %s and %s", name, was, group)
		}
		carried[name] = group
		f := ov.FieldByName(name)
		switch {
		case !f.IsValid():
			t.Errorf("%s.%s is no knob of Options", group, field)
		case f.Type() != v.Type():
			t.Errorf("%s.%s is a %s, the knob %s a %s", group, field, v.Type(), name, f.Type())
		case !reflect.DeepEqual(f.Interface(), v.Interface()):
			t.Errorf("%s.%s = %v, the knob %s %v", group, field, v, name, f)
		}
	}
	for i := range gv.NumField() {
		group, v := gv.Type().Field(i).Name, gv.Field(i)
		if group == "Fault" {
			check(group, group, v)
			continue
		}
		for j := range v.NumField() {
			check(group, v.Type().Field(j).Name, v.Field(j))
		}
	}
	for i := range ov.NumField() {
		name := ov.Type().Field(i).Name
		if _, ok := carried[name]; !ok && !slices.Contains(targetOnly, name) {
			t.Errorf("Options.%s is in no group (knob.Groups)", name)
		}
	}
}

// fill gives v a value of its own, different for each n.
func fill(t *testing.T, name string, v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Float64:
		v.SetFloat(float64(n) + 0.5)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, name, v.Index(0), n)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, name, k, n)
		fill(t, name, e, n)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, name, v.Field(i), n+i)
		}
	default:
		t.Fatalf("Options.%s: no value for a %s", name, v.Kind())
	}
}
