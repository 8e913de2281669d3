package nats

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ceiling-bench/ceiling/load"
)

// Finish checks the acks against the stream, writes summary.nats and
// closes every connection.
func (d *driver) Finish(res *load.Result, m *load.Recorder) {
	d.compact() // a run that failed before Load has workers never connected
	s := &Summary{Mode: d.p.Mode, Stream: d.p.Stream, Keys: d.p.Keys, Prepopulated: d.prepopulated, SequenceCheck: "not checked"}
	ackLat, fetchLat := load.NewHistogram(), load.NewHistogram()
	var maxAck uint64
	for _, w := range d.workers {
		s.Published += w.published
		s.Acked += w.acked
		s.AckedTotal += w.ackedTotal
		maxAck = max(maxAck, w.maxAck)
		s.Fetches += w.fetches
		s.Fetched += w.fetched
		s.Rewinds += w.rewinds
		s.Redelivered += w.redelivered
		s.LostInReconnect += w.lost
		s.Disconnects += w.disconnects.Load()
		s.Reconnects += w.reconnects.Load()
		ackLat.Merge(w.ackLat)
		fetchLat.Merge(w.fetchLat)
	}
	if d.p.Mode != Fetch {
		l := ackLat.Latency()
		s.AckLatency = &l
	}
	if d.p.Mode == Fetch || d.p.Mode == Mixed {
		l := fetchLat.Latency()
		s.FetchLatency = &l
	}
	if d.p.Mode == Stream {
		s.Delivered = m.Messages
		s.Window = d.p.Window
	}
	if d.adminJS != nil {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		if st, err := d.adminJS.Stream(ctx, d.p.Stream); err == nil {
			if info, err := st.Info(ctx); err == nil {
				s.StreamLastSeq = info.State.LastSeq
				s.StreamMessages = info.State.Msgs
			}
		}
		cancel()
	}
	if d.p.Mode != Fetch && s.StreamLastSeq > 0 {
		total := uint64(s.AckedTotal + d.prepopulated)
		switch {
		case m.Errors["ack_timeout"] > 0 || publishErrors(m) > 0 || s.LostInReconnect > 0:
			s.SequenceCheck = "not checked: some publishes failed or timed out, their records may be stored unacked"
		case total != s.StreamLastSeq || max(maxAck, uint64(d.prepopulated)) != s.StreamLastSeq:
			s.SequenceCheck = fmt.Sprintf("gap: %d acks (seed included) but the stream's last sequence is %d", total, s.StreamLastSeq)
			res.Summary.Errors++
			res.Summary.ErrorsByReason["ack_gap"]++
		default:
			s.SequenceCheck = "continuous"
		}
	}
	for _, r := range []string{"fetch_gap", "stream_gap", "ack_gap"} {
		s.Gaps += res.Summary.ErrorsByReason[r]
	}
	for _, r := range []string{"fetch_out_of_order", "stream_out_of_order", "ack_out_of_order"} {
		s.OutOfOrder += res.Summary.ErrorsByReason[r]
	}
	// dropped and reconnects are stream's: null elsewhere, where a lost
	// connection is an error by its reason.
	if d.p.Mode == Stream {
		dr, rc := s.Disconnects, s.Reconnects
		res.Summary.Dropped, res.Summary.Reconnects = &dr, &rc
	} else {
		res.Summary.Dropped, res.Summary.Reconnects = nil, nil
	}
	urls := d.urls()
	for _, u := range urls {
		s.Servers = append(s.Servers, ServerCount{URL: u})
	}
	for _, w := range d.workers {
		sc := &s.Servers[w.server]
		sc.Connections++
		sc.Messages += w.rec.Messages
		if w.sub != nil {
			sc.Messages += w.sub.Messages
		}
	}
	_ = res.Summary.SetBlock(BlockKey, s)
	d.summary = s
	for _, w := range d.workers {
		w.nc.Close()
	}
	if d.admin != nil {
		d.admin.Close()
	}
}

func publishErrors(m *load.Recorder) int64 {
	var n int64
	for k, v := range m.Errors {
		if len(k) > 8 && k[:8] == "publish_" {
			n += v
		}
	}
	return n
}

// reason names a client error by kind, for errors_by_reason.
func reason(err error) string {
	var api *jetstream.APIError
	switch {
	case errors.As(err, &api):
		// The status and nats-server's own code: api_429_10167 is
		// JSStreamTooManyRequests, the server shedding publishes.
		return "api_" + strconv.Itoa(api.Code) + "_" + strconv.Itoa(int(api.ErrorCode))
	case errors.Is(err, natsgo.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, natsgo.ErrConnectionClosed), errors.Is(err, jetstream.ErrConnectionClosed):
		return "closed"
	case errors.Is(err, natsgo.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse):
		return "no_responders"
	case errors.Is(err, jetstream.ErrTooManyStalledMsgs):
		return "stalled"
	case errors.Is(err, natsgo.ErrDisconnected), errors.Is(err, natsgo.ErrConnectionReconnecting):
		return "disconnected"
	}
	return load.Reason(err)
}
