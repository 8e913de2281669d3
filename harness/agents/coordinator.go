package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/internal/argv"
	"github.com/ceiling-bench/ceiling/internal/atomicfile"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// Plan is one point for the coordinator.
type Plan struct {
	Agents      int      // agents that run it (Active of the N asked for)
	Args        []string // the point's `ceiling load` flags (whole: --connections C, --rate R)
	Connections int
	Rate        float64 // 0: closed loop
	Warmup      time.Duration
	Duration    time.Duration
	Marker      string // created at the common window's start ("" for none)
	JSON        string // the merged load.Result is written here ("" for none)

	// AgentArgs, when set, are extra `ceiling load` flags for agent i of
	// conns connections (the harness's own source addresses per agent).
	AgentArgs func(i, conns int) []string

	Samples      int           // clock samples per agent (default 8)
	ReadyTimeout time.Duration // start of Run to every agent ready (default 60 s)
	MaxStartSkew time.Duration // an agent whose window opened later is late (default 50 ms)
	// ResultTimeout is how long after the window's end every result must
	// be in (default 30 s plus load.Drain).
	ResultTimeout time.Duration
	Lead          time.Duration // barrier to load start, at least (default 200 ms)
	Log           io.Writer
}

func (p *Plan) defaults() {
	if p.Samples <= 0 {
		p.Samples = 8
	}
	if p.ReadyTimeout <= 0 {
		p.ReadyTimeout = 60 * time.Second
	}
	if p.MaxStartSkew <= 0 {
		p.MaxStartSkew = 50 * time.Millisecond
	}
	if p.ResultTimeout <= 0 {
		p.ResultTimeout = 30*time.Second + load.Drain
	}
	if p.Lead <= 0 {
		p.Lead = 200 * time.Millisecond
	}
	if p.Log == nil {
		p.Log = io.Discard
	}
}

// Outcome is what the coordinator made of a point: the merged result and
// every agent's report (also when the point is invalid: what is known).
type Outcome struct {
	Merged *load.Result
	Agents []result.AgentReport
	// reports are the agents' whole reports, histograms included (for
	// this package's tests).
	reports []*Report
	// WindowStart is the planned start of the common window.
	WindowStart time.Time
}

// InvalidError is a point the agents could not measure together: a
// missing, late or failed agent, or a merge that would not be exact.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return "agents: " + e.Reason }

func invalid(format string, a ...any) error { return &InvalidError{Reason: fmt.Sprintf(format, a...)} }

// Coordinator runs one point's agents on a hub of its own: the agents
// are told done after the point (the harness starts them per point).
type Coordinator struct {
	hub  *Hub
	plan Plan
}

// Listen opens the coordinator's port (addr "127.0.0.1:0" for any).
func Listen(addr string, plan Plan) (*Coordinator, error) {
	if plan.Agents < 1 {
		return nil, fmt.Errorf("agents: %d agents", plan.Agents)
	}
	h, err := NewHub(addr, plan.Agents, plan.Log)
	if err != nil {
		return nil, err
	}
	return &Coordinator{hub: h, plan: plan}, nil
}

// Addr is the address agents dial.
func (c *Coordinator) Addr() string { return c.hub.Addr() }

// Run runs the point, then tells the agents done.
func (c *Coordinator) Run(ctx context.Context) (*Outcome, error) {
	defer c.hub.Close()
	return c.hub.Run(ctx, c.plan)
}

// evLost is an event: a session's connection ended before ready.
const evLost = "lost"

// event is one thing an agent's session reported.
type event struct {
	index int
	typ   string // tReady, tStarted, tResult, or "" for an error
	body  any
	at    int64 // coordinator wall ns at arrival
	err   error
}

type session struct {
	c     *conn
	index int
	goCh  chan *Go
}

// SegmentArgs is the point's flags for agent i of n: its --connections
// and --rate, without --measure-marker and --json (the coordinator's).
func SegmentArgs(args []string, conns int, rate float64, n, i int) []string {
	c, r := Segment(conns, rate, n, i)
	out := make([]string, 0, len(args)+4)
	for j := 0; j < len(args); j++ {
		a := args[j]
		name, _, inline, isFlag := argv.Flag(a)
		if !isFlag {
			out = append(out, a)
			continue
		}
		switch name {
		case "connections", "rate", "measure-marker", "json":
			if !inline {
				j++ // its value
			}
			continue
		}
		out = append(out, a)
	}
	out = append(out, "--connections", strconv.Itoa(c))
	if rate > 0 {
		out = append(out, "--rate", strconv.FormatFloat(r, 'g', -1, 64))
	}
	return out
}

// LoopbackSourceAddrs gives each agent source addresses of its own against
// a loopback server, as separate hosts would have: agent i dials from
// 127.0.(i+1).1 and as many more of that /24 as its connections need at
// half the ephemeral port range each (--source-addrs, load/source.go).
// Nil when the point's flags already have --source-addrs (SOURCE_ADDRS),
// or the server is not on loopback (its addresses are not ours to pick).
func LoopbackSourceAddrs(args []string, url string, portRange int) func(i, conns int) []string {
	if slices.Contains(args, "--source-addrs") || !loopbackURL(url) {
		return nil
	}
	return func(i, conns int) []string {
		if i >= 254 {
			return nil // no /24 of its own left: the kernel picks
		}
		n := AddrCount(conns, portRange, 1, 254)
		return []string{"--source-addrs", fmt.Sprintf("127.0.%d.1-127.0.%d.%d", i+1, i+1, n)}
	}
}

// loopbackURL reports whether url's host is an IPv4 loopback address or
// localhost.
func loopbackURL(raw string) bool {
	u, err := neturl.Parse(raw)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Hostname(), "localhost") {
		return true
	}
	a, err := netip.ParseAddr(u.Hostname())
	return err == nil && a.Is4() && a.IsLoopback()
}

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
	now := func() int64 { return time.Now().UnixNano() }
	n := p.Agents
	reports := make([]*Report, n)
	for i := range reports {
		conns, rate := Segment(p.Connections, p.Rate, n, i)
		reports[i] = &Report{AgentReport: result.AgentReport{Index: i, Connections: conns}}
		if p.Rate > 0 {
			reports[i].RateOpsPerS = &rate
		}
	}
	out := &Outcome{}
	listOut := func() {
		out.Agents, out.reports = out.Agents[:0], reports
		for _, r := range reports {
			out.Agents = append(out.Agents, r.AgentReport)
		}
	}
	events := make(chan event, 4*n+16)
	var mu sync.Mutex
	sessions := map[int]*session{}
	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		mu.Lock()
		for _, s := range sessions {
			_ = s.c.c.SetReadDeadline(time.Now()) // unblocks its serve
		}
		mu.Unlock()
		wg.Wait()
		// Every session goes back to the hub, also after a failed point:
		// the agent was told abort and waits for the next point (what it
		// still sends of this one is skipped; a broken one is dropped).
		for i, s := range sessions {
			_ = s.c.c.SetDeadline(time.Time{})
			h.release(i, s.c)
		}
	}()
	abortAll := func(reason string) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range sessions {
			_ = s.c.c.SetWriteDeadline(time.Now().Add(time.Second))
			_ = s.c.send(tAbort, &Abort{Reason: reason})
		}
	}
	fail := func(err error) (*Outcome, error) {
		abortAll(err.Error())
		listOut()
		return out, err
	}

	// Claim: each agent's session as it is (or comes) idle, served in
	// its own goroutine that reports events.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for idx, c := range h.claim(func(i int) bool { return i < n }) {
				s := &session{c: c, index: idx, goCh: make(chan *Go, 1)}
				mu.Lock()
				sessions[idx] = s
				reports[idx].joined = true
				reports[idx].Peer = c.c.RemoteAddr().String()
				mu.Unlock()
				wg.Add(1)
				go func() {
					defer wg.Done()
					h.serve(runCtx, p, s, n, reports, events, now)
				}()
			}
			select {
			case <-h.arrived:
			case <-runCtx.Done():
				return
			}
		}
	}()

	// Phase 1: the barrier.
	readyBy := time.NewTimer(p.ReadyTimeout)
	defer readyBy.Stop()
	ready := 0
	for ready < n {
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-readyBy.C:
			var missing []string
			mu.Lock()
			for _, r := range reports {
				if !r.ready {
					what := "never joined"
					if r.joined {
						what = "joined but was not ready"
					}
					missing = append(missing, fmt.Sprintf("agent %d %s", r.Index, what))
				}
			}
			mu.Unlock()
			return fail(invalid("%s within %s", strings.Join(missing, ", "), p.ReadyTimeout))
		case e := <-events:
			if e.err != nil {
				return fail(noteFailure(reports, e))
			}
			if e.typ == evLost {
				mu.Lock()
				s := sessions[e.index]
				delete(sessions, e.index)
				reports[e.index].joined = false
				mu.Unlock()
				s.c.c.Close()
				h.unbusy(e.index)
				h.logf("agent %d: connection lost before ready (%v); waiting for it to rejoin", e.index, e.body)
				continue
			}
			if e.typ == tReady {
				r := reports[e.index]
				m := e.body.(*Ready)
				r.ready, r.RTTNs, r.ClockOffsetNs = true, m.RTTNs, m.OffsetNs
				if m.Open < r.Connections {
					fmt.Fprintf(p.Log, "coordinator: agent %d opened %d of %d connections\n", r.Index, m.Open, r.Connections)
				}
				ready++
			}
		}
	}

	// Phase 2: one start for all, far enough ahead for the slowest to
	// hear of it.
	var maxRTT int64
	for _, r := range reports {
		maxRTT = max(maxRTT, r.RTTNs)
	}
	lead := max(int64(p.Lead), 4*maxRTT)
	g := &Go{LoadAt: now() + lead}
	g.WindowStart = g.LoadAt + int64(p.Warmup)
	g.WindowEnd = g.WindowStart + int64(p.Duration)
	out.WindowStart = time.Unix(0, g.WindowStart)
	mu.Lock()
	for _, s := range sessions {
		s.goCh <- g
	}
	mu.Unlock()
	fmt.Fprintf(p.Log, "coordinator: %d agents ready; load in %v, window %v after\n", n, time.Duration(lead), p.Warmup)

	// Phase 3: the marker at the window's start, every agent started
	// within MaxStartSkew, every result by the deadline.
	marker := time.NewTimer(time.Until(out.WindowStart))
	defer marker.Stop()
	startedBy := time.NewTimer(time.Until(out.WindowStart) + p.MaxStartSkew + time.Duration(maxRTT) + time.Second)
	defer startedBy.Stop()
	resultsBy := time.NewTimer(time.Until(time.Unix(0, g.WindowEnd)) + p.ResultTimeout)
	defer resultsBy.Stop()
	started, done := 0, 0
	for done < n {
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-marker.C:
			if p.Marker != "" {
				if err := atomicfile.Write(p.Marker, nil); err != nil {
					return fail(fmt.Errorf("marker %s: %w", p.Marker, err))
				}
			}
		case <-startedBy.C:
			if started < n {
				var late []string
				for _, r := range reports {
					if !r.started {
						late = append(late, strconv.Itoa(r.Index))
					}
				}
				return fail(invalid("agent %s did not start its window within %s of the common start", strings.Join(late, ", "), p.MaxStartSkew))
			}
		case <-resultsBy.C:
			var missing []string
			for _, r := range reports {
				if !r.done {
					missing = append(missing, strconv.Itoa(r.Index))
				}
			}
			return fail(invalid("agent %s sent no result within %s of the window's end", strings.Join(missing, ", "), p.ResultTimeout))
		case e := <-events:
			if e.err != nil {
				return fail(noteFailure(reports, e))
			}
			r := reports[e.index]
			switch e.typ {
			case tStarted:
				r.started = true
				started++
				// Where the agent placed its window on the coordinator's
				// clock: its message's arrival less half the round trip
				// and less its own wake-up's lateness (the window's edges
				// are arithmetic on its monotonic clock, not the wake-up).
				r.WakeLateNs = e.body.(*Started).LateNs
				r.StartSkewNs = e.at - r.RTTNs/2 - r.WakeLateNs - g.WindowStart
				if r.StartSkewNs > int64(p.MaxStartSkew) {
					return fail(invalid("agent %d started its window %v late (more than %s)", r.Index, time.Duration(r.StartSkewNs), p.MaxStartSkew))
				}
			case tResult:
				m := e.body.(*ResultMsg)
				if err := r.take(m); err != nil {
					return fail(err)
				}
				if !r.started {
					return fail(invalid("agent %d sent its result without starting its window", r.Index))
				}
				r.done = true
				done++
			}
		}
	}
	merged, err := Merge(reports, p.Connections, p.Rate, int64(p.Duration))
	if err != nil {
		return fail(invalid("%v", err))
	}
	out.Merged = merged
	listOut()

	if p.JSON != "" {
		if err := load.WriteJSONFile(p.JSON, merged); err != nil {
			return out, err
		}
		b, err := json.MarshalIndent(out.Agents, "", "  ")
		if err == nil {
			err = atomicfile.Write(filepath.Join(filepath.Dir(p.JSON), "agents.json"), append(b, '\n'))
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
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

// serve is one agent's part of a point on its joined session: welcome,
// clock samples, ready, then go from Run; started and result are passed
// up. Its errors name the agent.
func (h *Hub) serve(ctx context.Context, p Plan, s *session, n int, reports []*Report, events chan<- event, now func() int64) {
	emit := func(e event) {
		select {
		case events <- e:
		case <-ctx.Done():
		}
	}
	idx := s.index
	who := "agent " + strconv.Itoa(idx)
	failed := func(err error) {
		emit(event{index: idx, err: invalid("%s: %v", who, err)})
	}
	_ = s.c.c.SetDeadline(time.Now().Add(p.ReadyTimeout))
	args := SegmentArgs(p.Args, p.Connections, p.Rate, n, idx)
	if p.AgentArgs != nil {
		args = append(args, p.AgentArgs(idx, reports[idx].Connections)...)
	}
	// A connection lost before ready is not the point's failure yet: the
	// agent may rejoin within the barrier's time (a session that ended
	// between points unnoticed, say).
	lost := func(err error) {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			failed(fmt.Errorf("before ready: %w", err))
			return
		}
		emit(event{index: idx, typ: evLost, err: nil, body: err})
	}
	if err := s.c.send(tWelcome, &Welcome{Agents: n, Args: args, Samples: p.Samples}); err != nil {
		lost(err)
		return
	}
	pinged := false
	for {
		typ, body, err := s.c.recv()
		if err != nil {
			lost(err)
			return
		}
		if !pinged && (typ == tStarted || typ == tResult || typ == tReady) {
			continue // an aborted point's, sent before it read this welcome
		}
		if typ == tReady {
			emit(event{index: idx, typ: tReady, body: body, at: now()})
			break
		}
		if typ == tResult { // a failure before ready (bad flags)
			if m := body.(*ResultMsg); m.Failure != "" {
				emit(event{index: idx, err: invalid("agent %d failed: %s", idx, m.Failure)})
				return
			}
		}
		if typ != tPing {
			failed(fmt.Errorf("type: got %q, want ping or ready", typ))
			return
		}
		pinged = true
		t2 := now()
		if err := s.c.send(tPong, &Pong{Seq: body.(*Ping).Seq, T1: body.(*Ping).T1, T2: t2, T3: now()}); err != nil {
			lost(err)
			return
		}
	}
	_ = s.c.c.SetDeadline(time.Time{})
	var g *Go
	select {
	case g = <-s.goCh:
	case <-ctx.Done():
		return
	}
	if err := s.c.send(tGo, g); err != nil {
		failed(err)
		return
	}
	for {
		typ, body, err := s.c.recv()
		if err != nil {
			if ctx.Err() == nil {
				failed(fmt.Errorf("lost before its result: %w", err))
			}
			return
		}
		switch typ {
		case tStarted:
			emit(event{index: idx, typ: tStarted, body: body, at: now()})
		case tResult:
			emit(event{index: idx, typ: tResult, body: body, at: now()})
			return
		default:
			failed(fmt.Errorf("type: got %q, want started or result", typ))
			return
		}
	}
}

// AddrCount is how many source addresses an agent of conns connections
// gets over a port range of portRange ports: enough that no address
// carries more than half the range (the other half is room for the
// TIME_WAIT sockets of earlier points), at least least and at most most.
func AddrCount(conns, portRange, least, most int) int {
	per := max(portRange/2, 1)
	return min(max(least, (conns+per-1)/per), most)
}
