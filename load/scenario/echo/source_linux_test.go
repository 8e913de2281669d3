package echo

import (
	"context"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/netnstest"
	"github.com/ceiling-bench/ceiling/load"
)

// The default, --source-addrs auto, in a network namespace whose port
// range is 100 ports: 300 connections to a loopback server all open,
// spread over 127.0.0.1..127.0.0.6 (50 each, half the range), and the
// server sees all six; with off, the one address runs out of ports and
// the run records connect_EADDRNOTAVAIL.
func TestEchoAutoSourceAddrsPastThePortRange(t *testing.T) {
	if !netnstest.Child() {
		netnstest.Run(t, "TestEchoAutoSourceAddrsPastThePortRange")
		return
	}
	netnstest.LoopbackUp(t)
	netnstest.PortRange(t, 40000, 40099)
	const conns = 300
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	srv := startSourceServer(t)
	res, err := load.Run(ctx, sourceConfig(srv.url, conns, ""), load.Options{Version: "test", Command: []string{"x"}})
	if err != nil {
		t.Fatalf("auto: %v", err)
	}
	if s := res.Summary; s.ConnectionsOpen != conns || s.ErrorsByReason["connect_EADDRNOTAVAIL"] != 0 {
		t.Errorf("auto: %d of %d open, errors %v", s.ConnectionsOpen, conns, s.ErrorsByReason)
	}
	if n := len(res.Generator.SourceAddrs); n != 6 {
		t.Errorf("auto: generator.source_addrs %v, want 127.0.0.1..127.0.0.6", res.Generator.SourceAddrs)
	}
	srv.mu.Lock()
	if len(srv.from) != 6 {
		t.Errorf("auto: server saw connections from %v, want 6 addresses", srv.from)
	}
	srv.mu.Unlock()

	spread := res.Generator.SourceAddrs

	srv = startSourceServer(t) // a fresh port: no TIME_WAIT of the run above in the way
	res, err = load.Run(ctx, sourceConfig(srv.url, conns, "off"), load.Options{Version: "test", Command: []string{"x"}})
	if err != nil {
		t.Fatalf("off: %v", err)
	}
	if s := res.Summary; s.ConnectionsOpen >= conns || s.ErrorsByReason["connect_EADDRNOTAVAIL"] == 0 {
		t.Errorf("off: %d of %d open, errors %v: want the 100-port range to run out (connect_EADDRNOTAVAIL)", s.ConnectionsOpen, conns, s.ErrorsByReason)
	}
	t.Logf("auto: %d open over %v; off: %d open, errors %v", conns, spread, res.Summary.ConnectionsOpen, res.Summary.ErrorsByReason)
}
