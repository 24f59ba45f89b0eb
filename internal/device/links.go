package device

// Links: a rank's connections to the ranks of another job (MPI's dynamic
// processes: a spawn, a port's accept and connect, a join). The two
// groups form a bridge, a job of their own for the transport: the
// accepting group's members are its ranks 0..na-1, the connecting
// group's na..na+nc-1. This rank reaches the other group's members as
// peers appended to its router (transport.Router.AddPeers), so the
// engine, the communicators and the waits treat them as any peer; the
// link translates between those peer numbers and the bridge's ranks, in
// both directions. The bridge's transport is named in routes.go only.

import (
	"sync"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// LinkConfig describes this rank's place in a bridge.
type LinkConfig struct {
	// Me is this rank's rank in the bridge; RemoteBase is the bridge rank
	// of the other group's first member, RemoteN the other group's size.
	Me, RemoteBase, RemoteN int
	// Addrs are the bridge's listen addresses, by bridge rank.
	Addrs []string
	// Secret is the bridge's secret: its connections must prove it.
	Secret []byte
	// JobID names the bridge.
	JobID uint64
	// OnPeerError is told when the connection to a member of the other
	// group fails, by its peer number here.
	OnPeerError func(peer int, err error)
}

// Link is this rank's end of a bridge.
type Link struct {
	// First is the peer number of the other group's first member: member
	// i is peer First+i.
	First int
	N     int

	mu      sync.Mutex
	closers []func() error
	closed  bool
}

// Close cuts the link: sends to its peers fail from then on.
func (l *Link) Close() error {
	l.mu.Lock()
	cs := l.closers
	l.closers, l.closed = nil, true
	l.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
	return nil
}

func (l *Link) addCloser(f func() error) {
	l.mu.Lock()
	l.closers = append(l.closers, f)
	l.mu.Unlock()
}

// relabel reaches one member of the other group through the bridge: it
// gives the frame the member's bridge rank.
type relabel struct {
	to int // the member's bridge rank
	tr *transport.Transport
}

func (r *relabel) Send(f wire.Frame) error {
	f.To = r.to
	return (*r.tr).Send(f)
}

// Name is the transport's name in hang reports and `mpigo info`.
func (r *relabel) Name() string { return "link" }

// addLinkPeers appends the other group's members to d's router and
// returns the link and where the bridge's transport goes once started.
func (d *Device) addLinkPeers(cfg LinkConfig) (*Link, *transport.Transport) {
	tr := new(transport.Transport)
	ts := make([]transport.Transport, cfg.RemoteN)
	for i := range ts {
		ts[i] = &relabel{to: cfg.RemoteBase + i, tr: tr}
	}
	first := d.Tr.AddPeers(ts)
	return &Link{First: first, N: cfg.RemoteN}, tr
}

// linkPeer returns the peer number of bridge rank b, or -1 if b is not a
// member of the other group.
func linkPeer(l *Link, cfg *LinkConfig, b int) int {
	if b < cfg.RemoteBase || b >= cfg.RemoteBase+cfg.RemoteN {
		return -1
	}
	return l.First + b - cfg.RemoteBase
}
