package wsconn

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// loopbackAddrs are 127.0.0.1..127.0.0.n.
func loopbackAddrs(n int) []netip.Addr {
	var out []netip.Addr
	for i := 1; i <= n; i++ {
		out = append(out, netip.AddrFrom4([4]byte{127, 0, 0, byte(i)}))
	}
	return out
}

// The server sees each connection come from the next source address in
// turn, whether the addresses come from Options.Source or from the
// context (the way `ceiling load` hands them to every scenario).
func TestSourceAddrsRoundRobin(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	url := serveRaw(t, func(nc net.Conn, req *http.Request, done <-chan struct{}) {
		mu.Lock()
		seen[nc.RemoteAddr().(*net.TCPAddr).IP.String()]++
		mu.Unlock()
		resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			acceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n\r\n"
		if _, err := nc.Write([]byte(resp)); err == nil {
			<-done
		}
	})
	src := NewSourceAddrs(loopbackAddrs(4))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 8 {
		var c *Conn
		var err error
		if i%2 == 0 {
			c, err = Dial(ctx, url, Options{Source: src})
		} else {
			c, err = Dial(WithSourceAddrs(ctx, src), url, Options{})
		}
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		defer c.Close()
		want := loopbackAddrs(4)[i%4].String()
		if got := c.NetConn().LocalAddr().(*net.TCPAddr).IP.String(); got != want {
			t.Errorf("connection %d comes from %s, want %s (round-robin)", i, got, want)
		}
	}
	// The server side is asynchronous: wait for all eight upgrades.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := 0
		for _, k := range seen {
			n += k
		}
		got := len(seen)
		mu.Unlock()
		if n == 8 || time.Now().After(deadline) {
			if n != 8 || got != 4 {
				t.Fatalf("server saw %d connections from %d addresses (%v), want 8 from 4", n, got, seen)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for ip, n := range seen {
		if n != 2 {
			t.Errorf("server saw %d connections from %s, want 2 each: %v", n, ip, seen)
		}
	}
}

func TestNewSourceAddrsEmptyIsNil(t *testing.T) {
	if s := NewSourceAddrs(nil); s != nil {
		t.Fatalf("NewSourceAddrs(nil) = %v, want nil", s)
	}
	ctx := context.Background()
	if WithSourceAddrs(ctx, nil) != ctx || SourceAddrsFrom(ctx) != nil {
		t.Fatal("a nil SourceAddrs must leave the context alone")
	}
}
