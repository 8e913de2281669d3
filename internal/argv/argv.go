// Package argv reads command lines in the flag package's syntax ("-name",
// "--name", "-name=value", "--name value") where a command line is looked
// at without being parsed: the scenario a `ceiling load` asks for before
// its flags exist, an agent's share of a point's flags, a point's rate,
// and the secret values to redact (internal/redact).
package argv

import "strings"

// Flag splits one element of a command line: the flag's name (its dashes
// trimmed), the value given inline ("--name=value") and whether there was
// one. ok is false for an element that is no flag: one without a leading
// dash, "-" (stdin, by convention) or "--" (the end of the flags).
func Flag(a string) (name, value string, inline, ok bool) {
	if len(a) < 2 || a[0] != '-' || a == "--" {
		return "", "", false, false
	}
	name, value, inline = strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name, value, inline, true
}

// Value is the value of flag name in args as the flag package reads it:
// inline, or else the next element; the last occurrence wins, and "--"
// ends the flags. given is false when the flag is absent, or last given
// without a value.
func Value(args []string, name string) (value string, given bool) {
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			break
		}
		n, v, inline, ok := Flag(args[i])
		if !ok || n != name {
			continue
		}
		switch {
		case inline:
			value, given = v, true
		case i+1 < len(args):
			value, given = args[i+1], true
			i++
		default:
			given = false
		}
	}
	return value, given
}
