package agents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// serve is one agent's part of a point on its joined session: welcome,
// clock samples, ready, then go from Run; started and result are passed
// up. Its errors name the agent.
func (h *Hub) serve(ctx context.Context, p Plan, s *session, n int, reports []*Report, events chan<- event, now func() int64) {
	sv := &serving{ctx: ctx, s: s, events: events, now: now, who: "agent " + strconv.Itoa(s.index)}
	_ = s.c.c.SetDeadline(time.Now().Add(p.ReadyTimeout))
	args := SegmentArgs(p.Args, p.Connections, p.Rate, n, s.index)
	if p.AgentArgs != nil {
		args = append(args, p.AgentArgs(s.index, reports[s.index].Connections)...)
	}
	if h.beforeWelcome != nil {
		h.beforeWelcome(ctx, s.index)
	}
	if !sv.handshake(&Welcome{Agents: n, Args: args, Samples: p.Samples}) {
		return
	}
	_ = s.c.c.SetDeadline(time.Time{})
	sv.relay()
}

// serving is one session's serve: what it needs to report up.
type serving struct {
	ctx    context.Context
	s      *session
	events chan<- event
	now    func() int64
	who    string
}

func (sv *serving) emit(e event) {
	select {
	case sv.events <- e:
	case <-sv.ctx.Done():
	}
}

func (sv *serving) failed(err error) {
	sv.emit(event{index: sv.s.index, err: invalid("%s: %v", sv.who, err)})
}

// lost reports a connection lost before ready. It is not the point's
// failure yet: the agent may rejoin within the barrier's time (a session
// that ended between points unnoticed, say).
func (sv *serving) lost(err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		sv.failed(fmt.Errorf("before ready: %w", err))
		return
	}
	sv.emit(event{index: sv.s.index, typ: evLost, err: nil, body: err})
}

// handshake sends the welcome, answers the agent's clock samples and
// reports its ready; false when the session failed or was lost first.
func (sv *serving) handshake(w *Welcome) bool {
	c, idx := sv.s.c, sv.s.index
	sent, err := sv.s.welcome(w)
	if err != nil {
		sv.lost(err)
		return false
	}
	if !sent {
		return false // the point failed first: this agent never hears of it
	}
	pinged := false
	for {
		typ, body, err := c.recv()
		if err != nil {
			sv.lost(err)
			return false
		}
		if !pinged && (typ == tStarted || typ == tResult || typ == tReady) {
			continue // an aborted point's, sent before it read this welcome
		}
		if typ == tReady {
			sv.emit(event{index: idx, typ: tReady, body: body, at: sv.now()})
			return true
		}
		if typ == tResult { // a failure before ready (bad flags)
			if m := body.(*ResultMsg); m.Failure != "" {
				sv.emit(event{index: idx, err: invalid("agent %d failed: %s", idx, m.Failure)})
				return false
			}
		}
		if typ != tPing {
			sv.failed(fmt.Errorf("type: got %q, want ping or ready", typ))
			return false
		}
		pinged = true
		t2 := sv.now()
		if err := c.send(tPong, &Pong{Seq: body.(*Ping).Seq, T1: body.(*Ping).T1, T2: t2, T3: sv.now()}); err != nil {
			sv.lost(err)
			return false
		}
	}
}

// relay sends the common start once Run gives it, then passes the
// agent's started and result up.
func (sv *serving) relay() {
	c, idx := sv.s.c, sv.s.index
	var g *Go
	select {
	case g = <-sv.s.goCh:
	case <-sv.ctx.Done():
		return
	}
	if err := c.send(tGo, g); err != nil {
		sv.failed(err)
		return
	}
	for {
		typ, body, err := c.recv()
		if err != nil {
			if sv.ctx.Err() == nil {
				sv.failed(fmt.Errorf("lost before its result: %w", err))
			}
			return
		}
		switch typ {
		case tStarted:
			sv.emit(event{index: idx, typ: tStarted, body: body, at: sv.now()})
		case tResult:
			sv.emit(event{index: idx, typ: tResult, body: body, at: sv.now()})
			return
		default:
			sv.failed(fmt.Errorf("type: got %q, want started or result", typ))
			return
		}
	}
}
