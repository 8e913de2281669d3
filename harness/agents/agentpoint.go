package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/load"
)

// runAgentPoint runs one point from its welcome. It returns the next message
// when the point's reader already took it (nil: read it), whether the
// result was sent, and the point's own failure.
func runAgentPoint(ctx context.Context, ac AgentConfig, c *conn, w *Welcome) (next *message, measured bool, pointErr error) {
	ap := &agentPoint{ac: ac, c: c, clock: agentClock{skew: ac.WallSkew}}
	fmt.Fprintf(ac.Log, "agent %d of %d: point joined at %s\n", ac.Index, w.Agents, ac.Coordinator)
	_ = c.c.SetDeadline(time.Now().Add(ac.DialTimeout))
	samples, connLost, err := ap.sampleClock(w.Samples)
	if err != nil {
		if connLost {
			return &message{err: err}, false, err
		}
		return nil, false, err // a peer failed: wait for the next point
	}
	ap.best = Best(samples)
	fmt.Fprintf(ac.Log, "agent %d: rtt %v, clock offset %v (best of %d)\n", ac.Index, time.Duration(ap.best.RTT()), time.Duration(ap.best.Offset()), len(samples))

	cfg, err := ac.Parse(w.Args)
	if err != nil {
		return ap.fail(&BadArgsError{err})
	}
	cfg.MeasureMarker, cfg.JSONPath = "", "" // the coordinator makes both

	// After go, the coordinator may abort (a peer failed): the load stops.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ap.cancel = cancel
	res, recorded, runErr := ap.runLoad(ctx, runCtx, cfg, w.Args)
	msg, err := resultMsg(res, recorded, runErr)
	if err != nil {
		return ap.fail(err)
	}
	return ap.sendResult(msg, runErr)
}

// agentPoint is one point on the agent's side: its connection, its clock
// and, once measured, the best clock sample.
type agentPoint struct {
	ac     AgentConfig
	c      *conn
	clock  agentClock
	best   Sample
	cancel context.CancelCauseFunc // stops the load when the coordinator aborts
	after  chan *message           // the reader after go: the only one then
}

// fail sends the point's failure to the coordinator as its result.
func (ap *agentPoint) fail(err error) (*message, bool, error) {
	nc := ap.c.c
	fmt.Fprintf(ap.ac.Log, "agent %d: %v\n", ap.ac.Index, err)
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if serr := ap.c.send(tResult, &ResultMsg{Failure: err.Error()}); serr != nil {
		return &message{err: serr}, false, err
	}
	_ = nc.SetDeadline(time.Time{})
	return nil, false, err
}

// sampleClock takes n clock samples (ping, pong). connLost: its error is
// the connection's; else the coordinator aborted the point.
func (ap *agentPoint) sampleClock(n int) (samples []Sample, connLost bool, err error) {
	for i := range n {
		t1 := ap.clock.wall()
		if err := ap.c.send(tPing, &Ping{Seq: i, T1: t1}); err != nil {
			return nil, true, fmt.Errorf("ping: %w", err)
		}
		var p *Pong
		for p == nil {
			b, err := ap.c.expect(tPong)
			var ab *AbortError
			if errors.As(err, &ab) {
				return nil, false, err // a peer failed: wait for the next point
			}
			if err != nil {
				return nil, true, fmt.Errorf("pong: %w", err)
			}
			// An aborted point's last ping may be answered first: the
			// coordinator answers in order, so ours follows.
			if m := b.(*Pong); m.Seq == i && m.T1 == t1 {
				p = m
			}
		}
		t4 := ap.clock.wall()
		samples = append(samples, Sample{T1: t1, T2: p.T2, T3: p.T3, T4: t4})
	}
	return samples, false, nil
}

// runLoad runs the point's load on runCtx, its start at the
// coordinator's go; the error is the abort's where the coordinator
// stopped it.
func (ap *agentPoint) runLoad(ctx, runCtx context.Context, cfg load.Config, args []string) (*load.Result, *load.Recorder, error) {
	var recorded *load.Recorder
	res, runErr := load.Run(runCtx, cfg, load.Options{
		Version:  ap.ac.Version,
		Command:  load.RedactCommand(append([]string{"ceiling", "agent", "--index", strconv.Itoa(ap.ac.Index)}, args...)),
		Start:    ap.start,
		Recorded: func(r *load.Recorder) { recorded = r },
	})
	if cause := context.Cause(runCtx); runErr != nil && cause != nil && ctx.Err() == nil {
		runErr = cause
	}
	return res, recorded, runErr
}

// start is the load's Start: ready with open connections, wait for go,
// then announce the window's start and listen for an abort during the
// load. It returns when the load begins, on the monotonic clock.
func (ap *agentPoint) start(ctx context.Context, open int) (int64, error) {
	c, nc, best := ap.c, ap.c.c, ap.best
	_ = nc.SetDeadline(time.Now().Add(ap.ac.DialTimeout))
	if err := c.send(tReady, &Ready{Open: open, RTTNs: best.RTT(), OffsetNs: best.Offset()}); err != nil {
		return 0, fmt.Errorf("ready: %w", err)
	}
	b, err := c.expect(tGo)
	if err != nil {
		return 0, fmt.Errorf("barrier: %w", err)
	}
	_ = nc.SetDeadline(time.Time{})
	g := b.(*Go)
	loadAt := ap.clock.toMono(g.LoadAt, best.Offset())
	windowAt := loadAt + (g.WindowStart - g.LoadAt) // one conversion: both on the monotonic clock
	go func() {
		if !load.SleepUntil(windowAt, ctx.Done()) {
			return
		}
		_ = c.send(tStarted, &Started{LateNs: max(0, load.Mono()-windowAt)})
	}()
	ap.after = make(chan *message, 1)
	go func() { // the coordinator's word during the load: only abort
		m := &message{}
		m.typ, m.body, m.err = c.recv()
		switch {
		case m.err != nil:
			ap.cancel(fmt.Errorf("coordinator connection: %w", m.err))
		case m.typ == tAbort:
			ap.cancel(&AbortError{Reason: m.body.(*Abort).Reason})
		}
		ap.after <- m
	}()
	fmt.Fprintf(ap.ac.Log, "agent %d: %d open; load in %v, window %v\n", ap.ac.Index, open, time.Duration(loadAt-load.Mono()), time.Duration(g.WindowEnd-g.WindowStart))
	return loadAt, nil
}

// resultMsg is the point's result for the coordinator: the load's
// result and histograms, or its failure. Its error is one of encoding.
func resultMsg(res *load.Result, recorded *load.Recorder, runErr error) (*ResultMsg, error) {
	msg := &ResultMsg{}
	if runErr != nil {
		msg.Failure = runErr.Error()
	}
	if res != nil {
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("encode result: %w", err)
		}
		msg.Result = raw
	}
	if recorded != nil && recorded.Latency != nil {
		e, err := recorded.Latency.Encode()
		if err != nil {
			return nil, fmt.Errorf("encode latency histogram: %w", err)
		}
		msg.Latency = &e
		if recorded.Lag != nil {
			e, err := recorded.Lag.Encode()
			if err != nil {
				return nil, fmt.Errorf("encode lag histogram: %w", err)
			}
			msg.Lag = &e
		}
	}
	if msg.Failure == "" && msg.Latency == nil {
		msg.Failure = "no latency histogram recorded"
	}
	return msg, nil
}

// sendResult sends the result, then hands back the message the reader
// after go took (nil where it was the point's abort: wait for the next).
func (ap *agentPoint) sendResult(msg *ResultMsg, runErr error) (*message, bool, error) {
	nc := ap.c.c
	if msg.Failure != "" {
		fmt.Fprintf(ap.ac.Log, "agent %d: point failed: %s\n", ap.ac.Index, msg.Failure)
	}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := ap.c.send(tResult, msg); err != nil {
		return &message{err: fmt.Errorf("send result: %w", err)}, false, runErr
	}
	_ = nc.SetDeadline(time.Time{})
	fmt.Fprintf(ap.ac.Log, "agent %d: result sent\n", ap.ac.Index)
	if ap.after != nil {
		m := <-ap.after
		if m.err == nil && m.typ == tAbort {
			m = nil // the point was aborted: wait for the next one
		}
		return m, msg.Failure == "", runErr
	}
	return nil, msg.Failure == "", runErr
}
