package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/internal/atomicfile"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// Run runs one point: it claims the sessions of agents 0..plan.Agents-1
// as they join (within plan.ReadyTimeout, with the rest of the barrier),
// starts them together, collects and merges their results. Its error is
// an *InvalidError naming the agent (the Outcome then lists what is
// known) or ctx's. The sessions return to the hub after a measured point
// and are closed after a failed one (their agents rejoin). One point at a
// time.
func (h *Hub) Run(ctx context.Context, p Plan) (*Outcome, error) {
	if p.Agents < 1 || p.Agents > h.n {
		return nil, fmt.Errorf("agents: a point of %d agents on a hub of %d", p.Agents, h.n)
	}
	if p.Log != nil {
		h.SetLog(p.Log)
	}
	p.defaults()
	pt := h.newPoint(ctx, p)
	defer pt.release()
	pt.claim()
	if err := pt.barrier(ctx); err != nil {
		return pt.fail(err)
	}
	g, maxRTT := pt.start()
	if err := pt.collect(ctx, g, maxRTT); err != nil {
		return pt.fail(err)
	}
	out, err := pt.merge()
	if err == nil {
		err = pt.lateStarts()
	}
	return out, err
}

// point is the state of one Hub.Run: the plan, each agent's report and
// session, and the events the sessions' goroutines send up.
type point struct {
	h       *Hub
	p       Plan
	n       int
	now     func() int64
	reports []*Report
	out     *Outcome
	events  chan event

	mu       sync.Mutex
	sessions map[int]*session
	aborted  bool // abortAll ran: a session claimed after it is not welcomed
	wg       sync.WaitGroup
	runCtx   context.Context
	cancel   context.CancelFunc
}

// newPoint lays out the agents' reports, each with its segment.
func (h *Hub) newPoint(ctx context.Context, p Plan) *point {
	n := p.Agents
	pt := &point{
		h: h, p: p, n: n,
		now:      func() int64 { return time.Now().UnixNano() },
		reports:  make([]*Report, n),
		out:      &Outcome{},
		events:   make(chan event, 4*n+16),
		sessions: map[int]*session{},
	}
	for i := range pt.reports {
		conns, rate := Segment(p.Connections, p.Rate, n, i)
		pt.reports[i] = &Report{Agent: Agent{AgentReport: result.AgentReport{Index: i, Connections: conns}}}
		if p.Rate > 0 {
			pt.reports[i].RateOpsPerS = &rate
		}
	}
	pt.runCtx, pt.cancel = context.WithCancel(ctx)
	return pt
}

// listOut copies the reports into the Outcome.
func (pt *point) listOut() {
	pt.out.Agents, pt.out.reports = pt.out.Agents[:0], pt.reports
	for _, r := range pt.reports {
		pt.out.Agents = append(pt.out.Agents, r.Agent)
	}
}

// release ends the point's goroutines and hands every session back to
// the hub.
func (pt *point) release() {
	pt.cancel()
	pt.mu.Lock()
	for _, s := range pt.sessions {
		_ = s.c.c.SetReadDeadline(time.Now()) // unblocks its serve
	}
	pt.mu.Unlock()
	pt.wg.Wait()
	// Every session goes back to the hub, also after a failed point:
	// the agent was told abort and waits for the next point (what it
	// still sends of this one is skipped; a broken one is dropped).
	for i, s := range pt.sessions {
		_ = s.c.c.SetDeadline(time.Time{})
		pt.h.release(i, s.c)
	}
}

// abortAll tells every agent welcomed to the point to abort it; the
// sessions not welcomed yet, and any claimed from now on, are not
// welcomed at all.
func (pt *point) abortAll(reason string) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.aborted = true
	for _, s := range pt.sessions {
		s.abort(reason)
	}
}

// fail aborts the point with err and returns what is known.
func (pt *point) fail(err error) (*Outcome, error) {
	pt.abortAll(err.Error())
	pt.listOut()
	return pt.out, err
}

// claim takes each agent's session as it is (or comes) idle, served in
// its own goroutine that reports events.
func (pt *point) claim() {
	pt.wg.Add(1)
	go func() {
		defer pt.wg.Done()
		for {
			for idx, c := range pt.h.claim(func(i int) bool { return i < pt.n }) {
				s := &session{c: c, index: idx, goCh: make(chan *Go, 1)}
				pt.mu.Lock()
				s.aborted = pt.aborted
				pt.sessions[idx] = s
				pt.reports[idx].joined = true
				pt.reports[idx].Peer = c.c.RemoteAddr().String()
				pt.mu.Unlock()
				pt.wg.Add(1)
				go func() {
					defer pt.wg.Done()
					pt.h.serve(pt.runCtx, pt.p, s, pt.n, pt.reports, pt.events, pt.now)
				}()
			}
			select {
			case <-pt.h.arrived:
			case <-pt.runCtx.Done():
				return
			}
		}
	}()
}

// barrier is phase 1: it waits until every agent is ready, within
// ReadyTimeout. A session lost before ready is let go for its agent to
// rejoin.
func (pt *point) barrier(ctx context.Context) error {
	readyBy := time.NewTimer(pt.p.ReadyTimeout)
	defer readyBy.Stop()
	ready := 0
	for ready < pt.n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-readyBy.C:
			return pt.notReady()
		case e := <-pt.events:
			if e.err != nil {
				return noteFailure(pt.reports, e)
			}
			if e.typ == evLost {
				pt.lost(e)
				continue
			}
			if e.typ == tReady {
				r := pt.reports[e.index]
				m := e.body.(*Ready)
				r.ready, r.RTTNs, r.ClockOffsetNs = true, m.RTTNs, m.OffsetNs
				if m.Open < r.Connections {
					fmt.Fprintf(pt.p.Log, "coordinator: agent %d opened %d of %d connections\n", r.Index, m.Open, r.Connections)
				}
				ready++
			}
		}
	}
	return nil
}

// notReady is the barrier's error at ReadyTimeout: the agents not ready.
func (pt *point) notReady() error {
	var missing []string
	pt.mu.Lock()
	for _, r := range pt.reports {
		if !r.ready {
			what := "never joined"
			if r.joined {
				what = "joined but was not ready"
			}
			missing = append(missing, fmt.Sprintf("agent %d %s", r.Index, what))
		}
	}
	pt.mu.Unlock()
	return invalid("%s within %s", strings.Join(missing, ", "), pt.p.ReadyTimeout)
}

// lost lets go of a session whose connection ended before ready.
func (pt *point) lost(e event) {
	pt.mu.Lock()
	s := pt.sessions[e.index]
	delete(pt.sessions, e.index)
	pt.reports[e.index].joined = false
	pt.mu.Unlock()
	s.c.c.Close()
	pt.h.unbusy(e.index)
	pt.h.logf("agent %d: connection lost before ready (%v); waiting for it to rejoin", e.index, e.body)
}

// start is phase 2: one start for all, far enough ahead for the slowest
// to hear of it. It returns the start and the largest round trip.
func (pt *point) start() (*Go, int64) {
	var maxRTT int64
	for _, r := range pt.reports {
		maxRTT = max(maxRTT, r.RTTNs)
	}
	lead := max(int64(pt.p.Lead), 4*maxRTT)
	g := &Go{LoadAt: pt.now() + lead}
	g.WindowStart = g.LoadAt + int64(pt.p.Warmup)
	g.WindowEnd = g.WindowStart + int64(pt.p.Duration)
	pt.out.WindowStart = time.Unix(0, g.WindowStart)
	pt.mu.Lock()
	for _, s := range pt.sessions {
		s.goCh <- g
	}
	pt.mu.Unlock()
	fmt.Fprintf(pt.p.Log, "coordinator: %d agents ready; load in %v, window %v after\n", pt.n, time.Duration(lead), pt.p.Warmup)
	return g, maxRTT
}

// collect is phase 3: the marker at the window's start, every agent
// started within MaxStartSkew, every result by the deadline.
func (pt *point) collect(ctx context.Context, g *Go, maxRTT int64) error {
	p := pt.p
	marker := time.NewTimer(time.Until(pt.out.WindowStart))
	defer marker.Stop()
	startedBy := time.NewTimer(time.Until(pt.out.WindowStart) + p.MaxStartSkew + time.Duration(maxRTT) + time.Second)
	defer startedBy.Stop()
	resultsBy := time.NewTimer(time.Until(time.Unix(0, g.WindowEnd)) + p.ResultTimeout)
	defer resultsBy.Stop()
	started, done := 0, 0
	for done < pt.n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-marker.C:
			if p.Marker != "" {
				if err := atomicfile.Write(p.Marker, nil); err != nil {
					return fmt.Errorf("marker %s: %w", p.Marker, err)
				}
			}
		case <-startedBy.C:
			if started < pt.n {
				return pt.late()
			}
		case <-resultsBy.C:
			var missing []string
			for _, r := range pt.reports {
				if !r.done {
					missing = append(missing, strconv.Itoa(r.Index))
				}
			}
			return invalid("agent %s sent no result within %s of the window's end", strings.Join(missing, ", "), p.ResultTimeout)
		case e := <-pt.events:
			if e.err != nil {
				return noteFailure(pt.reports, e)
			}
			r := pt.reports[e.index]
			switch e.typ {
			case tStarted:
				started++
				pt.started(r, e, g)
			case tResult:
				if err := r.take(e.body.(*ResultMsg)); err != nil {
					return err
				}
				if !r.started {
					return invalid("agent %d sent its result without starting its window", r.Index)
				}
				r.done = true
				done++
			}
		}
	}
	return nil
}

// late is collect's error when not every agent started its window in
// time.
func (pt *point) late() error {
	var late []string
	for _, r := range pt.reports {
		if !r.started {
			late = append(late, strconv.Itoa(r.Index))
		}
	}
	return invalid("agent %s did not start its window within %s of the common start", strings.Join(late, ", "), pt.p.MaxStartSkew)
}

// started records an agent's window start, and marks it LateStart when
// it started more than MaxStartSkew late. That is not yet the point's
// failure: an agent starved of CPU sends its "started" late too, and its
// result then shows it fell behind (the harness judges which; see
// LateStartError).
func (pt *point) started(r *Report, e event, g *Go) {
	r.started = true
	// Where the agent placed its window on the coordinator's clock: its
	// message's arrival less half the round trip and less its own
	// wake-up's lateness (the window's edges are arithmetic on its
	// monotonic clock, not the wake-up).
	r.WakeLateNs = e.body.(*Started).LateNs
	r.StartSkewNs = e.at - r.RTTNs/2 - r.WakeLateNs - g.WindowStart
	r.LateStart = r.StartSkewNs > int64(pt.p.MaxStartSkew)
}

// lateStarts is Run's error after a merged point when some agent started
// its window more than MaxStartSkew late: a *LateStartError naming them.
func (pt *point) lateStarts() error {
	var late []string
	for _, r := range pt.reports {
		if r.LateStart {
			late = append(late, fmt.Sprintf("agent %d started its window %v late", r.Index, time.Duration(r.StartSkewNs)))
		}
	}
	if late == nil {
		return nil
	}
	return &LateStartError{InvalidError{Reason: strings.Join(late, ", ") + fmt.Sprintf(" (more than %s)", pt.p.MaxStartSkew)}}
}

// noteFailure records a failed session's error on its agent's report.
func noteFailure(reports []*Report, e event) error {
	if e.index >= 0 && e.index < len(reports) {
		reports[e.index].Failure = e.err.Error()
	}
	return e.err
}

// take reads an agent's result message into its report.
func (r *Report) take(m *ResultMsg) error {
	if m.Failure != "" {
		r.Failure = m.Failure
		return invalid("agent %d failed: %s", r.Index, m.Failure)
	}
	var res load.Result
	if err := json.Unmarshal(m.Result, &res); err != nil {
		return invalid("agent %d: result: %v", r.Index, err)
	}
	if res.SchemaVersion != load.SchemaVersion {
		return invalid("agent %d: result schema_version %d, want %d", r.Index, res.SchemaVersion, load.SchemaVersion)
	}
	lat, err := load.DecodeHistogram(*m.Latency)
	if err != nil {
		return invalid("agent %d: result.latency: %v", r.Index, err)
	}
	if m.Lag != nil {
		if r.lag, err = load.DecodeHistogram(*m.Lag); err != nil {
			return invalid("agent %d: result.lag: %v", r.Index, err)
		}
	}
	if lat.Count() != res.Summary.Latency.Count {
		return invalid("agent %d: latency histogram holds %d values, its summary %d", r.Index, lat.Count(), res.Summary.Latency.Count)
	}
	r.latency, r.Result = lat, &res
	r.ThroughputPerS = res.Summary.ThroughputPerS
	r.SourceAddrs = res.Generator.SourceAddrs
	r.P99Ns = lat.Latency().P99
	return nil
}
