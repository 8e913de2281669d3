package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "changesim:", err)
	}
	os.Exit(exitCode(err))
}

// usageError is a bad command line: a flag that does not parse or is out
// of range, or no file. It exits 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode is the process's exit status for run's error: 0 done (or
// -help), 2 a bad command line, 1 anything else (a file that cannot be
// read, is not a two-arm document or holds too few clean runs).
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		return 2
	}
	return 1
}

// Values of -stat and -floor.
const (
	statMax     = "max"
	statMean    = "mean"
	floorAA     = "aa"
	floorSpread = "spread"
)

// options are the command line's flags.
type options struct {
	files []string
	seeds int
	k     int
	stat  string
	floor string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("changesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.seeds, "seeds", 50, "histories per recording and scenario (seeds 0 to N-1)")
	fs.IntVar(&o.k, "k", 3, "runs drawn for each entry's headline")
	fs.StringVar(&o.stat, "stat", statMax, "how an entry's headline is made of its k runs: max (as the harness's headline, the highest clean point) or mean")
	fs.StringVar(&o.floor, "floor", floorAA, "each entry's A-A noise floor: aa (|repeat - headline| / headline, the repeat one more drawn run, as the harness measures it) or spread (the recording's MAD/median, the same for every entry)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: changesim [flags] FILE...\n\nBuilds 60-entry histories from the clean runs of recorded A/A two-arm sweep\ndocuments (ceiling sweep --base-target), plants steps and slopes, and tabulates\nhow ceiling history --changes, the history table's * and a fixed 5% ratio find\nthem. Flags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usageError{err} // the flag package's message names the flag
	}
	o.files = fs.Args()
	switch {
	case o.seeds < 1:
		return o, usagef("-seeds %d: must be at least 1", o.seeds)
	case o.k < 1:
		return o, usagef("-k %d: must be at least 1", o.k)
	case o.stat != statMax && o.stat != statMean:
		return o, usagef("-stat %q: must be %s or %s", o.stat, statMax, statMean)
	case o.floor != floorAA && o.floor != floorSpread:
		return o, usagef("-floor %q: must be %s or %s", o.floor, floorAA, floorSpread)
	case len(o.files) == 0:
		return o, usagef("no FILE: give one or more two-arm A/A documents (ceiling sweep --base-target --out FILE)")
	}
	return o, nil
}

// run is the command: it reads the recordings, builds and scores the
// histories and writes the report to stdout.
func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var recs []recording
	for _, f := range o.files {
		rec, err := loadRecording(f)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	return writeReport(stdout, o, recs, simulate(recs, o))
}
