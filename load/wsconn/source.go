package wsconn

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
)

// SourceAddrs spreads the connections a program dials over several local
// IP addresses, round-robin per dial. A TCP connection is named by its
// four-tuple, so against one server address and port each local address
// has its own ephemeral port range (net.ipv4.ip_local_port_range, about
// 28,000 ports by default): N addresses hold N times as many connections.
// On loopback every 127.x.y.z is local, so 127.0.0.1..127.0.0.N need no
// setup.
//
// Each dial binds its address with IP_BIND_ADDRESS_NO_PORT (Linux; set in
// net.Dialer.ControlContext): bind then only fixes the address and the
// kernel picks the port at connect time, from the whole range per
// destination, instead of reserving one at bind time for every
// destination at once (which would cap the address at one range in all).
// A SourceAddrs is safe for concurrent use.
type SourceAddrs struct {
	addrs   []netip.Addr
	dialers []*net.Dialer
	next    atomic.Uint64
}

// NewSourceAddrs returns a round-robin over addrs; nil when addrs is
// empty (the kernel then picks the source address).
func NewSourceAddrs(addrs []netip.Addr) *SourceAddrs {
	if len(addrs) == 0 {
		return nil
	}
	s := &SourceAddrs{addrs: slices.Clone(addrs)}
	for _, a := range addrs {
		s.dialers = append(s.dialers, &net.Dialer{
			LocalAddr:      &net.TCPAddr{IP: a.AsSlice(), Zone: a.Zone()},
			ControlContext: bindAddressNoPort,
		})
	}
	return s
}

// Addrs are the local addresses, in the order dials take them.
func (s *SourceAddrs) Addrs() []netip.Addr { return slices.Clone(s.addrs) }

// Dialer is the dialer of the next connection: each call takes the next
// address.
func (s *SourceAddrs) Dialer() *net.Dialer {
	return s.dialers[(s.next.Add(1)-1)%uint64(len(s.dialers))]
}

type sourceKey struct{}

// WithSourceAddrs returns a context under which Dial takes its local
// address from s (when Options has neither Dialer nor Source): a load
// generator sets it once and every scenario's dials spread. A nil s
// leaves ctx as it is.
func WithSourceAddrs(ctx context.Context, s *SourceAddrs) context.Context {
	if s == nil {
		return ctx
	}
	return context.WithValue(ctx, sourceKey{}, s)
}

// SourceAddrsFrom is the SourceAddrs WithSourceAddrs put in ctx, or nil.
func SourceAddrsFrom(ctx context.Context) *SourceAddrs {
	s, _ := ctx.Value(sourceKey{}).(*SourceAddrs)
	return s
}

// dialer picks the dialer of one Dial: Options.Dialer, else
// Options.Source's next, else the context's, else the zero dialer.
func (o Options) dialer(ctx context.Context) *net.Dialer {
	switch {
	case o.Dialer != nil:
		return o.Dialer
	case o.Source != nil:
		return o.Source.Dialer()
	}
	if s := SourceAddrsFrom(ctx); s != nil {
		return s.Dialer()
	}
	return &net.Dialer{}
}
