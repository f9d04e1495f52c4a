// Package egresstest holds what the egress, sandbox and tools tests share
// to stand in for the network: a resolver answering from a table, so that
// a test of the allowlist never asks a real DNS server.
package egresstest

import (
	"context"
	"fmt"
	"net/netip"
)

// Resolver resolves each name it holds to its addresses; any other name
// fails, as an unknown host does. It satisfies egress.Resolver.
type Resolver map[string][]string

// LookupNetIP returns host's addresses from the table.
func (r Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range r[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return out, nil
}
