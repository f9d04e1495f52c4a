package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// Resolver looks up a host name's addresses. *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc opens a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// RefusedError is a connection the policy refused. The Decision says what
// was asked for and why it was refused; Addr is the resolved address that
// was refused, when the name itself was allowed.
type RefusedError struct {
	Decision Decision
	Addr     netip.Addr
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("egress to %s refused: %s", net.JoinHostPort(e.Decision.Host, strconv.Itoa(e.Decision.Port)), e.Decision.Reason)
}

// Dialer connects only where the policy allows, and checks the address it
// connects to rather than the name it was given. A host name on the
// allowlist that resolves to a loopback, private, link-local, metadata or
// otherwise special address is refused unless an allow rule names that
// address itself: an allowed name is not a licence to reach the machine's
// own services, the LAN or the cloud metadata endpoint. Because the
// address checked is the address dialled, a name that answers one lookup
// with a public address and the next with 127.0.0.1 (DNS rebinding) gains
// nothing.
type Dialer struct {
	Policy Policy
	// Via names the client in decisions ("fetch_url").
	Via string
	// Resolver and Dial replace the system's (tests); nil means the system's.
	Resolver Resolver
	Dial     DialFunc
	// OnRefused is told of every refusal the dialer makes; nil is allowed.
	OnRefused func(Decision)
}

// DialContext connects to addr (host:port) as the policy allows.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("dial %q: the port is not a number from 1 to 65535", addr)
	}
	if dec := d.Policy.Decide(host, port, d.Via); !dec.Allowed {
		return nil, d.refuse(dec)
	}
	addrs, err := d.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var lastErr error
	var refused *RefusedError
	for _, a := range addrs {
		if !fits(network, a) {
			continue
		}
		if class, special := Special(a); special {
			if ok, _ := d.Policy.Allows(a.String(), port); !ok {
				dec := Decision{Host: host, Port: port, Via: d.Via, Reason: fmt.Sprintf(
					"%s resolves to %s, %s; a host name never reaches such an address unless an allow rule names the address itself", host, a, class)}
				if refused == nil {
					refused = &RefusedError{Decision: dec, Addr: a}
				}
				continue
			}
		}
		conn, err := d.dial()(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	if lastErr != nil {
		return nil, lastErr
	}
	if refused != nil {
		return nil, d.refuseAddr(refused)
	}
	return nil, fmt.Errorf("dial %s: no address of %s fits %s", addr, host, network)
}

func (d *Dialer) refuse(dec Decision) error {
	return d.refuseAddr(&RefusedError{Decision: dec})
}

func (d *Dialer) refuseAddr(e *RefusedError) error {
	e.Decision.Allowed = false
	if d.OnRefused != nil {
		d.OnRefused(e.Decision)
	}
	return e
}

func (d *Dialer) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	var r Resolver = net.DefaultResolver
	if d.Resolver != nil {
		r = d.Resolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("look up %s: no addresses", host)
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = a.Unmap()
	}
	return out, nil
}

func (d *Dialer) dial() DialFunc {
	if d.Dial != nil {
		return d.Dial
	}
	var nd net.Dialer
	return nd.DialContext
}

// fits reports whether a can be dialled on network ("tcp", "tcp4", "tcp6").
func fits(network string, a netip.Addr) bool {
	switch network {
	case "tcp4", "udp4":
		return a.Is4()
	case "tcp6", "udp6":
		return a.Is6()
	}
	return true
}

// specialRange is an address range a host name must not lead to.
type specialRange struct {
	prefix netip.Prefix
	class  string
}

// specialRanges are the ranges that are not the public internet: the
// machine itself, private networks, link-local (where cloud metadata
// services answer), shared and reserved space, and the IPv6 forms that
// embed or tunnel to IPv4.
var specialRanges = func() []specialRange {
	table := []struct{ cidr, class string }{
		{"0.0.0.0/8", "an unspecified (this-host) address"},
		{"10.0.0.0/8", "a private address"},
		{"100.64.0.0/10", "a shared (carrier-grade NAT) address"},
		{"127.0.0.0/8", "a loopback address"},
		{"169.254.0.0/16", "a link-local address"},
		{"172.16.0.0/12", "a private address"},
		{"192.0.0.0/24", "a reserved address"},
		{"192.0.2.0/24", "a documentation address"},
		{"192.88.99.0/24", "a reserved address"},
		{"192.168.0.0/16", "a private address"},
		{"198.18.0.0/15", "a benchmarking address"},
		{"198.51.100.0/24", "a documentation address"},
		{"203.0.113.0/24", "a documentation address"},
		{"224.0.0.0/4", "a multicast address"},
		{"240.0.0.0/4", "a reserved address"},
		{"::/128", "an unspecified address"},
		{"::1/128", "a loopback address"},
		{"::/96", "a reserved (IPv4-compatible) address"},
		{"64:ff9b:1::/48", "a local NAT64 address"},
		{"100::/64", "a discard address"},
		{"2001::/32", "a Teredo tunnel address"},
		{"2001:db8::/32", "a documentation address"},
		{"fc00::/7", "a private (unique local) address"},
		{"fe80::/10", "a link-local address"},
		{"fec0::/10", "a site-local address"},
		{"ff00::/8", "a multicast address"},
	}
	out := make([]specialRange, len(table))
	for i, e := range table {
		out[i] = specialRange{netip.MustParsePrefix(e.cidr), e.class}
	}
	return out
}()

// metadataAddrs are the cloud instance-metadata endpoints, named in
// refusals so the operator sees what was at stake.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("169.254.170.2"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("fd00:ec2::254"),
}

// Special reports whether a is not a public internet address, and which
// kind it is: loopback, private, link-local (cloud metadata), shared,
// reserved, multicast, or an IPv6 address that embeds one (IPv4-mapped,
// NAT64 64:ff9b::/96, 6to4 2002::/16).
func Special(a netip.Addr) (string, bool) {
	a = a.Unmap()
	if !a.IsValid() {
		return "an invalid address", true
	}
	for _, m := range metadataAddrs {
		if a.WithZone("") == m {
			return "the cloud metadata address", true
		}
	}
	if v4, ok := embeddedIPv4(a); ok {
		if class, special := Special(v4); special {
			return class + " (embedded in " + a.String() + ")", true
		}
		return "", false
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(a.WithZone("")) {
			return r.class, true
		}
	}
	return "", false
}

// embeddedIPv4 extracts the IPv4 address a NAT64 (64:ff9b::/96) or 6to4
// (2002::/16) address routes to.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case netip.MustParsePrefix("64:ff9b::/96").Contains(a.WithZone("")):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// IsRefused reports whether err is, or wraps, a policy refusal, and returns
// it.
func IsRefused(err error) (*RefusedError, bool) {
	var re *RefusedError
	if errors.As(err, &re) {
		return re, true
	}
	return nil, false
}
