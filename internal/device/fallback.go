package device

// The fabric's fallback to tcp, per peer: when the job's fabric library
// was chosen by default (MPIGO_FABRIC unset), a process that cannot start
// it (no device opens on its node, the library is broken there) does not
// fail the job. It warns, publishes noFabric in place of its ranks'
// fabric addresses, and reaches every other node over tcp; the other
// processes read that from the store the first time they talk to one of
// its ranks and reach it over tcp too. Both sides of every pair so take
// the same road, and the pairs whose processes both have the fabric keep
// it. A fabric the user named (MPIGO_FABRIC=ucx) never falls back: a
// process that cannot start it fails the job's start, naming itself.

import (
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// noFabric is what a process that could not start the job's fabric
// publishes in place of each of its ranks' addresses (never valid hex).
const noFabric = "none"

// What a process knows of a peer's fabric address (fabricAddrs.state).
const (
	fabUnknown uint32 = iota // not looked up yet
	fabHas                   // published an address
	fabNone                  // published noFabric
)

// fabricAddrs reads the peers' fabric addresses from the job's store,
// once each, for all the ranks of a process: the fabric transports make
// their endpoints from them, and fabricOrTCP learns from them which
// peers it reaches over tcp.
type fabricAddrs struct {
	kv   boot.KV
	key  func(rank int) string
	lib  string          // "UCX" or "libfabric", for messages
	note func(peer int)  // called once per peer found without the fabric (verbose), or nil
	mu   sync.Mutex      // held across a lookup: one store call per peer
	st   []atomic.Uint32 // per peer: fabUnknown, fabHas or fabNone
	addr [][]byte        // per peer, once st says fabHas
}

func newFabricAddrs(kv boot.KV, n int, lib string, key func(int) string) *fabricAddrs {
	return &fabricAddrs{kv: kv, key: key, lib: lib, st: make([]atomic.Uint32, n), addr: make([][]byte, n)}
}

// lookup returns peer's fabric address, or none if its process published
// that it has no fabric, or the store's error (not remembered: a later
// lookup asks again).
func (a *fabricAddrs) lookup(peer int) (addr []byte, none bool, err error) {
	if peer < 0 || peer >= len(a.st) {
		return nil, false, fmt.Errorf("no rank %d in a job of %d", peer, len(a.st))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch a.st[peer].Load() {
	case fabHas:
		return a.addr[peer], false, nil
	case fabNone:
		return nil, true, nil
	}
	v, err := a.kv.Get(a.key(peer))
	if err != nil {
		return nil, false, err
	}
	if v == noFabric {
		a.st[peer].Store(fabNone)
		if a.note != nil {
			a.note(peer)
		}
		return nil, true, nil
	}
	b, err := hex.DecodeString(v)
	if err != nil || len(b) == 0 {
		return nil, false, fmt.Errorf("the store holds no valid %s address for rank %d (%.40q)", a.lib, peer, v)
	}
	a.addr[peer] = b
	a.st[peer].Store(fabHas)
	return b, false, nil
}

// address is the fabric transports' lookup of a peer's address (their
// Config.Addrs).
func (a *fabricAddrs) address(peer int) ([]byte, error) {
	b, none, err := a.lookup(peer)
	if none {
		return nil, fmt.Errorf("rank %d has no %s address: its process could not start %s (its warning says why)", peer, a.lib, a.lib)
	}
	return b, err
}

// known returns what this process knows of peer's fabric, without asking
// the store: fabUnknown, fabHas or fabNone.
func (a *fabricAddrs) known(peer int) uint32 {
	if peer < 0 || peer >= len(a.st) {
		return fabUnknown
	}
	return a.st[peer].Load()
}

// reaches reports whether peer is reached over the fabric: every peer
// but those whose process published noFabric. A store that cannot answer
// leaves the peer to the fabric, whose endpoint then fails with the
// store's error, naming the peer.
func (a *fabricAddrs) reaches(peer int) bool {
	if peer >= 0 && peer < len(a.st) {
		switch a.st[peer].Load() {
		case fabHas:
			return true
		case fabNone:
			return false
		}
	}
	_, none, err := a.lookup(peer)
	return err != nil || !none
}

// fabricOrTCP is a rank's route to the ranks of other nodes when the
// fabric was chosen by default: the fabric, except to the ranks whose
// process could not start it, which it reaches over tcp as they reach it.
// It offers the fabric's single copy (transport.RegionReader and
// RegionStarter) to the peers it reaches over the fabric, and none to the
// others, whose large messages then stream; Data frames go in the
// fabric's chunks to both.
type fabricOrTCP struct {
	fab, tcp transport.Transport
	rr       transport.RegionReader  // fab's, or nil
	rs       transport.RegionStarter // fab's, or nil
	rm       transport.RemoteMemory  // fab's, or nil
	addrs    *fabricAddrs
}

func newFabricOrTCP(fab, tcp transport.Transport, addrs *fabricAddrs) *fabricOrTCP {
	t := &fabricOrTCP{fab: fab, tcp: tcp, addrs: addrs}
	t.rr, _ = fab.(transport.RegionReader)
	t.rs, _ = fab.(transport.RegionStarter)
	t.rm, _ = fab.(transport.RemoteMemory)
	return t
}

// errNoRemote is the error of remote memory towards a peer reached over
// tcp (its windows' operations then travel by message).
var errNoRemote = errors.New("no remote memory access over tcp")

// DirectMemory reports whether the fabric reaches peer's memory directly
// (transport.RemoteMemory); never a peer reached over tcp.
func (t *fabricOrTCP) DirectMemory(peer int) bool {
	return t.rm != nil && t.addrs.reaches(peer) && t.rm.DirectMemory(peer)
}

// ExposeMemory exposes b through the fabric (transport.RemoteMemory).
func (t *fabricOrTCP) ExposeMemory(b []byte) (transport.Exposure, error) {
	if t.rm == nil {
		return nil, errNoRemote
	}
	return t.rm.ExposeMemory(b)
}

// OpenRemote opens the memory peer exposed through the fabric, if it
// reaches peer.
func (t *fabricOrTCP) OpenRemote(peer int, key []byte) (transport.Remote, error) {
	if t.rm == nil || !t.addrs.reaches(peer) {
		return nil, errNoRemote
	}
	return t.rm.OpenRemote(peer, key)
}

// LosePeer tells the fabric, or tcp, whichever reaches peer, that it is
// gone (transport.PeerLoser).
func (t *fabricOrTCP) LosePeer(peer int, err error) {
	tr := t.tcp
	if t.addrs.reaches(peer) {
		tr = t.fab
	}
	if l, ok := tr.(transport.PeerLoser); ok {
		l.LosePeer(peer, err)
	}
}

// errNoRegion is the error of a single-copy read from a peer reached over
// tcp (the engine then streams the message).
var errNoRegion = errors.New("no single copy over tcp")

// Send sends f over the fabric, or over tcp to a peer without it.
func (t *fabricOrTCP) Send(f wire.Frame) error {
	if t.addrs.reaches(f.To) {
		return t.fab.Send(f)
	}
	return t.tcp.Send(f)
}

// Name names the fabric: the road to most peers (a verbose job says
// which peers it reaches over tcp instead).
func (t *fabricOrTCP) Name() string {
	if n, ok := t.fab.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", t.fab)
}

// ChunkSize is the fabric's chunk of a rendezvous's Data frames.
func (t *fabricOrTCP) ChunkSize() int {
	if c, ok := t.fab.(transport.Chunker); ok {
		return c.ChunkSize()
	}
	return engine.DefaultConfig().ChunkSize
}

// ExportRegion exports b to peer through the fabric, if it reaches peer.
// It runs under the engine's lock, so it never asks the store: to a peer
// not talked to yet it exports nothing (the message streams), since a
// peer reached over tcp could never read it, nor release it.
func (t *fabricOrTCP) ExportRegion(peer int, b []byte) (uint64, bool) {
	if t.rr == nil || t.addrs.known(peer) != fabHas {
		return 0, false
	}
	return t.rr.ExportRegion(peer, b)
}

// ReadRegion reads a region peer exported through the fabric. Only a
// peer with the fabric exports: no need to ask the store.
func (t *fabricOrTCP) ReadRegion(peer int, token uint64, off int, dst []byte) error {
	if t.rr == nil || t.addrs.known(peer) == fabNone {
		return errNoRegion
	}
	return t.rr.ReadRegion(peer, token, off, dst)
}

// Exports reports whether peer reads this rank's memory through the
// fabric; false until this rank has talked to peer.
func (t *fabricOrTCP) Exports(peer int) bool {
	return t.rr != nil && t.addrs.known(peer) == fabHas && t.rr.Exports(peer)
}

// StartRegion starts a read of a region peer exported through the
// fabric.
func (t *fabricOrTCP) StartRegion(peer int, token uint64, off int, dst []byte, done func(error)) error {
	if t.rs == nil || t.addrs.known(peer) == fabNone {
		return errNoRegion
	}
	return t.rs.StartRegion(peer, token, off, dst, done)
}
