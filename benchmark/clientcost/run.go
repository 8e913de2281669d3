package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	// margin is how long a client keeps loading past the window's planned
	// end, so that B is always taken under load.
	margin = 2 * time.Second
	// exitGrace is how long after B a client may take to stop by itself
	// (ceiling and node drain for 2 s, then write their JSON).
	exitGrace = margin + 15*time.Second
	// risingLimit bounds the wait for the server's counter to rise.
	risingLimit = 30 * time.Second
	// pollEvery is the /metrics poll while waiting for it.
	pollEvery = 50 * time.Millisecond
)

// unavailable says why client c cannot run here, or "".
func unavailable(o options, c string) string {
	switch {
	case strings.HasPrefix(c, "ceiling"):
		if _, err := os.Stat(o.ceiling); err != nil {
			return fmt.Sprintf("%s missing (run `make build`)", o.ceiling)
		}
	case c == "node":
		if _, err := exec.LookPath("node"); err != nil {
			return "node not found in PATH"
		}
		if _, err := os.Stat(o.nodeGen); err != nil {
			return fmt.Sprintf("%s missing", o.nodeGen)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(o.nodeGen), "node_modules")); err != nil {
			return "no node_modules beside " + o.nodeGen + " (run `make node-generator`)"
		}
	}
	return ""
}

// clientCommand is how client c is started against url; jsonPath is
// where it writes its result document ("" for the gorilla role, whose
// exit status and "errors" line say it all).
func clientCommand(o options, self, c, url, dir string) (path string, args []string, jsonPath string) {
	run := o.warmup + o.duration + margin
	common := []string{"--scenario", "echo", "--url", url, "--connections", fmt.Sprint(o.conns),
		"--batch", fmt.Sprint(o.batch), "--record-size", fmt.Sprint(o.size),
		"--duration", run.String(), "--warmup", "0s", "--quiet"}
	jsonPath = filepath.Join(dir, "result.json")
	switch c {
	case "ceiling":
		return o.ceiling, append(append([]string{"load"}, common...), "--json", jsonPath), jsonPath
	case "ceiling-eager":
		return o.ceiling, append(append([]string{"load"}, common...), "--eager-reads", "--json", jsonPath), jsonPath
	case "ceiling-busypoll":
		return o.ceiling, append(append([]string{"load"}, common...), "--busy-poll", "--json", jsonPath), jsonPath
	case "ceiling-goroutines":
		return o.ceiling, append(append([]string{"load"}, common...), "--io", "goroutines", "--json", jsonPath), jsonPath
	case "node":
		node, _ := exec.LookPath("node")
		return node, append(append([]string{o.nodeGen}, common...), "--json", jsonPath), jsonPath
	}
	return self, []string{"-role", "gorilla", "-variant", strings.TrimPrefix(c, "gorilla-"), "-url", url,
		"-conns", fmt.Sprint(o.conns), "-batch", fmt.Sprint(o.batch), "-size", fmt.Sprint(o.size),
		"-run", run.String()}, ""
}

// runOne is one run of client c against a fresh refserver.
func runOne(o options, pl placement, self, c string, hz float64) runResult {
	res := runResult{Client: c}
	f, clientErrs, err := measure(o, pl, self, c, hz)
	if err != nil {
		res.Failure = err.Error()
		return res
	}
	res.Figures, res.Errors = &f, clientErrs
	return res
}

// measure starts refserver and the client, takes A and B, and returns
// the figures and the client's errors ("" for none). Both processes are
// killed on every path.
func measure(o options, pl placement, self, c string, hz float64) (figures, string, error) {
	srv, err := startProc("refserver", pl.serverSet(), "refserver listening on ", o.refserver, "--addr", "127.0.0.1:0")
	if err != nil {
		return figures{}, "", err
	}
	defer srv.kill()
	var addr string
	select {
	case addr = <-srv.found:
	case <-srv.child.Done():
		return figures{}, "", fmt.Errorf("refserver exited (%v): %s", srv.child.Wait(), srv.output())
	case <-time.After(15 * time.Second):
		return figures{}, "", fmt.Errorf("refserver printed no listening line within 15s: %s", srv.output())
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return figures{}, "", fmt.Errorf("refserver address %q: %w", addr, err)
	}
	dir, err := os.MkdirTemp("", "clientcost-")
	if err != nil {
		return figures{}, "", err
	}
	defer os.RemoveAll(dir)
	path, args, jsonPath := clientCommand(o, self, c, "ws://"+addr+"/echo", dir)
	cl, err := startProc(c, pl.clientSet(), "", path, args...)
	if err != nil {
		return figures{}, "", err
	}
	defer cl.kill()
	t := target{serverPid: srv.pid(), clientPid: cl.pid(), port: port, metricsURL: "http://" + addr + "/metrics",
		serverCPU: pl.server, clientCPU: pl.client}
	if err := waitRising(t.metricsURL, srv, cl); err != nil {
		return figures{}, "", err
	}
	if err := hold(o.warmup, srv, cl); err != nil {
		return figures{}, "", err
	}
	a, err := take(t)
	if err != nil {
		return figures{}, "", fmt.Errorf("snapshot A: %w", err)
	}
	if err := hold(o.duration, srv, cl); err != nil {
		return figures{}, "", err
	}
	b, err := take(t)
	if err != nil {
		return figures{}, "", fmt.Errorf("snapshot B: %w", err)
	}
	f, err := derive(a, b, hz)
	if err != nil {
		return f, "", err
	}
	killed := cl.waitExit(exitGrace)
	return f, clientErrors(cl, jsonPath, killed), nil
}

// waitRising polls the server's counter until it rises between two
// polls, for at most risingLimit.
func waitRising(url string, srv, cl *proc) error {
	deadline := time.Now().Add(risingLimit)
	var prev uint64
	have := false
	var lastErr error
	for time.Now().Before(deadline) {
		if err := bothAlive(srv, cl); err != nil {
			return fmt.Errorf("before the load started: %w", err)
		}
		v, err := readCounter(url)
		if err == nil {
			if have && v > prev {
				return nil
			}
			prev, have = v, true
		}
		lastErr = err
		time.Sleep(pollEvery)
	}
	return fmt.Errorf("refserver's message counter did not rise within %s (at %d; last error %v; client: %s)", risingLimit, prev, lastErr, cl.output())
}

// hold waits d, failing as soon as either process exits.
func hold(d time.Duration, srv, cl *proc) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-srv.child.Done():
	case <-cl.child.Done():
	}
	return bothAlive(srv, cl)
}

func bothAlive(srv, cl *proc) error {
	if srv.exited() {
		return fmt.Errorf("refserver exited (%v): %s", srv.child.Wait(), srv.output())
	}
	if cl.exited() {
		return fmt.Errorf("%s exited early (%v): %s", cl.name, cl.child.Wait(), cl.output())
	}
	return nil
}

// loadResult is the part of the load.Result document (ceiling load and
// the Node generator) read here.
type loadResult struct {
	Summary struct {
		Messages       int64            `json:"messages"`
		Errors         int64            `json:"errors"`
		ErrorsByReason map[string]int64 `json:"errors_by_reason"`
	} `json:"summary"`
}

// clientErrors is the client's own report of errors after it exited:
// its exit status, its "errors" line (the gorilla role), or its result
// document's error count. "" for a clean run.
func clientErrors(cl *proc, jsonPath string, killed bool) string {
	if killed {
		return fmt.Sprintf("did not exit within %s of the window's end; killed", exitGrace)
	}
	var errs []string
	if err := cl.child.Wait(); err != nil {
		msg := fmt.Sprintf("exit: %v", err)
		if l := cl.line("errors"); l != "" {
			msg += ": " + l
		} else if out := cl.output(); out != "" {
			msg += ": " + out
		}
		errs = append(errs, msg)
	}
	if jsonPath != "" {
		var r loadResult
		b, err := os.ReadFile(jsonPath)
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("result document: %v", err))
		case r.Summary.Errors > 0:
			errs = append(errs, fmt.Sprintf("%d errors %v", r.Summary.Errors, r.Summary.ErrorsByReason))
		case r.Summary.Messages == 0:
			errs = append(errs, "its result counts no messages")
		}
	}
	return strings.Join(errs, "; ")
}
