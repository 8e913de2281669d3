package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"
)

// natsSection is section 5: whether nats.go makes the generator the limit
// of the NATS scenarios. One nats-server (bin/nats-server, built by make
// from go.mod, with benchmark/targets/nats.conf) pinned to the server's
// core and `ceiling load` pinned to the generator's: produce (each record
// published and its ack awaited) and stream (each record published, acked
// and delivered back to a consumer on the same connection), -reps times.
// The figures are each process's user+system CPU over the window divided
// by the messages the generator counted (acks for produce, deliveries for
// stream). A generator ns/msg above the server's means that at one core
// each the generator saturates first: its figures are then a lower bound
// of the server's ceiling, which a sweep's verdict says.
func natsSection(o options, stdout io.Writer, pl placement) error {
	o.duration = o.echoDur
	natsBin := filepath.Join(filepath.Dir(o.ceiling), "nats-server")
	conf := filepath.Join(moduleRoot(), "benchmark", "targets", "nats.conf")
	for _, f := range []string{o.ceiling, natsBin, conf} {
		if _, err := os.Stat(f); err != nil {
			fmt.Fprintf(stdout, "\n5. NATS: skipped, no %s (make build)\n", f)
			return nil
		}
	}
	fmt.Fprintf(stdout, "\n5. NATS JetStream over WebSocket (nats.go): CPU per message, nats-server on cpu %s, generator on cpu %s, %s windows\n",
		orDash(pl.srv), orDash(pl.gen), o.duration)
	fmt.Fprintf(stdout, "   %d connections, batch 100 in flight each, %d-byte records, file storage; produce counts acks, stream deliveries\n", o.echoConns, o.size)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rep\tscenario\tmsg/s\tgen ns/msg\tserver ns/msg\tgen/server\tgen cores\tserver cores\terrors\t")
	for rep := 0; rep < o.reps; rep++ {
		for _, mode := range []string{"produce", "stream"} {
			p, err := natsPoint(o, pl, natsBin, conf, mode)
			if err != nil {
				return fmt.Errorf("nats %s: %w", mode, err)
			}
			g, s := cpuPerMsgOf(p, p.gen), cpuPerMsgOf(p, p.srv)
			ratio := "n/a"
			if s > 0 {
				ratio = fmt.Sprintf("%.2f", g/s)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f\t%.0f\t%s\t%.2f\t%.2f\t%d\t\n", rep+1, mode, si(p.ratePerS), g, s, ratio,
				(p.gen.user+p.gen.sys).Seconds()/p.sampledS, (p.srv.user+p.srv.sys).Seconds()/p.sampledS, p.errors)
		}
	}
	tw.Flush()
	fmt.Fprintln(stdout, "   gen/server above 1: at a core each the generator (nats.go) saturates before nats-server does")
	return nil
}

// natsPoint boots a fresh nats-server (its own store) and runs one point.
func natsPoint(o options, pl placement, natsBin, conf, mode string) (echoPoint, error) {
	store, err := os.MkdirTemp("", "ceiling-bench-nats-")
	if err != nil {
		return echoPoint{}, err
	}
	defer os.RemoveAll(store)
	ws, err := freeAddr()
	if err != nil {
		return echoPoint{}, err
	}
	mon, err := freeAddr()
	if err != nil {
		return echoPoint{}, err
	}
	_, wsPort, _ := splitHostPort(ws)
	_, monPort, _ := splitHostPort(mon)
	srv, err := startProc("nats-server", pl.srv, []string{"CEILING_WS_PORT=" + wsPort}, natsBin,
		"-c", conf, "-a", "127.0.0.1", "-p", "-1", "-m", monPort, "-js", "-sd", store)
	if err != nil {
		return echoPoint{}, err
	}
	defer srv.kill()
	if err := waitHealthy("http://"+mon+"/healthz", srv, 20*time.Second); err != nil {
		return echoPoint{}, err
	}
	return ceilingLoad(o, pl, srv, 100, mode, "--scenario", mode, "--url", "ws://"+ws,
		"--connections", fmt.Sprint(o.echoConns), "--batch", "100", "--record-size", fmt.Sprint(o.size))
}

// cpuPerMsgOf is one process's user+system ns per message counted.
func cpuPerMsgOf(p echoPoint, c cpuTimes) float64 {
	msgs := p.ratePerS * p.sampledS
	if msgs <= 0 {
		return 0
	}
	return float64((c.user + c.sys).Nanoseconds()) / msgs
}

func splitHostPort(addr string) (host, port string, err error) { return net.SplitHostPort(addr) }
