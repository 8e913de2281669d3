package load

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// Source addresses (--source-addrs): what the values mean, and their
// parser, are internal/wire's (SourceAuto, ParseSourceAddrs), which the
// knobs check SOURCE_ADDRS by without linking the generator.
const (
	SourceAuto = wire.SourceAuto
	SourceOff  = wire.SourceOff
)

// ParseSourceAddrs reads a --source-addrs value (wire.ParseSourceAddrs).
func ParseSourceAddrs(spec string) (addrs []netip.Addr, auto bool, err error) {
	return wire.ParseSourceAddrs(spec)
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
	return wire.LoopbackAddrs(n), fmt.Sprintf("source addresses: %d connections per server over %d ports per address: spreading over 127.0.0.1-127.0.0.%d (--source-addrs auto)",
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
