package wire

import (
	"fmt"
	"net/netip"
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
// The generator's wsconn.SourceAddrs spreads the connections over
// several local addresses round-robin, each bound with
// IP_BIND_ADDRESS_NO_PORT; load.Run hands it to every scenario's dials
// through the context.
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
		return LoopbackAddrs(n), false, nil
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

// LoopbackAddrs are 127.0.0.1..127.0.0.n.
func LoopbackAddrs(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)})
	}
	return out
}
