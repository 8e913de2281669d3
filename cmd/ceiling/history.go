package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ceiling-bench/ceiling/internal/capfile"
	"github.com/ceiling-bench/ceiling/publish"
)

const historyUsage = `usage: ceiling history [--file FILE] [--last N | --changes]

Prints the published history (the JSON Lines file 'ceiling publish commit'
appends to) as a trend table, oldest first: commit, date, the headline,
every batch size's ceiling, the A-A noise floor and the verdict. Lower
bounds are marked ≥, regime changes ▲ (the legend under the table says
from what to what). --changes lists where the level changed instead.

flags:
`

// defaultHistoryFile is the history publish commit writes for the default
// generator.
const defaultHistoryFile = publish.DefaultDir + "/ceiling-load.history.jsonl"

func runHistory(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("ceiling history", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() { fmt.Fprint(stderr, historyUsage); printFlags(flags, stderr) }
	file := flags.String("file", defaultHistoryFile, "history file, JSON Lines")
	last := flags.Int("last", 20, "print the newest `N` entries (0: all)")
	changes := flags.Bool("changes", false, "list the change points of the whole history instead: per series, regime and measure, where its level changed (E-divisive means, Welch's t-test, at least the A-A floor; docs/report.md)")
	if done, err := parseFlags(flags, args); done {
		return err
	}
	if flags.NArg() > 0 {
		return usagef("ceiling history: unexpected argument %q (the file goes in --file)", flags.Arg(0))
	}
	if *last < 0 {
		return usagef("--last: %d is negative", *last)
	}
	h, err := readHistory("--file", *file, stderr)
	if errors.Is(err, fs.ErrNotExist) && *file == defaultHistoryFile {
		// A user's repository keeps its history on the results branch.
		return usagef("%v: the history is on the branch the results are published to (data-branch); read it with git show origin/BRANCH:%s > history.jsonl and ceiling history --file history.jsonl", err, defaultHistoryFile)
	}
	if err != nil {
		return err
	}
	out := colourIfTerminal(stdout, os.Getenv)
	if *changes {
		return publish.WriteChanges(out, h, publish.Changes(h))
	}
	return publish.WriteHistoryTable(out, h, *last)
}

// readHistory reads a history file; a missing or unreadable one is bad
// input (exit 2) naming the flag. A line that is not an entry (corrupt,
// truncated) is said on stderr, naming the file and line, and skipped:
// one damaged line must not hide the rest of the history.
func readHistory(flagName, path string, stderr io.Writer) ([]publish.HistoryEntry, error) {
	data, err := capfile.Read("history", path, capfile.Document)
	if err != nil {
		return nil, usagef("%s: %w", flagName, err)
	}
	f, err := publish.ReadHistory(data, path)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", flagName, err)}
	}
	for _, b := range f.Bad {
		fmt.Fprintf(stderr, "ceiling: %s: skipped a line that is not a history entry: %v\n", flagName, b)
	}
	return f.Entries, nil
}
