package tcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Gateways: ranks in networks that cannot reach each other (private
// subnets, NAT, a firewall that lets one host through) reach each other
// through a gateway per network, a relay that moves bytes and knows no
// MPI. The job's gateway table (MPIGO_GATEWAYS, which mpigo run --gateway
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
// through that one too (a source route). On each hop the gateway proves
// the connecting side knows the job's secret, connects to the next
// address and then copies bytes both ways; the ranks at the two ends run
// the usual handshake (secure.go) over the relayed stream, so the gateways
// can neither read nor alter the frames, and every acknowledgement
// (synchronous sends, rendezvous) is the far rank's own.

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

// Gateways is a job's gateway table. The zero value and nil route
// everything directly.
type Gateways struct {
	Nets []Network

	mu    sync.Mutex
	names map[string][]netip.Addr // host names resolved so far
}

// lookupTimeout bounds the resolution of a host name a rank published.
const lookupTimeout = 5 * time.Second

// resolve returns the addresses of host, an address or a name (looked up
// once, within lookupTimeout; none if that fails).
func (g *Gateways) resolve(host string) []netip.Addr {
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

// ParseGateways reads a gateway table as MPIGO_GATEWAYS spells it:
// entries PREFIX=INSIDE[/PUBLIC] (or PREFIX alone, a network without a
// gateway) separated by ";". An empty string is an empty table.
func ParseGateways(s string) (*Gateways, error) {
	g := &Gateways{}
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

// String spells the table as ParseGateways reads it.
func (g *Gateways) String() string {
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
func (g *Gateways) network(addr string) *Network {
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
func (g *Gateways) Route(self, peer string) []string {
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
func (g *Gateways) Via(remote net.Addr) string {
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
func (g *Gateways) Explain(self, peer string) string {
	if g == nil || len(g.Nets) == 0 {
		return "no gateway is configured (MPIGO_GATEWAYS is empty; mpigo run --gateway relays between networks, see docs/gateways.md)"
	}
	theirs := g.network(peer)
	if theirs == nil {
		return fmt.Sprintf("the gateway table %q lists no network holding %s, so it was dialed directly", g.String(), peer)
	}
	return fmt.Sprintf("the gateway table puts %s and %s in the same network %s, so it was dialed directly", self, peer, theirs.Prefix)
}

// The relay protocol, one exchange per hop, in the style of the rank
// handshake:
//
//	gateway -> client: challenge  N[32]
//	client -> gateway: request    "MPIGW" version[1] job[8] len[2] target[len] mac[32]
//	gateway -> client: reply      status[1] len[2] message[len] mac[32]
//
// The request's mac is HMAC-SHA256, keyed with the job's secret, of a
// label, N and the request before the mac; the reply's, of another label,
// N, the whole request and the reply before the mac. Status 0 means the
// gateway is connected to target and copies bytes from now on; otherwise
// message says why not and the gateway closes the connection.
const (
	relayVersion    = 1
	relayHeaderSize = 5 + 1 + 8 + 2
	maxTarget       = 255
	maxReplyMsg     = 1024
	relayReqLabel   = "mpigo gateway request v1"
	relayRepLabel   = "mpigo gateway reply v1"
)

var relayMagic = [5]byte{'M', 'P', 'I', 'G', 'W'}

// relayDialTimeout bounds each connection a rank or a gateway makes, so
// that an address whose packets vanish (a firewall that drops them) fails
// in time; it is generous because a busy peer's full accept queue drops
// connection requests too, and the kernel retries them after 1, 3, 7 s...
var relayDialTimeout = dialHandshakeTimeout

// relayTimeout bounds each exchange of the relay protocol.
var relayTimeout = 10 * time.Second

func relayRequest(secret, challenge []byte, job uint64, target string) []byte {
	r := make([]byte, relayHeaderSize, relayHeaderSize+len(target)+macSize)
	copy(r, relayMagic[:])
	r[5] = relayVersion
	binary.LittleEndian.PutUint64(r[6:], job)
	binary.LittleEndian.PutUint16(r[14:], uint16(len(target)))
	r = append(r, target...)
	return append(r, mac(secret, []byte(relayReqLabel), challenge, r)...)
}

func relayReply(secret, challenge, req []byte, status byte, msg string) []byte {
	if len(msg) > maxReplyMsg {
		msg = msg[:maxReplyMsg]
	}
	r := make([]byte, 3, 3+len(msg)+macSize)
	r[0] = status
	binary.LittleEndian.PutUint16(r[1:], uint16(len(msg)))
	r = append(r, msg...)
	return append(r, mac(secret, []byte(relayRepLabel), challenge, req, r)...)
}

// hop asks the gateway at the other end of nc, reached as gw, to connect
// it to target. On success nc carries bytes to and from target.
func hop(nc net.Conn, secret []byte, job uint64, gw, target string) error {
	if len(target) > maxTarget {
		return fmt.Errorf("address %q is too long for a gateway", target)
	}
	nc.SetDeadline(time.Now().Add(relayTimeout))
	defer nc.SetDeadline(time.Time{})
	var challenge [nonceSize]byte
	if _, err := io.ReadFull(nc, challenge[:]); err != nil {
		return fmt.Errorf("gateway %s sent no challenge (is it an mpigo gateway?): %w", gw, err)
	}
	// The gateway connects to target before it answers.
	nc.SetDeadline(time.Now().Add(relayTimeout + relayDialTimeout))
	req := relayRequest(secret, challenge[:], job, target)
	if _, err := nc.Write(req); err != nil {
		return fmt.Errorf("gateway %s: %w", gw, err)
	}
	var h [3]byte
	if _, err := io.ReadFull(nc, h[:]); err != nil {
		return fmt.Errorf("gateway %s closed the connection instead of answering (it refuses strangers: does it belong to this job?): %w", gw, err)
	}
	n := int(binary.LittleEndian.Uint16(h[1:]))
	if n > maxReplyMsg {
		return fmt.Errorf("gateway %s answered with a message of %d bytes (at most %d): not an mpigo gateway", gw, n, maxReplyMsg)
	}
	rest := make([]byte, n+macSize)
	if _, err := io.ReadFull(nc, rest); err != nil {
		return fmt.Errorf("gateway %s: truncated answer: %w", gw, err)
	}
	rep := append(h[:], rest[:n]...)
	if !hmac.Equal(rest[n:], mac(secret, []byte(relayRepLabel), challenge[:], req[:len(req)-macSize], rep)) {
		return fmt.Errorf("gateway %s does not know the job's secret", gw)
	}
	if h[0] != 0 {
		return fmt.Errorf("gateway %s could not reach %s: %s", gw, target, rest[:n])
	}
	return nil
}

// dialRoute connects to target through the gateways hops, in order.
func dialRoute(hops []string, target string, secret []byte, job uint64) (net.Conn, error) {
	first := target
	if len(hops) > 0 {
		first = hops[0]
	}
	nc, err := net.DialTimeout("tcp", first, relayDialTimeout)
	if err != nil {
		if len(hops) > 0 {
			return nil, fmt.Errorf("cannot connect to gateway %s: %w", first, err)
		}
		return nil, err
	}
	for i, gw := range hops {
		next := target
		if i+1 < len(hops) {
			next = hops[i+1]
		}
		if err := hop(nc, secret, job, gw, next); err != nil {
			nc.Close()
			return nil, err
		}
	}
	return nc, nil
}

// RelayConfig describes a gateway.
type RelayConfig struct {
	JobID  uint64
	Secret []byte
	// Log, if set, receives a line for each refused or failed connection.
	Log func(string)
}

// Relay is a running gateway: it serves the relay protocol on a listener
// and copies the bytes of every connection it made.
type Relay struct {
	cfg    RelayConfig
	ln     net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
	// Relayed counts the connections relayed so far.
	relayed int
}

// NewRelay starts a gateway that accepts connections on ln.
func NewRelay(cfg RelayConfig, ln net.Listener) *Relay {
	r := &Relay{cfg: cfg, ln: ln, conns: map[net.Conn]bool{}}
	r.wg.Add(1)
	go r.accept()
	return r
}

// Addr returns the gateway's listening address.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Relayed returns the number of connections relayed so far.
func (r *Relay) Relayed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.relayed
}

func (r *Relay) log(format string, args ...any) {
	if r.cfg.Log != nil {
		r.cfg.Log(fmt.Sprintf(format, args...))
	}
}

func (r *Relay) track(nc net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		nc.Close()
		return false
	}
	r.conns[nc] = true
	return true
}

func (r *Relay) untrack(nc net.Conn) {
	r.mu.Lock()
	delete(r.conns, nc)
	r.mu.Unlock()
	nc.Close()
}

func (r *Relay) accept() {
	defer r.wg.Done()
	var pause time.Duration
	for {
		nc, err := r.ln.Accept()
		if err != nil {
			r.mu.Lock()
			closed := r.closed
			r.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			r.log("gateway: accepting a connection: %v (trying again in %v)", err, pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		if !r.track(nc) {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.serve(nc)
		}()
	}
}

// serve runs one hop: it checks the request, connects to its target and
// copies bytes both ways until either side ends.
func (r *Relay) serve(nc net.Conn) {
	defer r.untrack(nc)
	var challenge [nonceSize]byte
	rand.Read(challenge[:])
	nc.SetDeadline(time.Now().Add(relayTimeout))
	if _, err := nc.Write(challenge[:]); err != nil {
		return
	}
	var h [relayHeaderSize]byte
	if _, err := io.ReadFull(nc, h[:]); err != nil {
		r.log("gateway: connection from %s closed before its request: %v", nc.RemoteAddr(), err)
		return
	}
	if string(h[:5]) != string(relayMagic[:]) || h[5] != relayVersion {
		r.log("gateway: connection from %s does not speak the mpigo gateway protocol (refused)", nc.RemoteAddr())
		return
	}
	if id := binary.LittleEndian.Uint64(h[6:]); id != r.cfg.JobID {
		r.log("gateway: connection from %s belongs to job %d, not %d (refused)", nc.RemoteAddr(), id, r.cfg.JobID)
		return
	}
	n := int(binary.LittleEndian.Uint16(h[14:]))
	if n == 0 || n > maxTarget {
		r.log("gateway: connection from %s asks for a target of %d bytes (refused)", nc.RemoteAddr(), n)
		return
	}
	rest := make([]byte, n+macSize)
	if _, err := io.ReadFull(nc, rest); err != nil {
		r.log("gateway: connection from %s: truncated request: %v", nc.RemoteAddr(), err)
		return
	}
	req := append(h[:], rest[:n]...)
	if !hmac.Equal(rest[n:], mac(r.cfg.Secret, []byte(relayReqLabel), challenge[:], req)) {
		r.log("gateway: connection from %s does not know the job's secret (refused)", nc.RemoteAddr())
		return
	}
	target := string(rest[:n])
	out, err := net.DialTimeout("tcp", target, relayDialTimeout)
	if err != nil {
		msg := err.Error()
		r.log("gateway: %s asked for %s: %s", nc.RemoteAddr(), target, msg)
		nc.Write(relayReply(r.cfg.Secret, challenge[:], req, 1, msg))
		return
	}
	if !r.track(out) {
		return
	}
	defer r.untrack(out)
	if tc, ok := out.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if _, err := nc.Write(relayReply(r.cfg.Secret, challenge[:], req, 0, "")); err != nil {
		return
	}
	nc.SetDeadline(time.Time{})
	r.mu.Lock()
	r.relayed++
	r.mu.Unlock()
	splice(nc, out)
}

// splice copies bytes both ways between a and b. A direction that ends
// cleanly passes the end on (half-close) and waits for the other; one that
// fails ends both at once.
func splice(a, b net.Conn) {
	done := make(chan error, 2)
	pipe := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		if err == nil {
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
			} else {
				dst.Close()
			}
		}
		done <- err
	}
	go pipe(a, b)
	go pipe(b, a)
	if err := <-done; err != nil {
		a.Close()
		b.Close()
	}
	<-done
}

// Close stops the gateway: it closes the listener and every connection
// and waits for its goroutines.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	for nc := range r.conns {
		nc.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	return err
}
