package agents

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// testToken is the token of this package's tests.
var testToken = NewToken()

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rawPeer is a hand-driven connection to a hub, as an attacker has.
type rawPeer struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawPeer {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	return &rawPeer{t: t, c: c, r: bufio.NewReader(c)}
}

func (p *rawPeer) send(typ string, body any) {
	p.t.Helper()
	line, err := Encode(typ, body)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.c.Write(line); err != nil {
		p.t.Fatal(err)
	}
}

// next is the next message, or the read's error.
func (p *rawPeer) next() (string, any, error) {
	line, err := p.r.ReadBytes('\n')
	if err != nil {
		return "", nil, err
	}
	return Decode(line)
}

// hello sends the hello of agent index and reads the hub's challenge:
// the nonce sent and the challenge, for a proof.
func (p *rawPeer) hello(t *testing.T, index int) (string, *Challenge) {
	t.Helper()
	na := newNonce()
	p.send(tHello, &Hello{Index: index, Nonce: na})
	typ, body, err := p.next()
	if err != nil || typ != tChallenge {
		t.Fatalf("first reply: %s %v, want a challenge", typ, err)
	}
	return na, body.(*Challenge)
}

// rest is everything the hub still sends until it closes the connection.
func (p *rawPeer) rest() string {
	b, _ := io.ReadAll(p.r)
	return string(b)
}
