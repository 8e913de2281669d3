package echo

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// --drop against refserver: every connection vanishes without a close
// frame, the server's /health answers, and a new client gets its echo.
func TestDropAgainstRefserver(t *testing.T) {
	srv := refservertest.Start(t, refserver.Config{})
	cfg := testConfig(srv.EchoURL())
	cfg.Connections = 50
	cfg.Drop = true
	cfg.DropProbe = "http://" + strings.TrimPrefix(strings.TrimSuffix(srv.EchoURL(), "/echo"), "ws://") + "/health"
	res, err := load.Run(context.Background(), cfg, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Summary.Drop
	if d == nil || d.Dropped != 50 || !d.ServerUp || d.ReadyAfterNs == nil || !d.NewClientOK || d.NewClientAfterNs == nil {
		t.Fatalf("drop %+v", d)
	}
	if *d.ReadyAfterNs <= 0 || *d.ReadyAfterNs > int64(10*time.Second) {
		t.Errorf("ready after %v", time.Duration(*d.ReadyAfterNs))
	}
}

// A probe nobody answers: the server is not reported up, and the reason
// is kept; the measurement itself stands.
func TestDropProbeUnanswered(t *testing.T) {
	old := load.DropTimeout
	load.DropTimeout = 500 * time.Millisecond
	t.Cleanup(func() { load.DropTimeout = old })
	srv := refservertest.Start(t, refserver.Config{})
	cfg := testConfig(srv.EchoURL())
	cfg.Drop = true
	cfg.DropProbe = "tcp:127.0.0.1:1" // nothing listens on port 1
	res, err := load.Run(context.Background(), cfg, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Summary.Drop
	if d == nil || d.ServerUp || d.ReadyAfterNs != nil || !strings.Contains(d.ProbeError, "no answer within") {
		t.Fatalf("drop %+v", d)
	}
	if res.Summary.Messages == 0 {
		t.Errorf("the window's figures were lost")
	}
}
