//go:build cgo && mpigo_ofi

package ofi

// Remote memory (transport.RemoteMemory): a window's Put and Get towards
// a peer reached over libfabric go through the provider's own writes and
// reads (fi_writemsg, fi_read) where it has them. A rank registers its
// part of the window for remote reads and writes and hands the peers a
// key: the address they name it by (the part's own where the provider
// wants virtual addresses, else 0), its length and the registration's
// key. On an RDMA device (verbs, EFA, Slingshot's cxi) the peer's CPU
// takes no part; over providers that move data in software (tcp, shm)
// the peer's provider serves them as its endpoint is progressed, by its
// progress goroutine, without the peer's runtime.
//
// A Put of at most copyMax bytes is copied into a buffer of the
// transport's and returns at once (its write under way, up to maxCopied
// of them per remote); a larger one returns when its source may be
// reused. Flush waits for the writes under way. Where the provider orders
// a read after the writes before it to the same target (FI_ORDER_RAW, as
// rxm does over tcp and verbs), Flush is a read of one byte of
// the peer's memory, which completes only after the puts before it are
// there; where it does not, a Put asks for its completion once the bytes
// are in the peer's memory (FI_DELIVERY_COMPLETE) and waits for that,
// and Flush has nothing left to wait for. (Over shm a delivered write
// waits for the target's provider to take it, in its progress, while
// its plain writes and reads are copies of the origin's, through
// cross-memory attach.) A Get returns with the bytes in hand. Every
// operation ends in error when the peer fails meanwhile.
//
// The memory stays pinned and registered while exposed; Close of the
// transport releases what is still exposed.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/fabric"
)

// winKeySize is the length of a window key: address, length, the
// registration's key and the memory's own address (for the alignment of
// atomic operations where the provider names memory by offsets), 8 bytes
// each, little-endian.
const winKeySize = 32

// exposure is this rank's memory exposed to its peers' puts and gets.
type exposure struct {
	t   *Transport
	mr  unsafe.Pointer // its registration (struct fid_mr *); nil once released
	key []byte
	pin runtime.Pinner
}

// winRemote is a peer's exposed memory, as this rank reaches it.
type winRemote struct {
	t          *Transport
	peer       int
	raddr, key uint64
	base       uint64 // the memory's own address in the peer
	n          int
	closed     bool        // guarded by t.wmu
	unflushed  atomic.Bool // a Put since the last Flush (FI_ORDER_RAW)
	// batch counts the copied puts under way since the last Flush, and
	// keeps their first error; nil if none. Guarded by t.wmu.
	batch *regionRead
}

const (
	// copyMax is the largest Put that is copied and not waited for.
	copyMax = 64 << 10
	// maxCopied bounds the copied puts under way towards one remote (16
	// MiB at copyMax): a Put beyond waits for some to complete.
	maxCopied = 256
)

// Writes reports whether the provider took remote writes as well as
// reads: the windows' road needs both.
func (t *Transport) Writes() bool { return t.writes }

// DirectMemory reports whether the provider reaches peer's memory by
// itself (transport.RemoteMemory): an RDMA device's provider (verbs,
// EFA, Slingshot's cxi, PSM, OPX). Not tcp, sockets, udp or net, where a
// write and its completion cost a round trip more than mpigo's own
// message (as over UCX's tcp, docs/fabric.md); nor shm, whose writes wait
// for the target's provider to take them in its progress (54 µs for 8
// bytes between two endpoints of one process against 3.4 for a read,
// which it copies through cross-memory attach).
func (t *Transport) DirectMemory(peer int) bool {
	return peer >= 0 && peer < t.cfg.Size && t.Writes() && directProvider(t.prov)
}

// directProvider reports whether prov ("name/domain", the name one or
// more providers joined by ';') reaches memory without software between.
func directProvider(prov string) bool {
	name, _, _ := strings.Cut(prov, "/")
	for _, p := range strings.Split(name, ";") {
		switch p {
		case "tcp", "sockets", "udp", "net", "shm", "sm2":
			return false
		}
	}
	return name != ""
}

// ExposeMemory registers b for the peers' puts and gets
// (transport.RemoteMemory).
func (t *Transport) ExposeMemory(b []byte) (transport.Exposure, error) {
	if len(b) == 0 {
		return nil, errors.New("ofi: no memory to expose")
	}
	if !t.Writes() {
		return nil, fmt.Errorf("ofi: provider %s has no remote writes", t.prov)
	}
	e := &exposure{t: t}
	e.pin.Pin(&b[0])
	addr := uintptr(unsafe.Pointer(&b[0]))
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.closed {
		e.pin.Unpin()
		return nil, errors.New("ofi: transport closed")
	}
	mr, raddr, key, err := t.registerWindow(addr, len(b))
	if err != nil {
		e.pin.Unpin()
		return nil, fmt.Errorf("ofi: rank %d cannot register %d bytes for its peers: %w", t.cfg.Rank, len(b), err)
	}
	e.mr = mr
	e.key = make([]byte, winKeySize)
	binary.LittleEndian.PutUint64(e.key, raddr)
	binary.LittleEndian.PutUint64(e.key[8:], uint64(len(b)))
	binary.LittleEndian.PutUint64(e.key[16:], key)
	binary.LittleEndian.PutUint64(e.key[24:], uint64(addr))
	if t.exposed == nil {
		t.exposed = map[*exposure]bool{}
	}
	t.exposed[e] = true
	return e, nil
}

// Key returns the key a peer opens the memory with.
func (e *exposure) Key() []byte { return e.key }

// Close ends the registration and unpins the memory.
func (e *exposure) Close() error {
	e.t.wmu.Lock()
	defer e.t.wmu.Unlock()
	e.release()
	return nil
}

// release ends e's registration if the transport still has it; t.wmu is
// held.
func (e *exposure) release() {
	if e.mr == nil {
		return
	}
	unregister(e.mr)
	e.mr = nil
	delete(e.t.exposed, e)
	e.pin.Unpin()
}

// parseWinKey reads a key of ExposeMemory: the address the peer names
// its memory by, its length, the registration's key and the memory's
// own address.
func parseWinKey(key []byte) (raddr uint64, n int, mrkey, base uint64, err error) {
	if len(key) != winKeySize {
		return 0, 0, 0, 0, fmt.Errorf("a key of %d bytes, want %d", len(key), winKeySize)
	}
	raddr = binary.LittleEndian.Uint64(key)
	l := binary.LittleEndian.Uint64(key[8:])
	base = binary.LittleEndian.Uint64(key[24:])
	if l == 0 || l > 1<<62 || raddr+l < raddr || base == 0 || base+l < base {
		return 0, 0, 0, 0, fmt.Errorf("a key for %d bytes at %#x (%#x)", l, raddr, base)
	}
	return raddr, int(l), binary.LittleEndian.Uint64(key[16:]), base, nil
}

// OpenRemote reads the key peer exposed its memory with
// (transport.RemoteMemory).
func (t *Transport) OpenRemote(peer int, key []byte) (transport.Remote, error) {
	if peer < 0 || peer >= t.cfg.Size {
		return nil, fmt.Errorf("ofi: no rank %d", peer)
	}
	if !t.Writes() {
		return nil, fmt.Errorf("ofi: provider %s has no remote writes", t.prov)
	}
	raddr, n, mrkey, base, err := parseWinKey(key)
	if err != nil {
		return nil, fmt.Errorf("ofi: rank %d's memory: %w", peer, err)
	}
	if err := t.eps.Ensure(peer); err != nil {
		return nil, err
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if err := t.check(peer); err != nil {
		return nil, t.lost(peer, err)
	}
	r := &winRemote{t: t, peer: peer, raddr: raddr, key: mrkey, base: base, n: n}
	if t.atomics {
		return atomRemote{r}, nil
	}
	return r, nil
}

// Atomics reports whether the provider applies a window's integer
// operations (transport.Atomics): Config.Atomics asked for them, and the
// provider took them for every operation on integers of 4 and 8 bytes.
func (t *Transport) Atomics() bool { return t.atomics }

// atomRemote is a peer's exposed memory reached through a provider with
// atomic operations (transport.Atomics); a provider without them gives a
// winRemote alone, which a window then does not take for accumulates.
type atomRemote struct{ *winRemote }

// AtomicOK reports whether an integer of size bytes at off of the peer's
// memory can be reached atomically: inside it, at an address that is a
// multiple of size (transport.Atomics).
func (r atomRemote) AtomicOK(off, size int) bool {
	return transport.AlignedInt(r.base, r.n, off, size)
}

// Atomics applies op to the integers of as with the provider's atomic
// operations (fi_fetch_atomic, fi_compare_atomic), all under way before
// it waits for them as a window's reads are waited for (awaitRegion).
// Each fetches the integer's value before, so that its completion means
// it is applied in the peer's memory (transport.Atomics).
func (r atomRemote) Atomics(op transport.AtomicOp, size int, as []transport.Atomic) error {
	const what = "applying an atomic operation in the window memory of"
	if err := transport.CheckAtomics(r, op, size, r.n, as); err != nil {
		return fmt.Errorf("ofi: %s rank %d: %w", what, r.peer, err)
	}
	if len(as) == 0 {
		return nil
	}
	// Per integer its operand, the value compared and its value before,
	// in memory pinned until the provider is done with it.
	buf := make([]uint64, 3*len(as))
	for i, a := range as {
		if op == transport.AtomicCswap {
			fabric.PutInt(&buf[3*i], size, a.V)
			fabric.PutInt(&buf[3*i+1], size, a.Cmp)
		} else {
			fabric.PutInt(&buf[3*i], size, a.V)
		}
	}
	err := r.run(what, unsafe.Pointer(&buf[0]), func(rr *regionRead) error {
		return r.t.postAtomics(rr, op, size, uintptr(unsafe.Pointer(&buf[0])), as, r.raddr, r.key)
	})
	if err != nil {
		return err
	}
	for i := range as {
		as[i].Old = fabric.GetInt(&buf[3*i+2], size)
	}
	return nil
}

var _ transport.Atomics = atomRemote{}

// lost returns err, the reason nothing may go to peer, marked as the
// peer's loss if the transport holds it failed; t.wmu is held.
func (t *Transport) lost(peer int, err error) error {
	if err != nil && !t.closed && t.failed[peer] != nil && !errors.Is(err, transport.ErrPeerLost) {
		return transport.PeerLost(err)
	}
	return err
}

// Len returns the remote memory's length.
func (r *winRemote) Len() int { return r.n }

// Put writes src at off of the peer's memory and returns once the bytes
// are there.
func (r *winRemote) Put(off int, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if r.t.raw {
		r.unflushed.Store(true)
	}
	if len(src) > copyMax || off < 0 || off > r.n || len(src) > r.n-off {
		return r.op(true, off, src)
	}
	t, peer := r.t, r.peer
	one := false // GOMAXPROCS 1 (fabric.OneProc), read if a wait comes
	t.wmu.Lock()
	defer t.wmu.Unlock()
	for i := 0; ; i++ {
		if r.closed {
			return fmt.Errorf("ofi: writing into the window memory of rank %d: its remote memory was closed", peer)
		}
		if err := t.check(peer); err != nil {
			return t.lost(peer, err)
		}
		if r.batch == nil || r.batch.left < maxCopied {
			break
		}
		// Too many under way: progress until some complete.
		t.poll()
		t.wmu.Unlock()
		if i == 0 {
			one = fabric.OneProc()
		}
		yieldIf(one)
		t.wmu.Lock()
	}
	b := r.batch
	if b == nil {
		b = &regionRead{peer: peer, what: "writing into the window memory of"}
		r.batch = b
		t.rreads[b] = true
	}
	err := t.postCopied(b, src, r.raddr+uint64(off), r.key)
	if err != nil && b.err == nil {
		b.err = err
	}
	return t.lost(peer, err)
}

// Get reads the peer's memory at off into dst.
func (r *winRemote) Get(off int, dst []byte) error { return r.op(false, off, dst) }

// Flush returns once every Put before it is in the peer's memory: after
// a read of one byte, ordered after them, where the provider orders
// reads so, and once the copied puts under way have completed (each
// delivered where it does not). It returns the first error of those
// puts.
func (r *winRemote) Flush() error {
	t, peer := r.t, r.peer
	var err error
	if t.raw && r.unflushed.Swap(false) {
		var one [1]byte
		err = r.op(false, 0, one[:])
	}
	t.wmu.Lock()
	b := r.batch
	r.batch = nil
	if b == nil {
		if err == nil {
			err = t.lost(peer, t.check(peer))
		}
		t.wmu.Unlock()
		return err
	}
	t.wmu.Unlock()
	if t.awaitRegion(peer, b) {
		// Every write of b has completed (or the endpoint is closed).
		delete(t.rreads, b)
	}
	if err == nil {
		err = t.lost(peer, b.err)
	}
	t.wmu.Unlock()
	return err
}

// Close waits for the copied puts under way (as Flush does, its error
// dropped: the window closing has flushed what it needed) and forgets
// the key; later operations through r fail.
func (r *winRemote) Close() error {
	r.t.wmu.Lock()
	busy := r.batch != nil && !r.closed
	r.t.wmu.Unlock()
	if busy {
		_ = r.Flush()
	}
	r.t.wmu.Lock()
	r.closed = true
	r.t.wmu.Unlock()
	return nil
}

// op writes b into the peer's memory at off (write) or reads it into b,
// as opRuns does for one run.
func (r *winRemote) op(write bool, off int, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if off < 0 || off > r.n || len(b) > r.n-off {
		return fmt.Errorf("ofi: bytes %d to %d lie outside the %d bytes rank %d exposed", off, off+len(b), r.n, r.peer)
	}
	return r.opRuns(write, []transport.Run{{Off: off, Len: len(b)}}, b)
}

// PutRuns writes src into runs of the peer's memory: each run a copied
// Put where every run is at most copyMax bytes, else all written in place
// and waited for together.
func (r *winRemote) PutRuns(runs []transport.Run, src []byte) error {
	if err := transport.CheckRuns(runs, len(src), r.n); err != nil {
		return fmt.Errorf("ofi: writing into the window memory of rank %d: %w", r.peer, err)
	}
	small := true
	for _, run := range runs {
		small = small && run.Len <= copyMax
	}
	if !small {
		if r.t.raw {
			r.unflushed.Store(true)
		}
		return r.opRuns(true, runs, src)
	}
	pos := 0
	for _, run := range runs {
		if err := r.Put(run.Off, src[pos:pos+run.Len]); err != nil {
			return err
		}
		pos += run.Len
	}
	return nil
}

// GetRuns reads runs of the peer's memory into dst, the reads all under
// way before it waits for them.
func (r *winRemote) GetRuns(runs []transport.Run, dst []byte) error {
	if err := transport.CheckRuns(runs, len(dst), r.n); err != nil {
		return fmt.Errorf("ofi: reading the window memory of rank %d: %w", r.peer, err)
	}
	return r.opRuns(false, runs, dst)
}

// opRuns writes b into runs of the peer's memory (write) or reads them
// into b, in pieces of at most maxRead bytes, and waits for the provider
// to complete them as a read of a region is waited for (awaitRegion:
// keep-alives, and an end when the peer is gone). The runs lie inside
// the peer's memory and add up to len(b).
func (r *winRemote) opRuns(write bool, runs []transport.Run, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	what := "reading the window memory of"
	if write {
		what = "writing into the window memory of"
	}
	return r.run(what, unsafe.Pointer(&b[0]), func(rr *regionRead) error {
		return r.t.postRMA(rr, write, uintptr(unsafe.Pointer(&b[0])), len(b), r.raddr, r.key, runs)
	})
}

// run has post put operations on the peer's memory under way, with t.wmu
// held, under a regionRead that pins the memory at p they read from and
// write into, and waits for them as a region's reads are waited for
// (awaitRegion: keep-alives, and an end when the peer is gone). what
// names the operations in errors (doing).
func (r *winRemote) run(what string, p unsafe.Pointer, post func(rr *regionRead) error) error {
	t, peer := r.t, r.peer
	t.wmu.Lock()
	if r.closed {
		t.wmu.Unlock()
		return fmt.Errorf("ofi: %s rank %d: its remote memory was closed", what, peer)
	}
	if err := t.check(peer); err != nil {
		err = t.lost(peer, err)
		t.wmu.Unlock()
		return err
	}
	rr := &regionRead{peer: peer, what: what}
	rr.pin.Pin(p)
	t.rreads[rr] = true
	if err := post(rr); err != nil && rr.err == nil {
		rr.err = err
	}
	t.wmu.Unlock()
	if !t.awaitRegion(peer, rr) {
		// The provider kept the operations after the peer failed: the
		// memory stays pinned and registered until Close has closed the
		// endpoint.
		err := t.lost(peer, rr.err)
		t.wmu.Unlock()
		return err
	}
	// t.wmu is held, and nothing of the provider's touches the memory
	// any more.
	t.endRMA(rr)
	err := t.lost(peer, rr.err)
	t.wmu.Unlock()
	return err
}
