package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// --drop: after the window, every client vanishes at the same moment,
// with no close handshake (seed 000's --drop). A server that keeps
// sending the backlog to sockets that are gone, or holds rooms for them,
// answers its ready probe late or not at all. The run then says whether
// the server stayed up (its probe answered within DropTimeout), how soon
// it answered, and whether a new client is served (the scenario's Probe:
// one full round trip on a fresh connection).

// DropTimeout bounds the wait for the ready probe and the new client (a
// variable for tests).
var DropTimeout = 30 * time.Second

// Dropper is a Scenario that can drop every connection it holds without a
// close frame (wsconn.Conn.Abort), returning how many it dropped.
type Dropper interface {
	Drop() int
}

// Prober is a Scenario that checks a new client is served: it connects
// afresh and completes one round trip of its protocol (echo: a message
// back; fanout: a published event delivered).
type Prober interface {
	Probe(ctx context.Context) error
}

// DropResult is summary.drop (defined in internal/wire).
type DropResult = wire.DropResult

// validateDropProbe checks --drop-probe: "" (none), an http(s) URL that
// answers 2xx, or tcp:HOST:PORT.
func validateDropProbe(p string) error {
	switch {
	case p == "":
		return nil
	case strings.HasPrefix(p, "http://"), strings.HasPrefix(p, "https://"):
		return nil
	case strings.HasPrefix(p, "tcp:"):
		if _, _, err := net.SplitHostPort(strings.TrimPrefix(p, "tcp:")); err != nil {
			return fmt.Errorf("--drop-probe %q: %w", p, err)
		}
		return nil
	}
	return fmt.Errorf("--drop-probe %q: want http://..., https://... or tcp:HOST:PORT", p)
}

// dropAll runs --drop on the scenario after its window.
func dropAll(ctx context.Context, sc Scenario, probe string) (*DropResult, error) {
	d, ok := sc.(Dropper)
	if !ok {
		return nil, errors.New("--drop: this scenario cannot drop its connections")
	}
	res := &DropResult{ReadyProbe: probe}
	t0 := Mono()
	res.Dropped = d.Drop()
	ctx, cancel := context.WithTimeout(ctx, DropTimeout)
	defer cancel()
	if probe != "" {
		if err := pollReady(ctx, probe); err != nil {
			res.ProbeError = err.Error()
		} else {
			res.ServerUp = true
			v := Mono() - t0
			res.ReadyAfterNs = &v
		}
	}
	if p, ok := sc.(Prober); ok {
		if err := p.Probe(ctx); err != nil {
			res.NewClientError = err.Error()
		} else {
			res.NewClientOK = true
			v := Mono() - t0
			res.NewClientAfterNs = &v
		}
	} else {
		res.NewClientError = "this scenario has no new-client probe"
	}
	if probe == "" && res.NewClientOK {
		// No probe given: a served new client is the server up.
		res.ServerUp = true
		res.ReadyAfterNs = res.NewClientAfterNs
	}
	return res, nil
}

// pollReady polls the probe every 10 ms until it answers or ctx ends.
func pollReady(ctx context.Context, probe string) error {
	client := &http.Client{Timeout: time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var last error
	for {
		last = probeOnce(ctx, client, probe)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no answer within %v: %w", DropTimeout, last)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func probeOnce(ctx context.Context, client *http.Client, probe string) error {
	if addr, ok := strings.CutPrefix(probe, "tcp:"); ok {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
