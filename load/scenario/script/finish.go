package script

import (
	"fmt"
	"strings"

	"github.com/ceiling-bench/ceiling/load"
)

// The end of a run, after the load phase (engine.go): Finish closes the
// connections and writes summary.kinds and the summary's mode, and
// NothingArrived says what was sent when nothing came back.

// Finish closes every connection and writes summary.kinds.
func (s *scenario) Finish(res *load.Result, merged *load.Recorder) {
	for _, c := range s.conns {
		if c.ws != nil {
			c.ws.Close()
		}
	}
	out := map[string]*KindSummary{}
	for k, kd := range s.spec.kinds {
		ks := &KindSummary{Type: kd.typ, ErrorsByReason: map[string]int64{}}
		var hist *load.Histogram
		var sum kindStats
		for _, sh := range s.shards {
			sh.lock()
			st := &sh.kinds[k]
			sum.sent += st.sent
			sum.received += st.received
			sum.expected += st.expected
			sum.gaps += st.gaps
			sum.rateLimited += st.rateLimited
			sum.own += st.own
			sum.late += st.late
			for r, n := range st.errs {
				ks.ErrorsByReason[r] += n
			}
			if st.hist != nil {
				if hist == nil {
					hist = load.NewHistogram()
				}
				hist.Merge(st.hist)
			}
			sh.unlock()
		}
		ks.Sent, ks.Received, ks.Gaps, ks.RateLimited, ks.Own, ks.Late = sum.sent, sum.received, sum.gaps, sum.rateLimited, sum.own, sum.late
		if kd.hasExp {
			e := sum.expected
			ks.Expected = &e
			if e > 0 {
				pct := 100 * float64(min(sum.received, e)) / float64(e)
				ks.DeliveredPct = &pct
			}
		}
		if hist != nil {
			ks.Latency = hist.Latency()
		}
		out[kd.name] = ks
	}
	for _, sh := range s.shards {
		s.unmatched += sh.unmatched
	}
	s.kinds = out
	if res != nil {
		s.mode(res)
		// Both marshal: a map of plain structs, an integer.
		res.Summary.SetBlock(BlockKinds, out)
		res.Summary.SetBlock(BlockUnmatched, s.unmatched)
	}
}

// Kinds is the summary.kinds block Finish computed.
func (s *scenario) Kinds() map[string]*KindSummary { return s.kinds }

// Unmatched counts messages received in the window that matched no
// receive kind, answer, rate_limited or errors entry.
func (s *scenario) Unmatched() int64 { return s.unmatched }

// KindSummary is summary.kinds.<kind>.
type KindSummary struct {
	// Type is send (a send no receive kind of the same name answers),
	// relay, ack or ignore.
	Type string `json:"type"`
	// Sent counts sends in the window: of the send of this name, or, for
	// a relay or ack of another name, of the send it answers.
	Sent int64 `json:"sent"`
	// Received counts relays and acks of sends in the window that arrived
	// before the drain ended (ignore: messages received in the window).
	Received int64 `json:"received"`
	// Expected is relay: sends x the other members of the sender's room;
	// ack: sends. Null for send, ignore and coalesced relays.
	Expected     *int64   `json:"expected"`
	DeliveredPct *float64 `json:"delivered_pct"`
	// Latency: relay, now - the sender's timestamp, at the other
	// clients; ack, back at the sender; an HTTP send-only kind, the
	// request's round trip.
	Latency        load.Latency     `json:"latency_ns"`
	Gaps           int64            `json:"gaps"`
	RateLimited    int64            `json:"rate_limited"`
	Own            int64            `json:"own"`  // relays of this client's own sends (sender field)
	Late           int64            `json:"late"` // arrived after the drain
	ErrorsByReason map[string]int64 `json:"errors_by_reason"`
}

// NothingArrived says what was sent when nothing came back.
func (s *scenario) NothingArrived(res *load.Result, why string) error {
	var parts []string
	for _, kd := range s.spec.kinds {
		if k := s.kinds[kd.name]; k != nil && kd.typ == "send" || k != nil && k.Expected != nil {
			p := fmt.Sprintf("%s: %d sent", kd.name, k.Sent)
			if k.Expected != nil {
				p += fmt.Sprintf(", 0 of %d expected arrived", *k.Expected)
			}
			parts = append(parts, p)
		}
	}
	return fmt.Errorf("%w: %s%s", load.ErrNothingArrived, strings.Join(parts, "; "), why)
}

// mode corrects the common summary's mode: --rate is 0 for a scenario
// file, but its sends are paced by their own rates. With any open-loop
// send the run is "open" and requested_ops_per_s is the sum of the rates
// of the connections that opened.
func (s *scenario) mode(res *load.Result) {
	var requested float64
	for _, c := range s.conns {
		if c.ws == nil && c.role.WebSocket {
			continue
		}
		for _, sd := range c.role.Sends {
			requested += sd.Rate
		}
	}
	if requested > 0 {
		res.Summary.Mode = "open"
		res.Summary.RequestedOpsPerS = &requested
	}
}
