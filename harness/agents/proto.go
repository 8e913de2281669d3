package agents

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"

	"github.com/ceiling-bench/ceiling/load"
)

// Version is the protocol's version: every envelope carries it, and a
// peer speaking another is refused by name.
const Version = 2

// sha256Bytes is an HMAC-SHA256's size.
const sha256Bytes = 32

// maxLine bounds one message (a result with its histograms is a few KB).
const maxLine = 16 << 20

// The message types, in the order of a session (doc.go).
const (
	tHello     = "hello"
	tChallenge = "challenge"
	tAuth      = "auth"
	tWelcome   = "welcome"
	tPing      = "ping"
	tPong      = "pong"
	tReady     = "ready"
	tGo        = "go"
	tStarted   = "started"
	tResult    = "result"
	tAbort     = "abort"
	tDone      = "done"
)

type envelope struct {
	V    int             `json:"v"`
	Type string          `json:"type"`
	Body json.RawMessage `json:"body"`
}

// Hello is the agent's first message: which segment it runs, and its
// nonce for the handshake (32 random bytes, hex).
type Hello struct {
	Index int    `json:"index"`
	Nonce string `json:"nonce"`
}

// Challenge is the coordinator's answer to a hello: its own nonce, and
// its proof that it holds the token (auth.go).
type Challenge struct {
	Nonce string `json:"nonce"`
	Proof string `json:"proof"`
}

// AuthMsg is the agent's proof that it holds the token.
type AuthMsg struct {
	Proof string `json:"proof"`
}

// Welcome gives the agent its segment: the point's `ceiling load` flags
// with its own --connections (and --rate), and how many clock samples to
// take.
type Welcome struct {
	Agents  int      `json:"agents"`
	Args    []string `json:"args"`
	Samples int      `json:"samples"`
}

// Ping and Pong are one clock sample: t1 the agent's wall time at
// sending, t2 and t3 the coordinator's at receiving and replying (unix ns).
type Ping struct {
	Seq int   `json:"seq"`
	T1  int64 `json:"t1"`
}

type Pong struct {
	Seq int   `json:"seq"`
	T1  int64 `json:"t1"`
	T2  int64 `json:"t2"`
	T3  int64 `json:"t3"`
}

// Ready: the agent's connections are open (Open of them) and it waits at
// the barrier; RTT and Offset are its best clock sample's.
type Ready struct {
	Open     int   `json:"open"`
	RTTNs    int64 `json:"rtt_ns"`
	OffsetNs int64 `json:"offset_ns"`
}

// Go is the common start, on the coordinator's wall clock (unix ns): load
// from LoadAt, measure from WindowStart to WindowEnd.
type Go struct {
	LoadAt      int64 `json:"load_at"`
	WindowStart int64 `json:"window_start"`
	WindowEnd   int64 `json:"window_end"`
}

// Started is sent as the agent's window opens; LateNs is how late its own
// wake-up was against its monotonic target (its scheduling, not its clock).
type Started struct {
	LateNs int64 `json:"late_ns"`
}

// ResultMsg is the agent's measurement: its load.Result (as `ceiling load
// --json` writes it), and its histograms in HdrHistogram's encoding. Lag
// is null in a closed loop. Failure is set when it could not measure.
type ResultMsg struct {
	Result  json.RawMessage        `json:"result"`
	Latency *load.EncodedHistogram `json:"latency"`
	Lag     *load.EncodedHistogram `json:"lag"`
	Failure string                 `json:"failure"`
}

// Abort ends the session: the point is invalid for Reason.
type Abort struct {
	Reason string `json:"reason"`
}

// Done ends the agent's whole session: the sweep is over, the agent
// exits. Between points the agent waits for the next welcome or this.
type Done struct{}

// validate checks a decoded body's values; errors name the field as
// "type.field".
func validate(typ string, body any) error {
	bad := func(field string, format string, a ...any) error {
		return fmt.Errorf("%s.%s: %s", typ, field, fmt.Sprintf(format, a...))
	}
	switch m := body.(type) {
	case *Hello:
		if m.Index < 0 {
			return bad("index", "%d is negative", m.Index)
		}
		if !validHex(m.Nonce, nonceBytes) {
			return bad("nonce", "want %d bytes in lower-case hex", nonceBytes)
		}
	case *Challenge:
		if !validHex(m.Nonce, nonceBytes) {
			return bad("nonce", "want %d bytes in lower-case hex", nonceBytes)
		}
		if !validHex(m.Proof, sha256Bytes) {
			return bad("proof", "want %d bytes in lower-case hex", sha256Bytes)
		}
	case *AuthMsg:
		if !validHex(m.Proof, sha256Bytes) {
			return bad("proof", "want %d bytes in lower-case hex", sha256Bytes)
		}
	case *Welcome:
		if m.Agents < 1 {
			return bad("agents", "%d, want at least 1", m.Agents)
		}
		if len(m.Args) == 0 {
			return bad("args", "empty")
		}
		if m.Samples < 1 || m.Samples > 1000 {
			return bad("samples", "%d, want 1 to 1000", m.Samples)
		}
	case *Ping:
		if m.Seq < 0 {
			return bad("seq", "%d is negative", m.Seq)
		}
	case *Pong:
		if m.T3 < m.T2 {
			return bad("t3", "%d before t2 %d", m.T3, m.T2)
		}
	case *Ready:
		if m.Open < 0 {
			return bad("open", "%d is negative", m.Open)
		}
		if m.RTTNs < 0 {
			return bad("rtt_ns", "%d is negative", m.RTTNs)
		}
	case *Go:
		if m.WindowStart < m.LoadAt {
			return bad("window_start", "before load_at")
		}
		if m.WindowEnd <= m.WindowStart {
			return bad("window_end", "not after window_start")
		}
	case *Started:
		if m.LateNs < 0 || m.LateNs > math.MaxInt64/2 {
			return bad("late_ns", "%d out of range", m.LateNs)
		}
	case *ResultMsg:
		if m.Failure == "" {
			if len(m.Result) == 0 || string(m.Result) == "null" {
				return bad("result", "missing")
			}
			if m.Latency == nil {
				return bad("latency", "missing")
			}
		}
	case *Abort:
		if m.Reason == "" {
			return bad("reason", "empty")
		}
	}
	return nil
}

// newBody is the body type of a message type.
func newBody(typ string) (any, bool) {
	switch typ {
	case tHello:
		return &Hello{}, true
	case tChallenge:
		return &Challenge{}, true
	case tAuth:
		return &AuthMsg{}, true
	case tWelcome:
		return &Welcome{}, true
	case tPing:
		return &Ping{}, true
	case tPong:
		return &Pong{}, true
	case tReady:
		return &Ready{}, true
	case tGo:
		return &Go{}, true
	case tStarted:
		return &Started{}, true
	case tResult:
		return &ResultMsg{}, true
	case tAbort:
		return &Abort{}, true
	case tDone:
		return &Done{}, true
	}
	return nil, false
}

// Decode reads one message line strictly: it returns the type and its
// validated body (a pointer to one of the message structs).
func Decode(line []byte) (string, any, error) {
	var env envelope
	if err := strictUnmarshal(line, &env); err != nil {
		return "", nil, fmt.Errorf("envelope: %w", err)
	}
	if env.V != Version {
		return "", nil, fmt.Errorf("v: %d, want protocol version %d", env.V, Version)
	}
	body, ok := newBody(env.Type)
	if !ok {
		return "", nil, fmt.Errorf("type: %q is no message type", env.Type)
	}
	if len(env.Body) == 0 {
		return "", nil, fmt.Errorf("%s: no body", env.Type)
	}
	if err := strictUnmarshal(env.Body, body); err != nil {
		return "", nil, fmt.Errorf("%s: %w", env.Type, err)
	}
	if err := validate(env.Type, body); err != nil {
		return "", nil, err
	}
	return env.Type, body, nil
}

// strictUnmarshal is json.Unmarshal refusing unknown fields and trailing
// data; the error names the field.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s: want %s, got %s", te.Field, te.Type, te.Value)
		}
		return err
	}
	if dec.More() {
		return errors.New("data after the object")
	}
	return nil
}

// Encode is one message line.
func Encode(typ string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	line, err := json.Marshal(envelope{V: Version, Type: typ, Body: b})
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// conn is one session's connection: whole lines in, whole lines out
// (writes from several goroutines are serialised).
type conn struct {
	c     net.Conn
	r     *bufio.Reader
	mu    sync.Mutex
	limit int // bytes a message may have (0: maxLine); recv's goroutine only
}

func newConn(c net.Conn) *conn { return &conn{c: c, r: bufio.NewReaderSize(c, 4<<10)} }

func (c *conn) send(typ string, body any) error {
	line, err := Encode(typ, body)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.c.Write(line)
	return err
}

// recv reads the next message.
func (c *conn) recv() (string, any, error) {
	var line []byte
	for {
		part, err := c.r.ReadSlice('\n')
		line = append(line, part...)
		limit := c.limit
		if limit <= 0 {
			limit = maxLine
		}
		if len(line) > limit {
			return "", nil, fmt.Errorf("message longer than %d bytes", limit)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return "", nil, err
		}
		break
	}
	return Decode(line)
}

// expect reads the next message and requires its type (an abort is
// returned as an *AbortError).
func (c *conn) expect(typ string) (any, error) {
	got, body, err := c.recv()
	if err != nil {
		return nil, err
	}
	if got == tAbort && typ != tAbort {
		return nil, &AbortError{Reason: body.(*Abort).Reason}
	}
	if got != typ {
		return nil, fmt.Errorf("type: got %q, want %q", got, typ)
	}
	return body, nil
}

// AbortError is the coordinator's abort as the agent sees it.
type AbortError struct{ Reason string }

func (e *AbortError) Error() string { return "coordinator aborted the point: " + e.Reason }
