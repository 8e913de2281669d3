package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// Options are the parts of a run that are not knobs.
type Options struct {
	Version  string    // recorded in meta.version
	Command  []string  // recorded in meta.command
	Progress io.Writer // phase lines ("connecting...", "measuring..."); nil for none

	// Start, when set, is called once the connections are open (open of
	// them), before any load: it returns when the load starts, on Mono's
	// clock (the window opens the warm-up later), and Run waits until
	// then. `ceiling agent` uses it for the coordinator's barrier and its
	// common start (harness/agents). An error ends the run unmeasured.
	Start func(ctx context.Context, open int) (int64, error)
	// Recorded, when set, is given the merged record after the load
	// stopped: the histograms an agent ships to its coordinator.
	Recorded func(*Recorder)
}

// ErrNoConnections is returned when not one connection opened.
var ErrNoConnections = errors.New("no connection opened")

// Run applies one point of load and returns its result. The result is
// returned (and worth writing) even with an error, when something was
// measured or failed in a way the result records; the error's text is
// then also in summary.failure.
func Run(ctx context.Context, cfg Config, opts Options) (*Result, error) {
	res, err := run(ctx, cfg, opts)
	if res != nil && err != nil {
		res.Summary.Failure = err.Error()
		var rf *Refused
		res.Summary.Refused = errors.As(err, &rf)
	}
	return res, err
}

func run(ctx context.Context, cfg Config, opts Options) (*Result, error) {
	if err := cfg.Validate(nil); err != nil {
		return nil, err
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	if err := removeStaleFiles(&cfg); err != nil {
		return nil, err
	}
	rec, err := cfg.Record()
	if err != nil {
		return nil, err
	}
	res := &Result{SchemaVersion: SchemaVersion, Meta: CollectMeta(opts), Config: rec}
	sc, drain, err := newScenario(&cfg)
	if err != nil {
		return nil, err
	}
	merged := NewRecorder(true, cfg.OpenLoop())
	finish := func() *Result {
		sc.Finish(res, merged)
		return res
	}
	if err := sc.Preflight(ctx); err != nil {
		merged.Error("preflight")
		fillSummary(res, merged, 0, 0)
		return finish(), fmt.Errorf("preflight against %s failed, no load applied: %w", cfg.URL, err)
	}

	addrs, note := SourceAddrs(&cfg, LocalPortRange())
	if note != "" {
		fmt.Fprintln(progress, note)
	}
	ctx = wsconn.WithSourceAddrs(ctx, wsconn.NewSourceAddrs(addrs))
	before := readSelfMemory() // the baseline of the generator's memory per connection
	open, err := connectPhase(ctx, &cfg, sc, merged, progress)
	res.Summary.ConnectionsOpen = open
	if err != nil {
		fillSummary(res, merged, open, 0)
		return finish(), err
	}

	// The connect phase's garbage (handshake buffers, and the read
	// buffers of connections an event loop took over) goes back to the
	// OS now, before the warm-up: otherwise the heap it grew stays
	// resident through the window and every connection looks that much
	// dearer than it is (make bench, section 6). One collection, outside
	// the window.
	debug.FreeOSMemory()
	loadAt, err := waitForStart(ctx, &cfg, opts.Start, open)
	if err != nil {
		fillSummary(res, merged, open, 0)
		return finish(), err
	}
	w := NewWindow(loadAt, &cfg, drain)
	fmt.Fprintf(progress, "%d open; warm-up %v, then measuring %v\n", open, time.Duration(cfg.WarmupNs), time.Duration(cfg.DurationNs))
	markerErr := measureWindow(ctx, w, &cfg, sc, merged, opts.Recorded, res, open, addrs, before)
	if cfg.Drop && ctx.Err() == nil {
		fmt.Fprintf(progress, "dropping every connection without a close handshake...\n")
		dr, err := dropAll(ctx, sc, cfg.DropProbe)
		if err != nil {
			finish()
			return res, err
		}
		res.Summary.Drop = dr
	}
	finish()
	return res, runError(ctx, res, sc, markerErr)
}

// removeStaleFiles removes what an earlier run may have left at the
// measure marker and the start gate, before this run creates its own.
func removeStaleFiles(cfg *Config) error {
	if cfg.MeasureMarker != "" {
		// A marker left by an earlier run would start the watcher's
		// sampling before this run's window.
		if err := os.Remove(cfg.MeasureMarker); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--measure-marker %s: removing a stale marker: %w", cfg.MeasureMarker, err)
		}
	}
	if cfg.StartGate != "" {
		if err := removeStaleGate(cfg.StartGate); err != nil {
			return err
		}
	}
	return nil
}

// newScenario builds the payload pool and the scenario over it, and the
// drain the scenario asks for (Drain unless it is a Drainer).
func newScenario(cfg *Config) (Scenario, int64, error) {
	pool, err := payload.New(cfg.Payload, cfg.PayloadSeed, cfg.RecordSize, payload.PoolSize(cfg.RecordSize, cfg.Batch, cfg.Connections))
	if err != nil {
		return nil, 0, err
	}
	sc, err := cfg.Params.New(cfg, pool)
	if err != nil {
		return nil, 0, err
	}
	drain := int64(Drain)
	if d, ok := sc.(Drainer); ok {
		drain = d.DrainNs()
	}
	return sc, drain, nil
}

// connectPhase opens the connections, records each failure in merged,
// and returns how many opened. The error is set when none opened or the
// context ended meanwhile; the run then stops unmeasured.
func connectPhase(ctx context.Context, cfg *Config, sc Scenario, merged *Recorder, progress io.Writer) (int, error) {
	fmt.Fprintf(progress, "connecting %d (%s)...\n", cfg.Connections, cfg.ConnectStrategy)
	errs := connectAll(ctx, cfg.ConnectStrategy, cfg.ConnectConcurrency, time.Duration(cfg.ConnectStaggerMs)*time.Millisecond, cfg.Connections, sc.Connect)
	open := 0
	var firstErr error
	for _, err := range errs {
		if err == nil {
			open++
			continue
		}
		merged.Error("connect_" + Reason(err))
		if firstErr == nil {
			firstErr = err
		}
	}
	if open == 0 {
		// Refused only when every connection was: one that timed out
		// may have met a busy server, not a refusal.
		var rf *Refused
		if errors.As(firstErr, &rf) && !allRefused(errs) {
			firstErr = rf.Err
		}
		return open, fmt.Errorf("%w: %d of %d failed, first: %w", ErrNoConnections, cfg.Connections, cfg.Connections, firstErr)
	}
	if ctx.Err() != nil {
		return open, ctx.Err()
	}
	return open, nil
}

// allRefused: every error of errs is a Refused.
func allRefused(errs []error) bool {
	for _, err := range errs {
		var rf *Refused
		if !errors.As(err, &rf) {
			return false
		}
	}
	return true
}

// waitForStart returns when the load starts, on Mono's clock: now, or
// the time start (or, without it, the start gate) names, once reached.
func waitForStart(ctx context.Context, cfg *Config, start func(context.Context, int) (int64, error), open int) (int64, error) {
	loadAt := Mono()
	if start == nil && cfg.StartGate != "" {
		start = gateStart(cfg.StartGate)
	}
	if start != nil {
		at, err := start(ctx, open)
		if err != nil {
			return 0, fmt.Errorf("start: %w", err)
		}
		if !SleepUntil(at, ctx.Done()) {
			return 0, ctx.Err()
		}
		loadAt = at
	}
	return loadAt, nil
}

// measureWindow applies the load through the window w, merges the
// connections' records into merged and fills res's summary and generator
// stats. It returns the measure marker's error, if any.
func measureWindow(ctx context.Context, w Window, cfg *Config, sc Scenario, merged *Recorder, recorded func(*Recorder), res *Result, open int, addrs []netip.Addr, before procfs.Memory) error {
	obs := startObserver(ctx, w, cfg.MeasureMarker, sc)
	recs := sc.Load(ctx, w)
	stats, markerErr := obs.wait()
	for _, r := range recs {
		merged.Merge(r)
	}
	if recorded != nil {
		recorded(merged)
	}
	measured := w.End - w.Start
	if now := Mono(); now < w.End {
		measured = now - w.Start // cut short
	}
	if measured < 0 {
		measured = 0
	}
	fillSummary(res, merged, open, measured)
	res.Generator = stats.generatorStats(merged, measured)
	res.Generator.Memory = selfMemory(before, stats.start.mem, stats.end.mem)
	if len(addrs) > 0 {
		res.Generator.SourceAddrs = sourceStrings(addrs)
	}
	reportLoops(&res.Generator, sc, w)
	reportIOPattern(&res.Generator, sc)
	return markerErr
}

// runError is the error of a run that reached its window: the marker's,
// an interruption, or nothing having arrived; nil when none.
func runError(ctx context.Context, res *Result, sc Scenario, markerErr error) error {
	if markerErr != nil {
		return fmt.Errorf("--measure-marker: %w", markerErr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted before the window ended: %w", ctx.Err())
	}
	if err := nothingArrived(res, sc); err != nil {
		return err
	}
	return nil
}

// ErrNothingArrived is a run that ran its window and got not one message
// back: not a throughput of zero but a failure, so the harness fails the
// point (summary.failure) instead of reporting a figure with a verdict.
var ErrNothingArrived = errors.New("nothing arrived in the window")

// nothingArrived says why a run that got no message in its window failed,
// or nil when something arrived.
func nothingArrived(res *Result, explainer Scenario) error {
	s := &res.Summary
	if s.Messages > 0 || s.MeasuredNs <= 0 {
		return nil
	}
	why := ""
	if len(s.ErrorsByReason) > 0 {
		var parts []string
		for _, k := range sortedReasons(s.ErrorsByReason) {
			parts = append(parts, fmt.Sprintf("%s %d", k, s.ErrorsByReason[k]))
		}
		why = "; errors: " + strings.Join(parts, ", ")
	}
	if sc, ok := explainer.(NothingExplainer); ok {
		return sc.NothingArrived(res, why)
	}
	return fmt.Errorf("%w: no reply to %.0f operations/s attempted%s", ErrNothingArrived, s.AttemptedOpsPerS, why)
}

// fillSummary computes the scenario-independent summary from the merged
// record. Throughput is messages over the measured window; nothing is
// smoothed or extrapolated.
func fillSummary(res *Result, m *Recorder, open int, measuredNs int64) {
	c := &res.Config
	s := &res.Summary
	s.Scenario = c.Scenario
	s.Mode = "closed"
	if c.OpenLoop() {
		s.Mode = "open"
		r := c.Rate
		s.RequestedOpsPerS = &r
	}
	s.ConnectionsRequested = c.Connections
	s.ConnectionsOpen = open
	s.MeasuredNs = measuredNs
	s.Messages = m.Messages
	if measuredNs > 0 {
		sec := float64(measuredNs) / 1e9
		s.ThroughputPerS = float64(m.Messages) / sec
		s.BytesPerS = float64(m.Bytes) / sec
		s.AchievedOpsPerS = float64(m.OK) / sec
		s.AttemptedOpsPerS = float64(m.Ops) / sec
	}
	s.Errors = m.TotalErrors()
	s.ErrorsByReason = m.Errors
	if s.ErrorsByReason == nil {
		s.ErrorsByReason = map[string]int64{}
	}
	if out := m.Latency.OutOfRange(); out > 0 {
		s.Errors += out
		s.ErrorsByReason["latency_out_of_range"] += out
	}
	// We never reconnect: a lost connection is counted in errors (its
	// reason) and in dropped, and reconnects is always 0.
	dropped, reconnects := m.Dropped, int64(0)
	s.Dropped, s.Reconnects = &dropped, &reconnects
	if m.SaturatedReason != "" {
		s.Saturated = true
		s.SaturatedReason = m.SaturatedReason
	}
	s.Latency = m.Latency.Latency()
	s.Timeline = m.Timeline
}

// sortedReasons lists error reasons by count, largest first.
func sortedReasons(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return strings.Compare(keys[i], keys[j]) < 0
	})
	return keys
}
