// Package netlab builds a small network of namespaces, so that several
// processes on one machine look like separate hosts: a bridge in the
// current network namespace (the lab's, normally a private one, see
// internal/netnstest), and for each host process started in a network
// namespace of its own (CLONE_NEWNET) a veth pair from the bridge into
// it, with the addresses it is given. Everything is done with the `ip`
// tool, from the lab's side (nsenter for the host's side), and vanishes
// with the namespaces.
//
// It needs root (CAP_NET_ADMIN) and a kernel with veth and bridge; the
// tests that use it skip, saying why, when either is missing.
package netlab

import (
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
)

// Lab is a bridge with the lab's own address on it.
type Lab struct {
	Bridge  string
	Gateway netip.Prefix // the lab's address on the bridge, and the hosts' subnet
	hosts   int
}

// New creates bridge (a name of at most 15 bytes) with gw on it, and
// brings it and lo up.
func New(bridge string, gw netip.Prefix) (*Lab, error) {
	l := &Lab{Bridge: bridge, Gateway: gw}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", bridge, "type", "bridge"},
		{"addr", "add", gw.String(), "dev", bridge},
		{"link", "set", bridge, "up"},
	} {
		if err := ip("", args...); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Attach joins the network namespace of process pid to the bridge by a
// veth pair and gives its end addrs (in the bridge's subnet). It returns
// the name of the host's interface.
func (l *Lab) Attach(pid int, addrs []netip.Addr) (string, error) {
	l.hosts++
	outer, inner := fmt.Sprintf("lab%dh", l.hosts), fmt.Sprintf("lab%dc", l.hosts)
	ns := "/proc/" + strconv.Itoa(pid) + "/ns/net"
	steps := []struct {
		ns   string
		args []string
	}{
		{"", []string{"link", "add", outer, "type", "veth", "peer", "name", inner}},
		{"", []string{"link", "set", inner, "netns", strconv.Itoa(pid)}},
		{"", []string{"link", "set", outer, "master", l.Bridge}},
		{"", []string{"link", "set", outer, "up"}},
		{ns, []string{"link", "set", "lo", "up"}},
	}
	for _, a := range addrs {
		steps = append(steps, struct {
			ns   string
			args []string
		}{ns, []string{"addr", "add", netip.PrefixFrom(a, l.Gateway.Bits()).String(), "dev", inner}})
	}
	// Up last: once the host can reach the lab, all its addresses exist.
	steps = append(steps, struct {
		ns   string
		args []string
	}{ns, []string{"link", "set", inner, "up"}})
	for _, s := range steps {
		if err := ip(s.ns, s.args...); err != nil {
			return "", err
		}
	}
	return inner, nil
}

// ip runs the ip tool, in the network namespace file ns when given.
func ip(ns string, args ...string) error {
	name, argv := "ip", args
	if ns != "" {
		name, argv = "nsenter", append([]string{"--net=" + ns, "ip"}, args...)
	}
	out, err := exec.Command(name, argv...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
