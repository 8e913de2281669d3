package wsconn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/netnstest"
)

// In a network namespace of its own whose ephemeral port range is shrunk
// to 100 ports, 300 connections to one server address succeed from 4
// source addresses and run out of ports (EADDRNOTAVAIL) from one: the
// exhaustion SourceAddrs exists to avoid, at a size a test can afford.
func TestSourceAddrsOutlastOnePortRange(t *testing.T) {
	if !netnstest.Child() {
		netnstest.Run(t, "TestSourceAddrsOutlastOnePortRange")
		return
	}
	netnsPortExhaustion(t)
}

// netnsPortExhaustion runs in the child, inside the new namespace.
func netnsPortExhaustion(t *testing.T) {
	netnstest.LoopbackUp(t)
	const lo, hi = 40000, 40099 // 100 ephemeral ports
	netnstest.PortRange(t, lo, hi)
	const conns = 300

	// Each case gets its own server port, so no four-tuple of one case
	// (TIME_WAIT included) is in the way of the other.
	dialAll := func(port int, src *SourceAddrs) (ok int, errs []error) {
		url := serveHeld(t, port)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for range conns {
			c, err := Dial(ctx, url, Options{Source: src, HandshakeTimeout: 5 * time.Second})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ok++
			t.Cleanup(func() { c.Abort() })
		}
		return ok, errs
	}

	ok, errs := dialAll(8081, NewSourceAddrs(loopbackAddrs(4)))
	if ok != conns {
		t.Errorf("4 source addresses: %d of %d connected, first error: %v", ok, conns, errs[0])
	}
	ok, errs = dialAll(8082, NewSourceAddrs(loopbackAddrs(1)))
	if len(errs) == 0 {
		t.Fatalf("1 source address: all %d connected with a %d-port range, want the range to run out", conns, hi-lo+1)
	}
	if ok > hi-lo+1 {
		t.Errorf("1 source address: %d connected, more than the %d ports of the range", ok, hi-lo+1)
	}
	for _, err := range errs {
		if !errors.Is(err, syscall.EADDRNOTAVAIL) {
			t.Fatalf("1 source address: %d connected, then %v, want EADDRNOTAVAIL", ok, err)
		}
	}
	t.Logf("1 source address: %d connected, %d failed with EADDRNOTAVAIL; 4 addresses: all %d", ok, len(errs), conns)
}

// serveHeld accepts upgrades on 127.0.0.1:port (outside the shrunk
// range, so the listener takes none of its ports) and holds every
// connection until the test ends.
func serveHeld(t *testing.T, port int) string {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, nc := range held {
			nc.Close()
		}
	})
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, nc)
			mu.Unlock()
			go func() {
				req, err := http.ReadRequest(bufio.NewReader(nc))
				if err != nil {
					return
				}
				_, _ = nc.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
					acceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n\r\n"))
			}()
		}
	}()
	return fmt.Sprintf("ws://127.0.0.1:%d/", port)
}
