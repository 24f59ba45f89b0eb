// Package gateway lets the ranks of one job reach each other across
// networks that cannot reach each other (private subnets, NAT, a firewall
// that lets one host through): traffic between two networks goes through
// a gateway per network, a relay that moves bytes and knows no MPI.
//
// The job's gateway table (MPIGO_GATEWAYS, which mpigo run --gateway
// sets) lists each network as a prefix, the address its ranks reach their
// gateway at and, if other networks cannot reach that one, the gateway's
// public address:
//
//	10.1.0.0/16=10.1.0.254:7000/203.0.113.5:7000;192.168.1.0/24=192.168.1.1:7000
//
// A rank finds its own network and its peer's from the addresses they
// publish: ranks of one network, or of no listed network, connect
// directly; a rank connects to a peer of another network through its own
// gateway and, when the peer's network has a public gateway address,
// through that one too (a source route). The same rule takes a rank to
// the launcher's key-value store at start-up. On each hop the gateway
// proves the connecting side knows the job's secret, connects to the next
// address and then copies bytes both ways; the two ends run their own
// handshake over the relayed stream (the tcp transport's, or the store's),
// so the gateways can neither read nor alter what passes, and every
// acknowledgement (synchronous sends, rendezvous) is the far rank's own.
package gateway

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Network is one network of the gateway table.
type Network struct {
	Prefix netip.Prefix
	// Inside is where the network's ranks reach its gateway; empty when
	// the network has none.
	Inside string
	// Public is where the gateways of other networks reach this one's;
	// empty when they reach the network's ranks directly.
	Public string
}

// Table is a job's gateway table. The zero value and nil route
// everything directly.
type Table struct {
	Nets []Network

	mu    sync.Mutex
	names map[string][]netip.Addr // host names resolved so far
}

// lookupTimeout bounds the resolution of a host name a rank published.
const lookupTimeout = 5 * time.Second

// resolve returns the addresses of host, an address or a name (looked up
// once, within lookupTimeout; none if that fails).
func (g *Table) resolve(host string) []netip.Addr {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}
	}
	g.mu.Lock()
	ips, ok := g.names[host]
	g.mu.Unlock()
	if ok {
		return ips
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	found, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	for _, ip := range found {
		ips = append(ips, ip.Unmap())
	}
	g.mu.Lock()
	if g.names == nil {
		g.names = map[string][]netip.Addr{}
	}
	g.names[host] = ips
	g.mu.Unlock()
	return ips
}

// Parse reads a gateway table as MPIGO_GATEWAYS spells it:
// entries PREFIX=INSIDE[/PUBLIC] (or PREFIX alone, a network without a
// gateway) separated by ";". An empty string is an empty table.
func Parse(s string) (*Table, error) {
	g := &Table{}
	for _, e := range strings.Split(s, ";") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		pfx, rest, _ := strings.Cut(e, "=")
		p, err := netip.ParsePrefix(strings.TrimSpace(pfx))
		if err != nil {
			return nil, fmt.Errorf("gateway entry %q: %q is not a network prefix like 10.1.0.0/16", e, pfx)
		}
		n := Network{Prefix: p.Masked()}
		in, pub, _ := strings.Cut(rest, "/")
		for _, a := range []*string{&in, &pub} {
			*a = strings.TrimSpace(*a)
			if *a == "" {
				continue
			}
			if _, port, err := net.SplitHostPort(*a); err != nil || port == "" || port == "0" {
				return nil, fmt.Errorf("gateway entry %q: %q is not a HOST:PORT address", e, *a)
			}
		}
		if in == "" && pub != "" {
			return nil, fmt.Errorf("gateway entry %q: a public address without an inside one", e)
		}
		n.Inside, n.Public = in, pub
		g.Nets = append(g.Nets, n)
	}
	return g, nil
}

// String spells the table as Parse reads it.
func (g *Table) String() string {
	if g == nil {
		return ""
	}
	var s []string
	for _, n := range g.Nets {
		e := n.Prefix.String()
		if n.Inside != "" {
			e += "=" + n.Inside
			if n.Public != "" {
				e += "/" + n.Public
			}
		}
		s = append(s, e)
	}
	return strings.Join(s, ";")
}

// network returns the network of the table that holds addr's host (the
// longest prefix that holds one of its addresses, for a name), nil if
// none does.
func (g *Table) network(addr string) *Network {
	if g == nil || len(g.Nets) == 0 {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	best := -1
	for _, ip := range g.resolve(host) {
		for i, n := range g.Nets {
			if n.Prefix.Contains(ip) && (best < 0 || n.Prefix.Bits() > g.Nets[best].Prefix.Bits()) {
				best = i
			}
		}
	}
	if best < 0 {
		return nil
	}
	return &g.Nets[best]
}

// Route returns the gateways a rank publishing self goes through, in
// order, to reach a peer publishing peer; none means directly.
func (g *Table) Route(self, peer string) []string {
	mine, theirs := g.network(self), g.network(peer)
	if theirs == nil || mine == theirs {
		return nil
	}
	var hops []string
	if mine != nil && mine.Inside != "" {
		hops = append(hops, mine.Inside)
	}
	if theirs.Public != "" && (mine == nil || theirs.Public != mine.Public) {
		hops = append(hops, theirs.Public)
	}
	return hops
}

// Via returns the host of the gateway a connection from remote came
// through, if remote is the host of one of the table's gateways, or "".
// (Which gateway of that host it was, the connection does not say.)
func (g *Table) Via(remote net.Addr) string {
	ta, ok := remote.(*net.TCPAddr)
	if g == nil || !ok {
		return ""
	}
	for _, n := range g.Nets {
		for _, a := range []string{n.Inside, n.Public} {
			if h, _, err := net.SplitHostPort(a); err == nil && a != "" {
				if ip := net.ParseIP(h); ip != nil && ip.Equal(ta.IP) {
					return h
				}
			}
		}
	}
	return ""
}

// Explain says, for an error message, what the table did for a peer that
// could not be reached directly.
func (g *Table) Explain(self, peer string) string {
	if g == nil || len(g.Nets) == 0 {
		return "no gateway is configured (MPIGO_GATEWAYS is empty; mpigo run --gateway relays between networks, see docs/gateways.md)"
	}
	theirs := g.network(peer)
	if theirs == nil {
		return fmt.Sprintf("the gateway table %q lists no network holding %s, so it was dialed directly", g.String(), peer)
	}
	return fmt.Sprintf("the gateway table puts %s and %s in the same network %s, so it was dialed directly", self, peer, theirs.Prefix)
}
