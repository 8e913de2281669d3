package knob

import (
	"fmt"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// The knob table.
//
// Every knob of `ceiling sweep` is one row of Knobs: its make variable, its
// flag, its default as the docs say it, its help, how its text is parsed
// into Options and what its own value must satisfy. Everything that names
// a knob reads the table, so a knob is added, renamed or documented in one
// place:
//
//   - ApplyEnv sets Options from the variables, row by row;
//   - the CLI binds one flag per row (KnobValue) and prints its usage from
//     the rows;
//   - Resolve runs every row's Check, whichever layer set the value;
//   - the Knobs tables of docs/sweep.md and docs/compare.md are generated
//     from it (KnobDocTable; TestKnobDocs fails when they differ, and
//     `go test ./harness/knob -run TestKnobDocs -update` rewrites them);
//   - TestMakefileExportsEveryKnob checks the Makefile exports every
//     variable of the table.
//
// Validation has two steps, so that each error names the knob the way the
// user gave it. Parse reads the text (a number, a duration, a CPU list)
// and fails on text that is no value at all; its error is bare, and the
// caller names the knob: ApplyEnv as "VARIABLE: ...", the flag package as
// "invalid value ... for flag -name: ...". Check judges the value (a
// positive count, a fraction in range): ApplyEnv runs it right after Parse
// and names the variable; Resolve runs it again for every knob, since a
// flag or a default may have set the value, and names both
// ("VARIABLE (--flag): ..."). What depends on several knobs at once (the
// headline batch is a rung of the batch ladder, CPU sets that overlap)
// stays in Resolve.
type Knob struct {
	// Env is the make variable ("" for a flag-only knob). A pattern row
	// ends in "<batch>": CONNS_LADDER_<batch> stands for every
	// CONNS_LADDER_10, CONNS_LADDER_100, ...
	Env string
	// Flag is the flag's name without dashes ("" for a variable-only knob).
	Flag string
	// Arg names the flag's value in the usage and the docs ("" for a
	// boolean flag).
	Arg string
	// Default is the default as the docs table writes it (Markdown).
	Default string
	// Help is the meaning: the flag's help and the docs table's meaning
	// column (Markdown; backquotes are dropped in the terminal).
	Help string
	// Doc is the docs table that lists the knob: DocSweep (or "") or
	// DocCompare.
	Doc string
	// Early knobs are read by the CLI before the defaults are laid, since
	// they choose them (QUICK); ApplyEnv leaves them alone.
	Early bool

	// Parse reads text into o (a pattern row: the part after the prefix is
	// key). Its error does not name the knob; the caller does.
	Parse func(o *Options, key, v string) error
	// Check judges the value in o, whichever layer set it (nil: nothing to
	// judge beyond Parse). Its error does not name the knob either.
	Check func(o *Options) error
	// Get renders the value in o, for the flag package.
	Get func(o *Options) string
}

// The docs tables a knob can be listed in.
const (
	DocSweep   = "sweep"   // docs/sweep.md, "Knobs"
	DocCompare = "compare" // docs/compare.md, "Knobs"
)

// Pattern reports whether the row stands for a family of variables
// (CONNS_LADDER_<batch>) and returns their common prefix.
func (k Knob) Pattern() (prefix string, ok bool) {
	return strings.CutSuffix(k.Env, "<batch>")
}

// Bool reports whether the knob is a boolean flag (--quick, no value).
func (k Knob) Bool() bool { return k.Flag != "" && k.Arg == "" }

// Name is how the messages of Resolve name the knob: "VARIABLE (--flag)",
// or whichever of the two it has.
func (k Knob) Name() string {
	switch {
	case k.Env == "":
		return "--" + k.Flag
	case k.Flag == "":
		return k.Env
	}
	return k.Env + " (--" + k.Flag + ")"
}

// HelpText is Help with {scenarios} replaced by the scenarios registered
// (wire.ScenarioNames: the ones load registered), so the list cannot drift
// from the registry.
func (k Knob) HelpText() string {
	if !strings.Contains(k.Help, "{scenarios}") {
		return k.Help
	}
	names := wire.ScenarioNames()
	for i, n := range names {
		names[i] = "`" + n + "`"
	}
	return strings.ReplaceAll(k.Help, "{scenarios}", strings.Join(names, ", "))
}

// FlagUsage is the flag's help line: the help, then the variable and the
// default, without Markdown.
func (k Knob) FlagUsage() string {
	var extra []string
	if k.Env != "" {
		extra = append(extra, k.Env)
	}
	if k.Default != "" {
		extra = append(extra, "default: "+k.Default)
	}
	s := k.HelpText()
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, "; ") + ")"
	}
	return strings.ReplaceAll(s, "`", "")
}

// KnobValue binds a knob's flag to o: a flag.Value (and a boolean one when
// the knob is). The flag package names the flag in Parse's errors.
type KnobValue struct {
	K Knob
	O *Options
}

func (v KnobValue) String() string {
	if v.O == nil || v.K.Get == nil {
		return ""
	}
	return v.K.Get(v.O)
}

// Set parses a flag's text. A pattern row's flag takes KEY=VALUE
// (--conns-ladder 10=32,64), the flag form of PREFIX_KEY=VALUE.
func (v KnobValue) Set(s string) error {
	if _, ok := v.K.Pattern(); ok {
		key, val, found := strings.Cut(s, "=")
		if !found {
			return fmt.Errorf("want %s such as 10=32,64,128, got %q", v.K.Arg, s)
		}
		return v.K.Parse(v.O, strings.TrimSpace(key), val)
	}
	return v.K.Parse(v.O, "", s)
}

// IsBoolFlag lets a boolean knob's flag be given without a value.
func (v KnobValue) IsBoolFlag() bool { return v.K.Bool() }

// KnobByEnv is the row of a variable (a pattern row for any of its
// family), or false.
func KnobByEnv(name string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Env == "" {
			continue
		}
		if p, ok := k.Pattern(); ok && strings.HasPrefix(name, p) || k.Env == name {
			return k, true
		}
	}
	return Knob{}, false
}

// knobByEnv is KnobByEnv for a row that must exist.
func knobByEnv(name string) Knob {
	k, ok := KnobByEnv(name)
	if !ok {
		panic("harness: no knob " + name)
	}
	return k
}

// CheckKnobs runs every row's Check on o, naming each knob as both its
// variable and its flag (either may have set it, or the default).
func (o *Options) CheckKnobs() []error {
	var errs []error
	for _, k := range Knobs {
		if k.Check == nil {
			continue
		}
		if err := k.Check(o); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.Name(), err))
		}
	}
	return errs
}

// KnobDocTable is the Markdown table of the knobs listed in doc (DocSweep
// or DocCompare): the Knobs tables of docs/sweep.md and docs/compare.md
// are this text, between the markers KnobDocBegin and KnobDocEnd
// (TestKnobDocs checks them; -update rewrites them). The sweep's table
// ends with one row for the two-arm knobs, which compare.md lists.
func KnobDocTable(doc string) string {
	var b strings.Builder
	b.WriteString("| variable | flag | default | meaning |\n| --- | --- | --- | --- |\n")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	var otherEnv, otherFlag []string
	for _, k := range Knobs {
		if k.doc() != doc {
			if doc == DocSweep && k.doc() == DocCompare {
				if k.Env != "" {
					otherEnv = append(otherEnv, "`"+k.Env+"`")
				}
				if k.Flag != "" {
					otherFlag = append(otherFlag, "`--"+k.Flag+"`")
				}
			}
			continue
		}
		env, flag := "", ""
		if k.Env != "" {
			env = "`" + k.Env + "`"
		}
		if k.Flag != "" {
			flag = "`--" + k.Flag
			if k.Arg != "" {
				flag += " " + k.Arg
			}
			flag += "`"
		}
		row := fmt.Sprintf("| %s | %s | %s | %s |", env, flag, cell(k.Default), cell(k.HelpText()))
		b.WriteString(strings.Replace(row, "|  |", "| |", 1) + "\n")
	}
	if len(otherEnv) > 0 {
		fmt.Fprintf(&b, "| %s | %s | off | a two-arm sweep: base and head measured in one run and compared (see [compare.md](compare.md)) |\n",
			strings.Join(otherEnv, ", "), strings.Join(otherFlag, ", "))
	}
	return b.String()
}

// The markers around a generated knob table in the docs.
func KnobDocBegin(doc string) string {
	return "<!-- knobs:" + doc + " (generated from harness/knob/knobs.go; refresh with go test ./harness/knob -run TestKnobDocs -update) -->"
}

func KnobDocEnd(doc string) string { return "<!-- /knobs:" + doc + " -->" }

// doc is the docs table listing the knob; a row that names none is the
// sweep's.
func (k Knob) doc() string {
	if k.Doc == "" {
		return DocSweep
	}
	return k.Doc
}
