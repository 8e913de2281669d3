package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

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
	if cfg.MeasureMarker != "" {
		// A marker left by an earlier run would start the watcher's
		// sampling before this run's window.
		if err := os.Remove(cfg.MeasureMarker); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--measure-marker %s: removing a stale marker: %w", cfg.MeasureMarker, err)
		}
	}
	if cfg.StartGate != "" {
		if err := removeStaleGate(cfg.StartGate); err != nil {
			return nil, err
		}
	}
	res := &Result{SchemaVersion: SchemaVersion, Meta: CollectMeta(opts), Config: cfg}
	pool, err := payload.New(cfg.Payload, cfg.PayloadSeed, cfg.RecordSize, payload.PoolSize(cfg.RecordSize, cfg.Batch, cfg.Connections))
	if err != nil {
		return nil, err
	}
	sc, err := cfg.Params.New(&cfg, pool)
	if err != nil {
		return nil, err
	}
	drain := int64(Drain)
	if d, ok := sc.(Drainer); ok {
		drain = d.DrainNs()
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
	res.Summary.ConnectionsOpen = open
	if open == 0 {
		fillSummary(res, merged, open, 0)
		return finish(), fmt.Errorf("%w: %d of %d failed, first: %w", ErrNoConnections, cfg.Connections, cfg.Connections, firstErr)
	}
	if ctx.Err() != nil {
		fillSummary(res, merged, open, 0)
		return finish(), ctx.Err()
	}

	// The connect phase's garbage (handshake buffers, and the read
	// buffers of connections an event loop took over) goes back to the
	// OS now, before the warm-up: otherwise the heap it grew stays
	// resident through the window and every connection looks that much
	// dearer than it is (make bench, section 6). One collection, outside
	// the window.
	debug.FreeOSMemory()
	loadAt := Mono()
	if opts.Start == nil && cfg.StartGate != "" {
		opts.Start = gateStart(cfg.StartGate)
	}
	if opts.Start != nil {
		at, err := opts.Start(ctx, open)
		if err != nil {
			fillSummary(res, merged, open, 0)
			return finish(), fmt.Errorf("start: %w", err)
		}
		if !SleepUntil(at, ctx.Done()) {
			fillSummary(res, merged, open, 0)
			return finish(), ctx.Err()
		}
		loadAt = at
	}
	w := NewWindow(loadAt, &cfg, drain)
	fmt.Fprintf(progress, "%d open; warm-up %v, then measuring %v\n", open, time.Duration(cfg.WarmupNs), time.Duration(cfg.DurationNs))
	obs := startObserver(ctx, w, cfg.MeasureMarker, sc)
	recs := sc.Load(ctx, w)
	stats, markerErr := obs.wait()
	for _, r := range recs {
		merged.Merge(r)
	}
	if opts.Recorded != nil {
		opts.Recorded(merged)
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
	if len(addrs) > 0 {
		res.Generator.SourceAddrs = sourceStrings(addrs)
	}
	reportLoops(&res.Generator, sc, w)
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
	if markerErr != nil {
		return res, fmt.Errorf("--measure-marker: %w", markerErr)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("interrupted before the window ended: %w", ctx.Err())
	}
	if err := nothingArrived(res, sc); err != nil {
		return res, err
	}
	return res, nil
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
