package refserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ceiling-bench/ceiling/pusher"
)

// bodyPool recycles request body buffers; a busy publisher sends many.
// Buffers that grew past maxPooledBody are dropped instead, so one large
// request does not pin its buffer for the life of the process.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 1 << 20

func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	s.serveREST(w, r, false)
}

func (s *Server) serveBatchEvents(w http.ResponseWriter, r *http.Request) {
	s.serveREST(w, r, true)
}

// serveREST checks, in this order and each before any work the next one
// costs: the app id; the announced body size (Content-Length over
// MaxBodyBytes: 413, nothing read); the signature of the query, which
// covers body_md5, so a forged request is refused (401) before a byte of
// its body is read; room in the in-flight body budget (503 when full);
// then it reads the body (at most MaxBodyBytes: 413 beyond), checks it
// against body_md5 (401), UTF-8, and decodes and validates every event
// before publishing any, so a request is all or nothing. 200 {} means
// every event is queued to every subscriber.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request, batch bool) {
	s.stats.restRequests.Add(1)
	if id := r.PathValue("id"); id != s.cfg.AppID {
		s.restError(w, http.StatusNotFound, fmt.Sprintf("unknown app id %q", id))
		return
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		s.bodyTooLarge(w)
		return
	}
	query := r.URL.Query()
	if err := pusher.VerifyQuery(r.Method, r.URL.Path, query, s.cfg.Key, s.cfg.Secret, time.Now()); err != nil {
		s.restError(w, http.StatusUnauthorized, "401 UNAUTHORIZED: "+err.Error())
		return
	}
	// A body of unannounced length grows its buffer by doubling: up to
	// twice the limit is held while it is read.
	reserve := 2 * s.cfg.MaxBodyBytes
	if r.ContentLength >= 0 {
		reserve = r.ContentLength
	}
	if !s.bodies.take(reserve) {
		s.stats.restBusy.Add(1)
		w.Header().Set("Retry-After", "1")
		s.restError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many request bodies in flight (over %d bytes, --max-inflight-body-bytes); retry", s.cfg.MaxInflightBodyBytes))
		return
	}
	defer s.bodies.give(reserve)
	buf := bodyPool.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodyPool.Put(buf)
		}
	}()
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.bodyTooLarge(w)
			return
		}
		s.restError(w, http.StatusBadRequest, fmt.Sprintf("reading body: %v", err))
		return
	}
	body := buf.Bytes()
	if err := pusher.VerifyBody(query, body); err != nil {
		s.restError(w, http.StatusUnauthorized, "401 UNAUTHORIZED: "+err.Error())
		return
	}

	if !utf8.Valid(body) {
		s.restError(w, http.StatusBadRequest, "body is not valid UTF-8")
		return
	}
	var events []rawEvent
	if batch {
		events, err = decodeBatch(body, s.cfg.MaxBatch)
		if errors.Is(err, errTooMany) {
			s.restError(w, http.StatusBadRequest, fmt.Sprintf(`"batch": more than the limit of %d events (--max-batch)`, s.cfg.MaxBatch))
			return
		}
		if err == nil && len(events) == 0 {
			err = errors.New(`"batch": no events`)
		}
	} else {
		var ev rawEvent
		ev, err = decodeEvent(body)
		events = []rawEvent{ev}
	}
	if err != nil {
		s.restError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	for i := range events {
		if err := checkEvent(&events[i]); err != nil {
			where := ""
			if batch {
				where = fmt.Sprintf("batch[%d].", i)
			}
			s.restError(w, http.StatusBadRequest, where+err.Error())
			return
		}
	}
	s.publish(events)
	s.stats.eventsPublished.Add(uint64(len(events)))
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte("{}"))
}

// checkEvent names the first field of ev that is wrong.
func checkEvent(ev *rawEvent) error {
	if ev.name == "" {
		return errors.New(`"name": missing`)
	}
	if len(ev.name) > 200 {
		return errors.New(`"name": longer than 200 characters`)
	}
	targets := ev.targets()
	if len(targets) == 0 {
		return errors.New(`"channel" or "channels": missing`)
	}
	if len(targets) > 100 {
		return fmt.Errorf(`"channels": %d channels, more than 100`, len(targets))
	}
	for _, ch := range targets {
		if err := checkChannel(ch); err != nil {
			return fmt.Errorf(`"channels": %w`, err)
		}
	}
	return nil
}

// publish delivers events in order. Each event is encoded once per
// channel into a complete frame shared by every subscriber. Frames are
// grouped by channel so each subscriber takes a whole batch in one queue
// operation, and its writer sends it in one writev: order is kept within a
// channel; a subscriber of several channels gets a batch channel by
// channel. Events with socket_id go one by one (the exclusion differs).
func (s *Server) publish(events []rawEvent) {
	s.deliver(events)
	if s.cluster != nil {
		s.relay(events)
	}
}

// deliver queues events to this node's subscribers (publish's local part;
// also what another node relayed, cluster.go).
func (s *Server) deliver(events []rawEvent) {
	var groups map[string][][]byte
	var order []string
	for i := range events {
		ev := &events[i]
		for _, ch := range ev.targets() {
			if !s.hub.has(ch) {
				continue
			}
			frame := encodeEvent(ev, ch)
			if ev.socketID != "" || len(events) == 1 {
				s.hub.fanout(ch, [][]byte{frame}, ev.socketID)
				continue
			}
			if groups == nil {
				groups = make(map[string][][]byte)
			}
			if _, ok := groups[ch]; !ok {
				order = append(order, ch)
			}
			groups[ch] = append(groups[ch], frame)
		}
	}
	for _, ch := range order {
		frames := groups[ch]
		s.hub.fanout(ch, frames, "")
	}
}

// encodeEvent builds the frame subscribers of ch receive for ev:
// {"event":NAME,"channel":CH,"data":DATA} with the name and data literals
// copied as sent (they are JSON strings already).
func encodeEvent(ev *rawEvent, ch string) []byte {
	data := ev.dataLit
	if data == nil {
		data = []byte(`""`)
	}
	b := frameBuf(len(`{"event":,"channel":"","data":}`) + len(ev.nameLit) + len(ch) + len(data))
	b = append(b, `{"event":`...)
	b = append(b, ev.nameLit...)
	b = append(b, `,"channel":`...)
	b = pusher.AppendString(b, ch)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	b = append(b, '}')
	return sealFrame(b, opText)
}

func (s *Server) bodyTooLarge(w http.ResponseWriter) {
	s.restError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes (--max-body-bytes)", s.cfg.MaxBodyBytes))
}

// restError answers with status and a one-line text message.
func (s *Server) restError(w http.ResponseWriter, status int, msg string) {
	s.stats.restErrors.Add(1)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}
