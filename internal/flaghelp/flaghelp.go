// Package flaghelp prints a flag set's help the one way every ceiling
// command does: double dashes, the argument's name in capitals, the
// default said after the text, and lines within 100 columns. The flag
// package's own PrintDefaults uses single dashes and does not wrap; two
// binaries (ceiling, ceiling-k8s) share this instead of each its copy.
package flaghelp

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Width is the widest line the help prints.
const Width = 100

// PrintFlags prints every flag of fs: "  --name ARG", then its usage
// indented by 6 and wrapped within Width, with its default.
func PrintFlags(fs *flag.FlagSet, out io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		head := "  --" + f.Name
		if arg != "" {
			head += " " + strings.ToUpper(arg)
		}
		if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "[]" {
			usage += " (default: " + d + ")"
		}
		fmt.Fprintln(out, head)
		for _, line := range WrapWords(usage, Width-6) {
			fmt.Fprintln(out, "      "+line)
		}
	})
}

// WrapWords breaks s into lines of at most width bytes at spaces (a word
// longer than width stands alone on its line).
func WrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
