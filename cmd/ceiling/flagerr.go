package main

import (
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/flaghelp"
)

// flagError is the flag package's parse error of fs as the CLI says it:
// the flag in the double-dash style every usage of ceiling prints
// ("--batch-ladder", where the flag package writes "-batch-ladder"), an
// unknown flag with the closest ones fs has ("did you mean --duration?"),
// and where to read fs's flags.
func flagError(fs *flag.FlagSet, err error) error {
	msg := singleDash.ReplaceAllString(err.Error(), "${1}--${2}")
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := closest(strings.TrimLeft(name, "-"), names); len(s) > 0 {
			msg += "; did you mean --" + strings.Join(s, " or --") + "?"
		}
	}
	return fmt.Errorf("%s (%s -h lists its flags)", msg, fs.Name())
}

// singleDash finds the flag named in the flag package's errors.
var singleDash = regexp.MustCompile(`(flag |defined: |argument: )-([A-Za-z0-9][A-Za-z0-9_.-]*)`)

// closest are the candidates nearest to name: within an edit distance
// of a third of its length (at least 1, at most 3), or that name
// abbreviates or extends by a prefix, best first, at most 3.
func closest(name string, candidates []string) []string {
	type scored struct {
		s string
		d int
	}
	limit := min(max(len(name)/3, 1), 3)
	var out []scored
	for _, c := range candidates {
		d := editDistance(name, c)
		if d <= limit || len(name) >= 3 && (strings.HasPrefix(c, name) || strings.HasPrefix(name, c)) {
			out = append(out, scored{c, d})
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int { return a.d - b.d })
	var names []string
	for i, o := range out {
		if i == 3 {
			break
		}
		names = append(names, o.s)
	}
	return names
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// printFlags and wrapWords are internal/flaghelp's, shared with
// ceiling-k8s.
var (
	printFlags = flaghelp.PrintFlags
	wrapWords  = flaghelp.WrapWords
)
