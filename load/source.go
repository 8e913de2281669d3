package load

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Source addresses (--source-addrs).
//
// Against one server address and port, every local address has one
// ephemeral port range (net.ipv4.ip_local_port_range, 32768-60999 by
// default: 28,232 ports), so one client address holds at most that many
// connections to it, fewer while earlier points' sockets sit in TIME_WAIT
// (the generator closes first, so TIME_WAIT is on its side, for 60 s).
// wsconn.SourceAddrs spreads the connections over several local addresses
// round-robin, each bound with IP_BIND_ADDRESS_NO_PORT; Run hands it to
// every scenario's dials through the context.
//
// The value is one of:
//
//   - "auto" (the default, stored as ""): when every server is on IPv4
//     loopback (127.x.y.z or localhost) and the connections per server
//     exceed half the local port range, 127.0.0.1..127.0.0.N with N the
//     fewest addresses that keep each at or under half the range (the
//     other half is headroom for TIME_WAIT and other sockets); otherwise
//     the kernel picks, as without the flag. Never for a remote server:
//     its addresses are not ours to guess.
//   - "off": the kernel picks the source address.
//   - a count N (1..254): 127.0.0.1..127.0.0.N.
//   - a comma-separated list of addresses and ranges
//     (127.0.0.1-127.0.0.8,127.0.1.1), used as given, for any server.
//
// The addresses used are recorded in generator.source_addrs.
const (
	SourceAuto = "auto"
	SourceOff  = "off"

	maxSourceAddrs = 1 << 16
)

// ParseSourceAddrs reads a --source-addrs value. auto reports the
// automatic choice (addrs nil); off is no address and not auto.
func ParseSourceAddrs(spec string) (addrs []netip.Addr, auto bool, err error) {
	spec = strings.TrimSpace(spec)
	switch spec {
	case "", SourceAuto:
		return nil, true, nil
	case SourceOff:
		return nil, false, nil
	}
	if n, err := strconv.Atoi(spec); err == nil {
		if n < 1 || n > 254 {
			return nil, false, fmt.Errorf("--source-addrs %d: a count of loopback addresses must be 1..254", n)
		}
		return loopbackRange(n), false, nil
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		first, last, isRange := strings.Cut(item, "-")
		a, err := netip.ParseAddr(strings.TrimSpace(first))
		if err != nil {
			return nil, false, fmt.Errorf("--source-addrs %q: %q is not an IP address (want auto, off, a count, or addresses and ranges such as 127.0.0.1-127.0.0.8)", spec, first)
		}
		b := a
		if isRange {
			if b, err = netip.ParseAddr(strings.TrimSpace(last)); err != nil {
				return nil, false, fmt.Errorf("--source-addrs %q: %q is not an IP address", spec, last)
			}
			if a.Is4() != b.Is4() || b.Less(a) {
				return nil, false, fmt.Errorf("--source-addrs %q: range %s is not from a lower to a higher address of one family", spec, item)
			}
		}
		for x := a; ; x = x.Next() {
			if len(addrs) == maxSourceAddrs {
				return nil, false, fmt.Errorf("--source-addrs %q: more than %d addresses", spec, maxSourceAddrs)
			}
			addrs = append(addrs, x)
			if x == b {
				break
			}
		}
	}
	return addrs, false, nil
}

// loopbackRange is 127.0.0.1..127.0.0.n.
func loopbackRange(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)})
	}
	return out
}

// SourceAddrs are the local addresses cfg's connections spread over (nil:
// the kernel picks), with a line saying what was chosen and why ("" when
// nothing was). portRange is the number of ephemeral ports per address,
// LocalPortRange() on this machine.
func SourceAddrs(cfg *Config, portRange int) ([]netip.Addr, string) {
	addrs, auto, err := ParseSourceAddrs(cfg.SourceAddrs)
	if err != nil || !auto {
		if len(addrs) > 0 {
			return addrs, fmt.Sprintf("source addresses: %d given (--source-addrs %s)", len(addrs), cfg.SourceAddrs)
		}
		return nil, ""
	}
	urls := cfg.URLs
	if len(urls) == 0 {
		urls = []string{cfg.URL}
	}
	servers := map[string]bool{}
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil || !loopback4(u.Hostname()) {
			return nil, ""
		}
		servers[u.Host] = true
	}
	perServer := (cfg.Connections + len(servers) - 1) / len(servers)
	perAddr := max(portRange/2, 1)
	if perServer <= perAddr {
		return nil, ""
	}
	n := min((perServer+perAddr-1)/perAddr, 254)
	return loopbackRange(n), fmt.Sprintf("source addresses: %d connections per server over %d ports per address: spreading over 127.0.0.1-127.0.0.%d (--source-addrs auto)",
		perServer, portRange, n)
}

// loopback4 reports whether host is an IPv4 loopback address or
// localhost (which the dialer then reaches over IPv4, the family of the
// source addresses).
func loopback4(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Is4() && a.IsLoopback()
}

// DefaultPortRange is the kernel's default ephemeral port range size
// (32768-60999), assumed where the real one cannot be read.
const DefaultPortRange = 60999 - 32768 + 1

// LocalPortRange is the number of ephemeral ports per local address
// (net.ipv4.ip_local_port_range).
func LocalPortRange() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return DefaultPortRange
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return DefaultPortRange
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || hi < lo {
		return DefaultPortRange
	}
	return hi - lo + 1
}

// sourceStrings renders addresses for the result.
func sourceStrings(addrs []netip.Addr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}
