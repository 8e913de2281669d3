// Command ceiling finds the throughput ceiling of a real-time (WebSocket)
// server and publishes it.
//
//	ceiling load     one measured point against a running server
//	ceiling agent    one segment of a point, started together with other agents (docs/agents.md)
//	ceiling sweep    boot the server pinned, sweep batch x connections, A-A repeat
//	ceiling compare  two git refs of a repository, built and swept as two arms, one verdict
//	ceiling publish  commit a sweep result, or post a pull-request comparison
//	ceiling report   a static results site, or the Go benchmark format for benchstat
//	ceiling history  the published history as a trend table
//	ceiling calibrate  the generator's own cap per core against a null sink
//	ceiling k8s      the generator agents on Kubernetes: render, apply, delete (runs ceiling-k8s)
//
// main only calls run; every subcommand lives in its own file with its own
// flag.FlagSet.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/termsafe"
	_ "github.com/ceiling-bench/ceiling/load/scenario/all" // every scenario ceiling ships
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

func main() {
	// When this process is the pinning trampoline (pinning.Command), it
	// applies the affinity and execs the target; Init does not return then.
	pinning.Init()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		var q quietExit
		if !errors.As(err, &q) { // a re-run copy has said why already
			fmt.Fprint(os.Stderr, termsafe.String(errorText(err)))
		}
		os.Exit(exitCode(err))
	}
}

// errorText is the line main prints for the error a command returned,
// within 100 columns as everything ceiling prints (lines.go).
func errorText(err error) string {
	return result.Wrap("ceiling: "+err.Error()+"\n", result.TableWidth)
}

// usageError marks bad input (unknown flag, invalid value): exit status 2,
// before anything connects or boots.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// quietExit is a copy of this command's exit status (sweep re-run in a
// network namespace): the copy printed its own reason.
type quietExit struct{ exitStatus }

// exitStatus lets a subcommand choose its status (e.g. 1 for "wrote the
// result but no clean headline").
type exitStatus struct {
	code int
	err  error
}

func (e exitStatus) Error() string { return e.err.Error() }
func (e exitStatus) Unwrap() error { return e.err }

func exitCode(err error) int {
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	// --fail-on slower: a significant headline regression fails the check.
	var reg *publish.RegressionError
	if errors.As(err, &reg) {
		return 1
	}
	var inc *publish.InconclusiveError
	if errors.As(err, &inc) {
		return 1
	}
	var mem *publish.MemoryError
	if errors.As(err, &mem) {
		return 1
	}
	var q quietExit
	if errors.As(err, &q) {
		return q.code
	}
	var s exitStatus
	if errors.As(err, &s) {
		return s.code
	}
	return 1
}

const topUsage = `usage: ceiling <command> [flags]

commands:
  load      drive one point of load against a running server and report it
  agent     run one segment of a point for a coordinator (docs/agents.md)
  sweep     boot the server pinned, sweep batch x connections, repeat the headline
  compare   two git refs of your repository in one command: ceiling compare --base main
  publish   commit a sweep result (publish commit) or post a PR comparison (publish comment)
  report    a static results site (--out DIR), or benchstat text (--format benchstat)
  history   print the published history as a trend table
  calibrate measure the generator's cap per core against a null sink
  init      set a repository up: bench/target.json and the two workflows that use the action
  action    the GitHub Action's step: sweep, compare or comment (action.yml, docs/action.md)
  k8s       the generator agents on Kubernetes: render, apply or delete the manifests
  version   print the version

Run 'ceiling <command> -h' for a command's flags.
`

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return usagef("no command given")
	}
	cmd, rest := args[0], args[1:]
	if cmd != "action" && cmd != "k8s" {
		// Everything printed from files or servers (history, a report,
		// compare's and the sweep's lines, a server's log tail) passes
		// one writer that neutralises terminal controls (termsafe). The
		// action and k8s hand their descriptors to the ceiling processes
		// they start, which neutralise their own.
		so, se := termsafe.NewWriter(stdout), termsafe.NewWriter(stderr)
		defer so.Flush()
		defer se.Flush()
		stdout, stderr = so, se
	}
	switch cmd {
	case "load":
		return runLoad(rest, stdout, stderr)
	case "agent":
		return runAgent(rest, stdout, stderr)
	case "sweep":
		return runSweep(rest, stdout, stderr)
	case "publish":
		return runPublish(rest, stdout, stderr)
	case "report":
		return runReport(rest, stdout, stderr)
	case "history":
		return runHistory(rest, stdout, stderr)
	case "calibrate":
		return runCalibrate(rest, stdout, stderr)
	case "k8s":
		return runK8s(rest, stdout, stderr)
	case "action":
		return runAction(rest, stdout, stderr)
	case "init":
		return runInit(rest, stdout, stderr)
	case "compare":
		return runCompare(rest, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version)
		return nil
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, topUsage)
		return nil
	}
	var hint string
	if s := closest(cmd, commands); len(s) > 0 {
		hint = "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usagef("unknown command %q%s (ceiling help lists the commands)", cmd, hint)
}

// commands are the commands run knows, for "did you mean".
var commands = []string{"load", "agent", "sweep", "compare", "publish", "report", "history", "calibrate", "init", "action", "k8s", "version", "help"}
