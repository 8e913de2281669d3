package load

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/atomicfile"
)

// The start gate (--start-gate FILE) lets a coordinator start several
// generators' load at one instant: a duet's two arms (docs/compare.md,
// "Duet mode"). A generator with a gate connects every connection, then
// creates FILE.ready and waits for FILE. The coordinator writes FILE, for
// every generator it holds, with one start time: decimal Unix nanoseconds
// on this machine's wall clock, in the near future. Each generator starts
// its load (then its warm-up and window, as without a gate) at that
// instant, converted once to its own monotonic clock.
//
// The gate is for generators on one machine: the wall clock is shared
// there, and the files are local.

// GateReady is the file a gated generator creates once every connection
// is open.
func GateReady(gate string) string { return gate + ".ready" }

// removeStaleGate removes a gate and its ready file left by an earlier
// run, which would start this one before its coordinator says so.
func removeStaleGate(gate string) error {
	for _, f := range []string{gate, GateReady(gate)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--start-gate %s: removing a stale %s: %w", gate, f, err)
		}
	}
	return nil
}

// gatePoll is how often a gated generator looks for its gate.
const gatePoll = 2 * time.Millisecond

// OpenGates writes each gate with the start time at, atomically, so that
// a generator never reads half a time.
func OpenGates(at time.Time, gates ...string) error {
	var errs []error
	for _, g := range gates {
		if err := atomicfile.Write(g, []byte(strconv.FormatInt(at.UnixNano(), 10)+"\n")); err != nil {
			errs = append(errs, fmt.Errorf("open start gate %s: %w", g, err))
		}
	}
	return errors.Join(errs...)
}

// gateStart is the Options.Start of a generator run with --start-gate:
// it signals ready, waits for the gate (until ctx ends), and returns the
// load's start on the monotonic clock. A start already past starts now.
func gateStart(gate string) func(ctx context.Context, open int) (int64, error) {
	return func(ctx context.Context, open int) (int64, error) {
		if err := atomicfile.Write(GateReady(gate), nil); err != nil {
			return 0, fmt.Errorf("--start-gate: %w", err)
		}
		t := time.NewTicker(gatePoll)
		defer t.Stop()
		for {
			b, err := os.ReadFile(gate)
			if err == nil {
				ns, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
				if perr != nil {
					return 0, fmt.Errorf("--start-gate %s: %q is not a start time in Unix nanoseconds", gate, strings.TrimSpace(string(b)))
				}
				return Mono() + max(0, ns-time.Now().UnixNano()), nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return 0, fmt.Errorf("--start-gate: %w", err)
			}
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-t.C:
			}
		}
	}
}
