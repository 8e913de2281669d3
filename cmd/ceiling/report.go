package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/publish/site"
	"github.com/ceiling-bench/ceiling/result"
)

const reportUsage = `usage: ceiling report --out DIR [--history FILE] RESULT.json...
       ceiling report --format benchstat RESULT.json...

html       (the default) a static site in --out: index.html, the trend of the
           history (--history) and the runs given, and one page per run with
           each batch size's curve. Inline SVG, no script: it works offline
           and on GitHub Pages.
benchstat  the Go benchmark format on stdout, one line per point and repeat
           (msg/s, p99-ns): 'benchstat old.txt new.txt' compares two runs.

Every RESULT.json is validated first: a malformed one exits 2 naming the field.

flags:
`

// Report formats (--format).
const (
	formatHTML      = "html"
	formatBenchstat = "benchstat"
)

type reportOptions struct {
	format  string
	out     string
	history string
}

func runReport(args []string, stdout, stderr io.Writer) error {
	var o reportOptions
	fs := flag.NewFlagSet("ceiling report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, reportUsage); printFlags(fs, stderr) }
	fs.StringVar(&o.format, "format", formatHTML, "html (a site in --out) or benchstat (Go benchmark format on stdout)")
	fs.StringVar(&o.out, "out", "", "directory to write the site to (html)")
	fs.StringVar(&o.history, "history", "", "history file, JSON Lines (html): the trend on the index page")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	switch o.format {
	case formatHTML:
		if o.out == "" {
			return usagef("--out: required with --format html (the directory for the site)")
		}
		if fs.NArg() == 0 && o.history == "" {
			return usagef("ceiling report: give RESULT.json files, a --history file, or both")
		}
	case formatBenchstat:
		if o.out != "" || o.history != "" {
			return usagef("--format benchstat writes to stdout: --out and --history are for html")
		}
		if fs.NArg() == 0 {
			return usagef("ceiling report --format benchstat: want at least one RESULT.json")
		}
	default:
		return usagef("--format: %q, want %s or %s", o.format, formatHTML, formatBenchstat)
	}
	results, err := readResults(fs.Args())
	if err != nil {
		return err
	}
	if o.format == formatBenchstat {
		w := bufio.NewWriter(stdout)
		for i, r := range results {
			if err := publish.WriteBenchfmt(w, r, fs.Arg(i)); err != nil {
				return err
			}
		}
		return w.Flush()
	}
	return writeSite(o, fs.Args(), results, stdout, stderr)
}

// readResults reads and validates every RESULT.json before anything is
// written: one bad document is exit 2, naming it.
func readResults(paths []string) ([]*result.Result, error) {
	out := make([]*result.Result, 0, len(paths))
	for _, p := range paths {
		r, _, err := readResult("RESULT.json", p, publishStdin)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func writeSite(o reportOptions, names []string, results []*result.Result, stdout, stderr io.Writer) error {
	var opts site.Options
	if o.history != "" {
		h, err := readHistory("--history", o.history, stderr)
		if err != nil {
			return err
		}
		opts.History = h
	}
	runs := make([]site.Run, len(results))
	for i, r := range results {
		runs[i] = site.Run{Name: filepath.Base(names[i]), Result: r}
		if names[i] != "-" {
			// The files the result names (a profile's folded stacks)
			// are beside it.
			runs[i].Files = os.DirFS(filepath.Dir(names[i]))
		}
	}
	files, err := site.Write(o.out, runs, opts)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %d page(s) to %s: open %s\n", len(files), o.out, filepath.Join(o.out, site.IndexFile))
	return nil
}
