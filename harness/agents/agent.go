package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/load"
)

// AgentConfig is what `ceiling agent` needs.
type AgentConfig struct {
	Coordinator string // host:port the agent dials
	Index       int    // its segment, 0..N-1
	// WallSkew shifts this agent's wall clock (test only): the window must
	// still line up, since the offset it measures absorbs the shift.
	WallSkew time.Duration
	// DialTimeout bounds finding the coordinator (it may come up after
	// the agent, as a pod does).
	DialTimeout time.Duration
	// Parse turns the point's `ceiling load` flags into a Config (the
	// CLI's own flag set, so an agent accepts exactly what `ceiling load`
	// does). Its error is a bad flag.
	Parse   func(args []string) (load.Config, error)
	Version string
	Log     io.Writer // progress; nil for none
}

// IndexFromEnv is the agent index of a Kubernetes Indexed Job's pod
// (JOB_COMPLETION_INDEX), when set.
func IndexFromEnv(getenv func(string) string) (int, bool, error) {
	v := getenv("JOB_COMPLETION_INDEX")
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, true, fmt.Errorf("JOB_COMPLETION_INDEX: %q is not an index", v)
	}
	return n, true, nil
}

// BadArgsError is the coordinator's flags refused by the agent's parser.
type BadArgsError struct{ Err error }

func (e *BadArgsError) Error() string { return "the point's flags: " + e.Err.Error() }
func (e *BadArgsError) Unwrap() error { return e.Err }

// RunAgent is one agent session: join, take the clock, run the segment on
// the common window, send the result. Every failure after joining is also
// sent to the coordinator (as a result with its failure), so the point
// names this agent.
func RunAgent(ctx context.Context, ac AgentConfig) error {
	logw := ac.Log
	if logw == nil {
		logw = io.Discard
	}
	timeout := ac.DialTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	nc, err := dialRetry(ctx, ac.Coordinator, timeout)
	if err != nil {
		return err
	}
	defer nc.Close()
	c := newConn(nc)
	clock := agentClock{skew: ac.WallSkew}
	// Nothing may hang: until the load starts, every step is bounded.
	_ = nc.SetDeadline(time.Now().Add(timeout))
	if err := c.send(tHello, &Hello{Index: ac.Index}); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	b, err := c.expect(tWelcome)
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	w := b.(*Welcome)
	fmt.Fprintf(logw, "agent %d of %d: joined %s\n", ac.Index, w.Agents, ac.Coordinator)

	fail := func(err error) error {
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		_ = c.send(tResult, &ResultMsg{Failure: err.Error()})
		return err
	}
	var samples []Sample
	for i := range w.Samples {
		t1 := clock.wall()
		if err := c.send(tPing, &Ping{Seq: i, T1: t1}); err != nil {
			return fmt.Errorf("ping: %w", err)
		}
		b, err := c.expect(tPong)
		if err != nil {
			return fmt.Errorf("pong: %w", err)
		}
		t4 := clock.wall()
		p := b.(*Pong)
		if p.Seq != i || p.T1 != t1 {
			return fmt.Errorf("pong.seq: %d (t1 %d) answers no ping of ours (%d)", p.Seq, p.T1, i)
		}
		samples = append(samples, Sample{T1: t1, T2: p.T2, T3: p.T3, T4: t4})
	}
	best := Best(samples)
	fmt.Fprintf(logw, "agent %d: rtt %v, clock offset %v (best of %d)\n", ac.Index, time.Duration(best.RTT()), time.Duration(best.Offset()), len(samples))

	cfg, err := ac.Parse(w.Args)
	if err != nil {
		return fail(&BadArgsError{err})
	}
	cfg.MeasureMarker, cfg.JSONPath = "", "" // the coordinator makes both

	// After go, the coordinator may abort (a peer failed): the load stops.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var recorded *load.Recorder
	var readerDone chan struct{} // the reader after go: the only one then
	start := func(ctx context.Context, open int) (int64, error) {
		_ = nc.SetDeadline(time.Now().Add(timeout))
		if err := c.send(tReady, &Ready{Open: open, RTTNs: best.RTT(), OffsetNs: best.Offset()}); err != nil {
			return 0, fmt.Errorf("ready: %w", err)
		}
		b, err := c.expect(tGo)
		if err != nil {
			return 0, fmt.Errorf("barrier: %w", err)
		}
		_ = nc.SetDeadline(time.Time{})
		g := b.(*Go)
		loadAt := clock.toMono(g.LoadAt, best.Offset())
		windowAt := loadAt + (g.WindowStart - g.LoadAt) // one conversion: both on the monotonic clock
		go func() {
			if !load.SleepUntil(windowAt, ctx.Done()) {
				return
			}
			_ = c.send(tStarted, &Started{LateNs: max(0, load.Mono()-windowAt)})
		}()
		readerDone = make(chan struct{})
		go func() { // the coordinator's word during the load: only abort
			defer close(readerDone)
			_, err := c.expect(tAbort)
			var ab *AbortError
			if err == nil {
				cancel(errors.New("aborted by the coordinator"))
			} else if errors.As(err, &ab) {
				cancel(ab)
			} else {
				cancel(fmt.Errorf("coordinator connection: %w", err))
			}
		}()
		fmt.Fprintf(logw, "agent %d: %d open; load in %v, window %v\n", ac.Index, open, time.Duration(loadAt-load.Mono()), time.Duration(g.WindowEnd-g.WindowStart))
		return loadAt, nil
	}
	res, runErr := load.Run(runCtx, cfg, load.Options{
		Version:  ac.Version,
		Command:  load.RedactCommand(append([]string{"ceiling", "agent", "--index", strconv.Itoa(ac.Index)}, w.Args...)),
		Start:    start,
		Recorded: func(r *load.Recorder) { recorded = r },
	})
	if cause := context.Cause(runCtx); runErr != nil && cause != nil && ctx.Err() == nil {
		runErr = cause
	}
	msg := &ResultMsg{}
	if runErr != nil {
		msg.Failure = runErr.Error()
	}
	if res != nil {
		raw, err := json.Marshal(res)
		if err != nil {
			return fail(fmt.Errorf("encode result: %w", err))
		}
		msg.Result = raw
	}
	if recorded != nil && recorded.Latency != nil {
		e, err := recorded.Latency.Encode()
		if err != nil {
			return fail(fmt.Errorf("encode latency histogram: %w", err))
		}
		msg.Latency = &e
		if recorded.Lag != nil {
			e, err := recorded.Lag.Encode()
			if err != nil {
				return fail(fmt.Errorf("encode lag histogram: %w", err))
			}
			msg.Lag = &e
		}
	}
	if msg.Failure == "" && msg.Latency == nil {
		msg.Failure = "no latency histogram recorded"
	}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := c.send(tResult, msg); err != nil {
		return fmt.Errorf("send result: %w", err)
	}
	// Wait for the coordinator to close (it has read the result), bounded
	// by the deadline.
	if readerDone != nil {
		<-readerDone
	} else {
		_, _, _ = c.recv()
	}
	fmt.Fprintf(logw, "agent %d: result sent\n", ac.Index)
	return runErr
}

func dialRetry(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(timeout)
	var d net.Dialer
	for {
		dctx, cancel := context.WithDeadline(ctx, deadline)
		nc, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			if tc, ok := nc.(*net.TCPConn); ok {
				_ = tc.SetNoDelay(true)
			}
			return nc, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, fmt.Errorf("--coordinator %s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
