package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

func TestSpecial(t *testing.T) {
	cases := []struct {
		addr  string
		class string // "" for a public address
	}{
		{"127.0.0.1", "loopback"},
		{"127.254.3.9", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"169.254.169.254", "metadata"},
		{"169.254.170.2", "metadata"},
		{"169.254.1.1", "link-local"},
		{"100.100.100.200", "metadata"},
		{"100.64.0.1", "shared"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"255.255.255.255", "reserved"},
		{"224.0.0.1", "multicast"},
		{"::1", "loopback"},
		{"::", "unspecified"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:169.254.169.254", "metadata"},
		{"::127.0.0.1", "IPv4-compatible"},
		{"64:ff9b::7f00:1", "loopback address (embedded"},
		{"64:ff9b::a9fe:a9fe", "metadata address (embedded"},
		{"64:ff9b:1::1", "NAT64"},
		{"2002:7f00:1::1", "loopback address (embedded"},
		{"2002:a9fe:a9fe::1", "metadata address (embedded"},
		{"2001::1", "Teredo"},
		{"2001:db8::1", "documentation"},
		{"fc00::1", "private"},
		{"fd00:ec2::254", "metadata"},
		{"fe80::1%eth0", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		// Public addresses stay reachable.
		{"8.8.8.8", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"93.184.216.34", ""},
		{"2606:4700::1111", ""},
		{"2002:808:808::1", ""},
		{"64:ff9b::808:808", ""},
	}
	for _, c := range cases {
		class, special := Special(netip.MustParseAddr(c.addr))
		if c.class == "" {
			if special {
				t.Errorf("%s: classed %q, want public", c.addr, class)
			}
			continue
		}
		if !special || !strings.Contains(class, c.class) {
			t.Errorf("%s: classed %q (special %v), want %q", c.addr, class, special, c.class)
		}
	}
}

// fakeNet resolves names from a table and records every dial; it never
// opens a real connection.
type fakeNet struct {
	mu      sync.Mutex
	hosts   map[string][]string
	lookups []string
	dials   []string
}

func (f *fakeNet) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups = append(f.lookups, host)
	var out []netip.Addr
	for _, s := range f.hosts[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if len(out) == 0 {
		return nil, errors.New("no such host")
	}
	return out, nil
}

func (f *fakeNet) dial(_ context.Context, _, addr string) (net.Conn, error) {
	f.mu.Lock()
	f.dials = append(f.dials, addr)
	f.mu.Unlock()
	a, b := net.Pipe()
	_ = b.Close()
	return a, nil
}

func TestDialerChecksTheAddressItDials(t *testing.T) {
	cases := []struct {
		name     string
		allow    []string
		addr     string
		hosts    map[string][]string
		wantDial string // "" when the dial must be refused
		reason   string
		lookups  int
	}{
		{name: "a name not on the list is refused before any lookup",
			allow: []string{"docs.example"}, addr: "evil.example:443",
			hosts: map[string][]string{"evil.example": {"93.184.216.34"}}, reason: "allowlist"},
		{name: "an allowed name that resolves to loopback is refused",
			allow: []string{"docs.example"}, addr: "docs.example:80",
			hosts: map[string][]string{"docs.example": {"127.0.0.1"}}, reason: "loopback", lookups: 1},
		{name: "an allowed wildcard that resolves to the metadata address is refused",
			allow: []string{"*.example"}, addr: "meta.example:80",
			hosts: map[string][]string{"meta.example": {"169.254.169.254"}}, reason: "metadata", lookups: 1},
		{name: "an IPv4-mapped answer is checked as IPv4",
			allow: []string{"docs.example"}, addr: "docs.example:80",
			hosts: map[string][]string{"docs.example": {"::ffff:10.0.0.7"}}, reason: "private", lookups: 1},
		{name: "a rebinding answer with both kinds dials only the public one",
			allow: []string{"docs.example"}, addr: "docs.example:443",
			hosts: map[string][]string{"docs.example": {"127.0.0.1", "93.184.216.34"}}, wantDial: "93.184.216.34:443", lookups: 1},
		{name: "a rule naming the address lets a name reach it",
			allow: []string{"docs.example", "127.0.0.1:8080"}, addr: "docs.example:8080",
			hosts: map[string][]string{"docs.example": {"127.0.0.1"}}, wantDial: "127.0.0.1:8080", lookups: 1},
		{name: "the address rule is port-bound",
			allow: []string{"docs.example", "127.0.0.1:8080"}, addr: "docs.example:8081",
			hosts: map[string][]string{"docs.example": {"127.0.0.1"}}, reason: "loopback", lookups: 1},
		{name: "an IP literal on the list is dialled without a lookup",
			allow: []string{"127.0.0.1:8080"}, addr: "127.0.0.1:8080", wantDial: "127.0.0.1:8080"},
		{name: "an IP literal allowed only as a name rule's result is refused",
			allow: []string{"localhost"}, addr: "localhost:80",
			hosts: map[string][]string{"localhost": {"127.0.0.1", "::1"}}, reason: "loopback", lookups: 1},
		{name: "0.0.0.0 is refused",
			allow: []string{"*.example"}, addr: "zero.example:80",
			hosts: map[string][]string{"zero.example": {"0.0.0.0"}}, reason: "unspecified", lookups: 1},
		{name: "a NAT64 form of loopback is refused",
			allow: []string{"*.example"}, addr: "v6.example:80",
			hosts: map[string][]string{"v6.example": {"64:ff9b::7f00:1"}}, reason: "loopback", lookups: 1},
		{name: "a public IPv6 answer is dialled",
			allow: []string{"*.example"}, addr: "v6.example:443",
			hosts: map[string][]string{"v6.example": {"2606:4700::1111"}}, wantDial: "[2606:4700::1111]:443", lookups: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParsePolicy(c.allow)
			if err != nil {
				t.Fatal(err)
			}
			f := &fakeNet{hosts: c.hosts}
			var refusals []Decision
			d := &Dialer{Policy: p, Via: "fetch_url", Resolver: f, Dial: f.dial, OnRefused: func(dec Decision) { refusals = append(refusals, dec) }}
			conn, err := d.DialContext(context.Background(), "tcp", c.addr)
			if conn != nil {
				_ = conn.Close()
			}
			if len(f.lookups) != c.lookups {
				t.Errorf("lookups %v, want %d", f.lookups, c.lookups)
			}
			if c.wantDial != "" {
				if err != nil || len(f.dials) != 1 || f.dials[0] != c.wantDial {
					t.Fatalf("err %v, dials %v; want one dial of %s", err, f.dials, c.wantDial)
				}
				return
			}
			if len(f.dials) != 0 {
				t.Fatalf("dialled %v; every address should have been refused", f.dials)
			}
			re, ok := IsRefused(err)
			if !ok {
				t.Fatalf("err %v, want a refusal naming %q", err, c.reason)
			}
			dec := re.Decision
			if (c.lookups > 0) != re.Addr.IsValid() {
				t.Errorf("refused address %v; it should be set exactly when a resolved address was refused", re.Addr)
			}
			if dec.Allowed || dec.Via != "fetch_url" || !strings.Contains(dec.Reason, c.reason) {
				t.Fatalf("err %v (decision %+v), want a refusal naming %q", err, dec, c.reason)
			}
			if len(refusals) != 1 || refusals[0] != dec {
				t.Fatalf("OnRefused got %+v, want the refusal once", refusals)
			}
		})
	}
}
