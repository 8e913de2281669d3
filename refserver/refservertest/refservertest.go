// Package refservertest runs the reference server in-process for tests of
// other packages, on a kernel-chosen loopback port, and shuts it down when
// the test ends, failing the test if it did not stop cleanly. It is to
// refserver what net/http/httptest is to net/http.
package refservertest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/refserver"
	natsserver "github.com/nats-io/nats-server/v2/server"
)

// Server is a running refserver.
type Server struct {
	*refserver.Server
	Addr string // host:port
}

// Start runs refserver with cfg until the test ends.
func Start(t testing.TB, cfg refserver.Config) *Server {
	t.Helper()
	srv, err := refserver.New(cfg)
	if err != nil {
		t.Fatalf("refserver.New: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("refserver Shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, refserver.ErrServerClosed) {
			t.Errorf("refserver Serve: %v, want ErrServerClosed", err)
		}
	})
	return &Server{Server: srv, Addr: l.Addr().String()}
}

// EchoURL is the server's /echo endpoint.
func (s *Server) EchoURL() string { return "ws://" + s.Addr + "/echo" }

// RoomsURL is the server's /rooms endpoint (docs/rooms.md).
func (s *Server) RoomsURL() string { return "ws://" + s.Addr + "/rooms" }

// StartNATS runs a NATS server (core only) on the loopback until the test
// ends, and returns its client URL: the bus of a refserver cluster
// (refserver.Config.Cluster).
func StartNATS(t testing.TB) string {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready in 10 s")
	}
	return ns.ClientURL()
}
