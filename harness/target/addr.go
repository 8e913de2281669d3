package target

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// pinnedURL reports whether a URL drives the server each point boots:
// parsed with the placeholders filled, its host is exactly the point's
// ({host}, or {addr}'s) and its port exactly one of the point's ({port},
// {port2}, {portN}, or {addr}'s). A placeholder anywhere else (a query, a
// subdomain: ws://{host}.example:{port}) or a fixed host with the point's
// port names some other server. Two probes with different addresses tell
// a placeholder from a literal that happens to equal one of them.
func pinnedURL(u string) bool {
	for _, probe := range []struct {
		host string
		base int
	}{{"192.0.2.10", 41000}, {"198.51.100.20", 52000}} {
		a := Addr{Host: probe.host, Port: probe.base + 1, Port2: probe.base + 2}
		for n := 3; n <= MaxPorts; n++ {
			a.Ports = append(a.Ports, probe.base+n)
		}
		x, err := url.Parse(Expand(u, a))
		if err != nil || x.Hostname() != probe.host {
			return false
		}
		port, err := strconv.Atoi(x.Port())
		if err != nil || port <= probe.base || port > probe.base+MaxPorts {
			return false
		}
	}
	return true
}

// portPlaceholder matches {port} and {portN}; {addr} holds {port}.
var portPlaceholder = regexp.MustCompile(`\{port([0-9]*)\}`)

// hasPortPlaceholder reports whether s takes one of the point's ports.
func hasPortPlaceholder(s string) bool {
	return strings.Contains(s, "{addr}") || portPlaceholder.MatchString(s)
}

// Addr is what one point's placeholders are filled from: its free
// loopback port ({port}, {addr}), a second free port for a server that
// listens twice, e.g. a monitoring endpoint ({port2}), further free ports
// {port3}, {port4}, ... for servers that listen more, or several servers
// (Ports: {port3} is Ports[0]), and the point's own fresh directory,
// absolute ({workdir}: state a server keeps, such as a broker's storage,
// starts empty at every point and is kept with the point's logs).
type Addr struct {
	// Host is {host} (and {addr}'s host): empty is 127.0.0.1; the agents'
	// bridge address (agentside.Lab) or AGENTS_LISTEN's host otherwise.
	Host        string
	Port, Port2 int
	Ports       []int // {port3}, {port4}, ...
	WorkDir     string
}

// MaxPorts is the highest {portN} a target may name.
const MaxPorts = 64

// PortN is {portN}'s port (N >= 1; {port1} is {port}), 0 if the point has
// none.
func (a Addr) PortN(n int) int {
	switch {
	case n == 1:
		return a.Port
	case n == 2:
		return a.Port2
	case n >= 3 && n-3 < len(a.Ports):
		return a.Ports[n-3]
	}
	return 0
}

// standIn fills the placeholders where only the syntax is checked.
var standIn = Addr{Port: 1, Port2: 2, WorkDir: "/ceiling-point"}

// standInAddr is standIn with every {portN} the target names.
func (t Spec) standInAddr() Addr {
	a := standIn
	for n := 3; n <= t.PortsUsed() && n <= MaxPorts; n++ {
		a.Ports = append(a.Ports, n)
	}
	return a
}

// PortsUsed is the highest N of a {portN} anywhere in the target (2 at
// least: every point has {port} and {port2}).
func (t Spec) PortsUsed() int {
	b, err := json.Marshal(t)
	if err != nil {
		return 2
	}
	n := 2
	for _, m := range portPlaceholder.FindAllSubmatch(b, -1) {
		if v, err := strconv.Atoi(string(m[1])); err == nil && v > n {
			n = v
		}
	}
	return n
}

// PortsNamed are the N of every {portN} in s ({port} and {addr}: 1).
func PortsNamed(s string) []int {
	var out []int
	if strings.Contains(s, "{addr}") {
		out = append(out, 1)
	}
	for _, m := range portPlaceholder.FindAllStringSubmatch(s, -1) {
		n := 1
		if m[1] != "" {
			n, _ = strconv.Atoi(m[1])
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Expand fills the placeholders of one point: {addr}, {host}, {port},
// {port2}, {portN} and {workdir}. A {portN} the point has no port for is
// left as it is.
func Expand(s string, a Addr) string {
	p := strconv.Itoa(a.Port)
	host := a.Host
	if host == "" {
		host = "127.0.0.1"
	}
	s = strings.NewReplacer("{addr}", net.JoinHostPort(host, p), "{host}", host, "{workdir}", a.WorkDir).Replace(s)
	return portPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		n := 1
		if d := m[len("{port") : len(m)-1]; d != "" {
			n, _ = strconv.Atoi(d)
		}
		if port := a.PortN(n); port > 0 {
			return strconv.Itoa(port)
		}
		return m
	})
}

// FreePorts returns a point's two free loopback ports, distinct.
func FreePorts() (port, port2 int, err error) {
	ps, err := FreePortsN(2)
	if err != nil {
		return 0, 0, err
	}
	return ps[0], ps[1], nil
}

// FreePortsN returns n distinct free loopback ports: every one is held
// open until all are picked, so the kernel cannot hand out one twice.
func FreePortsN(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// FreePort asks the kernel for a free loopback port. It is free when this
// returns; the server binds it a moment later (a race another process could
// win, which then fails that point's readiness, not the sweep).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// profileSeconds is {seconds}: the window in whole seconds, at least 1.
func profileSeconds(window time.Duration) int {
	return max(1, int(window/time.Second))
}

// ExpandProfile fills a profile URL's placeholders: those of Expand and
// {seconds}.
func ExpandProfile(u string, a Addr, window time.Duration) string {
	return strings.ReplaceAll(Expand(u, a), "{seconds}", strconv.Itoa(profileSeconds(window)))
}
