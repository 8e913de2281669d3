package pusherclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
)

// Client publishes events through the Pusher REST API. Safe for concurrent
// use.
type Client struct {
	base                  *url.URL
	appID, key, secret    string
	hc                    *http.Client
	bufs                  sync.Pool // *[]byte
	now                   func() time.Time
	eventsPath, batchPath string
}

// New returns a Client for the app at baseURL (http://host:port, or the
// ws:// URL subscribers use). A nil httpClient gets a default one; see the
// package comment. An unparsable baseURL is reported by the first call.
func New(baseURL, appID, key, secret string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{Transport: &http.Transport{
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 1024,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	c := &Client{appID: appID, key: key, secret: secret, hc: httpClient, now: time.Now}
	if u, err := url.Parse(baseURL); err == nil {
		switch u.Scheme {
		case "ws":
			u.Scheme = "http"
		case "wss":
			u.Scheme = "https"
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawQuery, u.Fragment = "", ""
		c.base = u
	}
	prefix := ""
	if c.base != nil {
		prefix = c.base.Path
	}
	c.eventsPath = prefix + pusher.EventsPath(appID)
	c.batchPath = prefix + pusher.BatchEventsPath(appID)
	return c
}

// HTTPError is a non-2xx answer from the REST API.
type HTTPError struct {
	Status int
	Body   string // first 4 KiB of the response body
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("pusher REST: HTTP %d: %s", e.Status, strings.TrimSpace(e.Body))
}

// BodyError is a 2xx answer whose body nevertheless says the request
// failed: a JSON object with a numeric "code" of 400 or more, or a
// non-empty "error" (as {"code":401,"message":"invalid signature"} from a
// server that reports refusals in the body). The event was not published.
type BodyError struct {
	Status int    // the HTTP status, 2xx
	Code   int    // the body's "code"; 0 when only "error" was given
	Body   string // the body, up to 4 KiB
}

func (e *BodyError) Error() string {
	return fmt.Sprintf("pusher REST: HTTP %d with an error in the body: %s", e.Status, strings.TrimSpace(e.Body))
}

// bodyError inspects a 2xx body: nil for success ({} and anything without
// an error), a *BodyError otherwise. The common {} costs no decoding. The
// top-level keys are read in order, so a body cut at 4 KiB still counts
// when "code" or "error" came before the cut.
func bodyError(status int, body []byte) error {
	b := bytes.TrimSpace(body)
	if len(b) < 2 || b[0] != '{' || string(b) == "{}" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return nil
	}
	code, hasError := 0, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		switch key {
		case "code":
			var c float64
			if json.Unmarshal(raw, &c) == nil && c >= 400 {
				code = int(c)
			}
		case "error":
			s := strings.TrimSpace(string(raw))
			hasError = s != "null" && s != `""` && s != "false" && s != "{}" && s != "[]"
		}
	}
	if code == 0 && !hasError {
		return nil
	}
	return &BodyError{Status: status, Code: code, Body: string(body)}
}

// Trigger publishes one event with POST /apps/{id}/events.
func (c *Client) Trigger(ctx context.Context, ev pusher.Event) error {
	b := c.getBuf()
	*b = appendEvent((*b)[:0], &ev)
	return c.post(ctx, c.eventsPath, b)
}

// TriggerBatch publishes events in one POST /apps/{id}/batch_events.
func (c *Client) TriggerBatch(ctx context.Context, events []pusher.Event) error {
	b := c.getBuf()
	buf := append((*b)[:0], `{"batch":[`...)
	for i := range events {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendEvent(buf, &events[i])
	}
	*b = append(buf, "]}"...)
	return c.post(ctx, c.batchPath, b)
}

func (c *Client) getBuf() *[]byte {
	if b, ok := c.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4096)
	return &b
}

func (c *Client) post(ctx context.Context, path string, buf *[]byte) error {
	if c.base == nil {
		c.bufs.Put(buf)
		return fmt.Errorf("pusher REST: base URL does not parse")
	}
	// Two references: this call, and the request body the transport may
	// close after Do returns (net/http allows that). A GetBody retry takes
	// a third. The buffer is reused once all are released.
	sb := &sharedBody{pool: &c.bufs, buf: buf}
	sb.refs.Store(2)
	defer sb.release()

	q := pusher.Sign(http.MethodPost, path, nil, c.key, c.secret, c.now().Unix(), *buf)
	u := *c.base
	u.Path = path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), sb.reader())
	if err != nil {
		sb.release() // the body was never handed over
		return fmt.Errorf("pusher REST: %w", err)
	}
	req.ContentLength = int64(len(*buf))
	req.GetBody = func() (io.ReadCloser, error) { sb.refs.Add(1); return sb.reader(), nil }
	req.Header.Set("Content-Type", "application/json")

	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("pusher REST: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		// Some servers answer a refused request (bad signature, unknown
		// app) with 200 and the error in the body: read enough of it to
		// tell, then drain the rest so the connection is reused.
		var small [512]byte
		n, err := io.ReadFull(resp.Body, small[:])
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return fmt.Errorf("pusher REST: POST %s: reading response: %w", path, err)
		}
		head := small[:n]
		if n == len(small) {
			more, err := io.ReadAll(io.LimitReader(resp.Body, 4096-int64(n)))
			if err != nil {
				return fmt.Errorf("pusher REST: POST %s: reading response: %w", path, err)
			}
			head = append(head, more...)
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				return fmt.Errorf("pusher REST: POST %s: reading response: %w", path, err)
			}
		}
		if be := bodyError(resp.StatusCode, head); be != nil {
			return be
		}
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return &HTTPError{Status: resp.StatusCode, Body: string(body)}
}

// sharedBody hands out readers over one pooled buffer and puts the buffer
// back when the last reference is released.
type sharedBody struct {
	pool *sync.Pool
	buf  *[]byte
	refs atomic.Int32
}

func (s *sharedBody) release() {
	if s.refs.Add(-1) == 0 {
		s.pool.Put(s.buf)
	}
}

func (s *sharedBody) reader() io.ReadCloser { return &bodyReader{s: s, b: *s.buf} }

type bodyReader struct {
	s      *sharedBody
	b      []byte
	closed atomic.Bool
}

func (r *bodyReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func (r *bodyReader) Close() error {
	if r.closed.CompareAndSwap(false, true) {
		r.s.release()
	}
	return nil
}

// appendEvent writes ev as encoding/json would (omitempty honoured).
func appendEvent(dst []byte, ev *pusher.Event) []byte {
	dst = append(dst, `{"name":`...)
	dst = pusher.AppendString(dst, ev.Name)
	if ev.Channel != "" {
		dst = append(dst, `,"channel":`...)
		dst = pusher.AppendString(dst, ev.Channel)
	}
	if len(ev.Channels) > 0 {
		dst = append(dst, `,"channels":[`...)
		for i, ch := range ev.Channels {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = pusher.AppendString(dst, ch)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"data":`...)
	dst = pusher.AppendString(dst, ev.Data)
	if ev.SocketID != "" {
		dst = append(dst, `,"socket_id":`...)
		dst = pusher.AppendString(dst, ev.SocketID)
	}
	return append(dst, '}')
}
