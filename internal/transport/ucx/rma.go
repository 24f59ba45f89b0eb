//go:build cgo && mpigo_ucx

package ucx

// Remote memory (transport.RemoteMemory): a window's Put and Get towards
// a peer reached over UCX go through UCX's own puts and gets. A rank
// registers its part of the window with its context (ucp_mem_map) and
// hands the peers a key: the part's address and length, then UCX's packed
// remote key; an origin unpacks it through its endpoint to the peer and
// puts and gets with it. On an RDMA device the peer's CPU takes no part;
// over UCX's tcp or shared-memory transports UCX serves them in the
// peer's worker progress (its progress goroutine), without the peer's
// runtime. A put returns when its buffer may be reused; Flush (a flush of
// the endpoint) when every put before it is in the peer's memory.
//
// The memory stays pinned while exposed. Close of the transport releases
// what is still registered and unpacked; an exposure or remote closed
// after it does nothing.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/fabric"
)

type exposure struct {
	t    *Transport
	memh uintptr // 0 once released
	key  []byte
	pin  runtime.Pinner
}

// DirectMemory reports whether UCX's lanes for puts and gets to peer are
// other than tcp (transport.RemoteMemory): over tcp, UCX's put and flush
// take a round trip more than mpigo's own messages (docs/fabric.md). The
// context's transports answer for every peer where they can, without a
// connection (memoryReach): no RDMA device and tcp among them, never;
// shared memory alone, always; else the lanes of the endpoint to peer
// say, once it is made (as Open MPI's windows over UCX connect to every
// member).
func (t *Transport) DirectMemory(peer int) bool {
	switch {
	case peer < 0 || peer >= t.cfg.Size || t.reach == reachNone:
		return false
	case t.reach == reachAll:
		return true
	case t.eps.Ensure(peer) != nil:
		return false
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.closed {
		return false
	}
	if t.direct == nil {
		t.direct = make([]int8, t.cfg.Size)
	}
	if t.direct[peer] == 0 {
		t.direct[peer] = -1
		if directRMA(rmaTransports(t.epInfo(peer))) {
			t.direct[peer] = 1
		}
	}
	return t.direct[peer] > 0
}

// ExposeMemory registers b for the peers' puts and gets
// (transport.RemoteMemory).
func (t *Transport) ExposeMemory(b []byte) (transport.Exposure, error) {
	if len(b) == 0 {
		return nil, errors.New("ucx: no memory to expose")
	}
	e := &exposure{t: t}
	e.pin.Pin(&b[0])
	addr := uintptr(unsafe.Pointer(&b[0]))
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.closed {
		e.pin.Unpin()
		return nil, errors.New("ucx: transport closed")
	}
	memh, packed, err := t.memMap(addr, len(b))
	if err != nil {
		e.pin.Unpin()
		return nil, fmt.Errorf("ucx: rank %d cannot register %d bytes for its peers: %w", t.cfg.Rank, len(b), err)
	}
	e.memh = memh
	e.key = make([]byte, keyHead, keyHead+len(packed))
	binary.LittleEndian.PutUint64(e.key, uint64(addr))
	binary.LittleEndian.PutUint64(e.key[8:], uint64(len(b)))
	e.key = append(e.key, packed...)
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
	if e.memh == 0 {
		return
	}
	if !e.t.closed {
		e.t.memUnmap(e.memh)
	}
	e.memh = 0
	delete(e.t.exposed, e)
	e.pin.Unpin()
}

type remote struct {
	t    *Transport
	peer int
	addr uint64
	n    int
	rkey uintptr // 0 once released
}

// OpenRemote unpacks the key peer exposed its memory with
// (transport.RemoteMemory).
func (t *Transport) OpenRemote(peer int, key []byte) (transport.Remote, error) {
	if peer < 0 || peer >= t.cfg.Size {
		return nil, fmt.Errorf("ucx: no rank %d", peer)
	}
	addr, n, packed, err := ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("ucx: rank %d's memory: %w", peer, err)
	}
	if err := t.eps.Ensure(peer); err != nil {
		return nil, err
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.closed {
		return nil, errors.New("ucx: transport closed")
	}
	if err := t.failed[peer]; err != nil {
		return nil, err
	}
	rkey, err := t.unpackKey(peer, packed)
	if err != nil {
		return nil, fmt.Errorf("ucx: rank %d cannot use the remote key of rank %d: %w", t.cfg.Rank, peer, err)
	}
	r := &remote{t: t, peer: peer, addr: addr, n: n, rkey: rkey}
	if t.remotes == nil {
		t.remotes = map[*remote]bool{}
	}
	t.remotes[r] = true
	return r, nil
}

// Len returns the remote memory's length.
func (r *remote) Len() int { return r.n }

// Put writes src at off of the peer's memory.
func (r *remote) Put(off int, src []byte) error { return r.op(0, "writing into", off, src) }

// Get reads the peer's memory at off into dst.
func (r *remote) Get(off int, dst []byte) error { return r.op(1, "reading from", off, dst) }

// PutRuns writes src into runs of the peer's memory, its puts all under
// way before it waits for them.
func (r *remote) PutRuns(runs []transport.Run, src []byte) error {
	return r.runs(0, "writing into", runs, src)
}

// GetRuns reads runs of the peer's memory into dst, its gets all under
// way before it waits for them.
func (r *remote) GetRuns(runs []transport.Run, dst []byte) error {
	return r.runs(1, "reading from", runs, dst)
}

func (r *remote) runs(kind int, what string, runs []transport.Run, b []byte) error {
	if err := transport.CheckRuns(runs, len(b), r.n); err != nil {
		return fmt.Errorf("ucx: %s rank %d: %w", what, r.peer, err)
	}
	if len(b) == 0 {
		return nil
	}
	h := new(pinHold)
	h.pin.Pin(&b[0])
	base := uintptr(unsafe.Pointer(&b[0]))
	t := r.t
	t.wmu.Lock()
	if err := t.rmaCheck(r.peer, kind, what, r.rkey); err != nil {
		t.wmu.Unlock()
		h.pin.Unpin()
		return err
	}
	var reqs []*sendReq
	var err error
	pos := 0
	for _, run := range runs {
		if run.Len == 0 {
			continue
		}
		var s *sendReq
		s, err = t.rmaPost(r.peer, kind, what, base+uintptr(pos), run.Len, r.addr+uint64(run.Off), r.rkey)
		if err != nil {
			break
		}
		pos += run.Len
		if s != nil {
			reqs = append(reqs, s)
		}
	}
	return t.awaitPosted(h, reqs, err)
}

// awaitPosted releases t.wmu, which the caller holds, and waits for the
// operations reqs it posted (their memory pinned by h), and returns the
// first error of err and theirs.
func (t *Transport) awaitPosted(h *pinHold, reqs []*sendReq, err error) error {
	t.wmu.Unlock()
	// No nudge of the progress goroutine: the waits poll the worker
	// themselves (awaitSend).
	for _, s := range reqs {
		if e := t.awaitSend(s); e != nil && err == nil {
			err = e
		}
	}
	t.settle(h, reqs...)
	return err
}

// Flush waits until the puts before it are in the peer's memory.
func (r *remote) Flush() error { return r.t.rmaWait(r.peer, 2, "flushing to", nil, 0, 0, 0, 0) }

func (r *remote) op(kind int, what string, off int, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if off < 0 || off > r.n || len(b) > r.n-off {
		return fmt.Errorf("ucx: bytes %d to %d lie outside the %d bytes rank %d exposed", off, off+len(b), r.n, r.peer)
	}
	h := new(pinHold)
	h.pin.Pin(&b[0])
	return r.t.rmaWait(r.peer, kind, what, h, uintptr(unsafe.Pointer(&b[0])), len(b), r.addr+uint64(off), r.rkey)
}

// Close destroys the unpacked key.
func (r *remote) Close() error {
	r.t.wmu.Lock()
	defer r.t.wmu.Unlock()
	r.release()
	return nil
}

// release destroys r's key if the transport still has it; t.wmu is held.
func (r *remote) release() {
	if r.rkey == 0 {
		return
	}
	if !r.t.closed {
		r.t.freeKey(r.rkey)
	}
	r.rkey = 0
	delete(r.t.remotes, r)
}

// rmaWait runs a put, get or flush (rma) towards peer and waits for it
// as a send is waited for: it ends in error if the peer fails or the
// transport closes meanwhile. h pins the origin's memory at p (nil for a
// flush), and is unpinned when UCX is done with it (settle).
func (t *Transport) rmaWait(peer, op int, what string, h *pinHold, p uintptr, n int, raddr uint64, rkey uintptr) error {
	t.wmu.Lock()
	err := t.rmaCheck(peer, op, what, rkey)
	var s *sendReq
	if err == nil {
		s, err = t.rmaPost(peer, op, what, p, n, raddr, rkey)
	}
	t.wmu.Unlock()
	if err == nil && s != nil {
		err = t.awaitSend(s) // it polls the worker itself: no nudge
	}
	if h != nil {
		t.settle(h, s)
	}
	return err
}

// rmaCheck says why no put, get (with rkey) or flush (rma) may go to peer
// now; t.wmu is held.
func (t *Transport) rmaCheck(peer, op int, what string, rkey uintptr) error {
	if t.closed {
		return errors.New("ucx: transport closed")
	}
	if err := t.failed[peer]; err != nil {
		return err
	}
	if op != 2 && rkey == 0 {
		return fmt.Errorf("ucx: %s rank %d: its remote memory was closed", what, peer)
	}
	return nil
}

// rmaPost starts a put, get or flush (rma) towards peer and returns it to
// wait for (awaitSend), or nil if it completed at once; t.wmu is held.
func (t *Transport) rmaPost(peer, op int, what string, p uintptr, n int, raddr uint64, rkey uintptr) (*sendReq, error) {
	t.flushPeer(peer) // frames sent before go before
	req, err := t.rma(peer, op, p, n, raddr, rkey)
	if err != nil {
		return nil, fmt.Errorf("ucx: %s rank %d: %w", what, peer, err)
	}
	if req == nil {
		return nil, nil
	}
	return t.track(req, peer, what), nil
}

// track returns a one-sided operation's request, under way towards peer,
// to wait for as a send is (awaitSend); t.wmu is held.
func (t *Transport) track(req unsafe.Pointer, peer int, what string) *sendReq {
	s := &sendReq{req: req, peer: peer, done: make(chan error, 1), what: what}
	t.sends = append(t.sends, s)
	return s
}

// releaseMemory ends every exposure and destroys every unpacked key
// before the endpoints and the context go (Close, which has marked t
// closed already); t.wmu is held.
func (t *Transport) releaseMemory() {
	for r := range t.remotes {
		t.freeKey(r.rkey)
		r.rkey = 0
	}
	clear(t.remotes)
	for e := range t.exposed {
		t.memUnmap(e.memh)
		e.memh = 0
		e.pin.Unpin()
	}
	clear(t.exposed)
}

// AtomicOK reports whether an integer of size bytes at off of the peer's
// memory can be reached atomically: inside it, at an address that is a
// multiple of size (transport.Atomics).
func (r *remote) AtomicOK(off, size int) bool {
	return transport.AlignedInt(r.addr, r.n, off, size)
}

// Atomics applies op to the integers of as through UCX's atomic
// operations, all under way before it waits for them (transport.Atomics).
// Each fetches the integer's value before, so that its completion means
// it is applied in the peer's memory.
func (r *remote) Atomics(op transport.AtomicOp, size int, as []transport.Atomic) error {
	const what = "applying an atomic operation in"
	if err := transport.CheckAtomics(r, op, size, r.n, as); err != nil {
		return fmt.Errorf("ucx: %s rank %d: %w", what, r.peer, err)
	}
	if len(as) == 0 {
		return nil
	}
	if r.peer == r.t.cfg.Rank && (op == transport.AtomicAnd || op == transport.AtomicOr || op == transport.AtomicXor) {
		return r.bitwiseByCswap(op, size, as)
	}
	// Per integer its operand, then its result, in memory pinned until
	// UCX is done. A compare-and-swap's operand is the value compared,
	// and the new value is in the result's place on entry (UCX's
	// UCP_ATOMIC_OP_CSWAP).
	buf := make([]uint64, 2*len(as))
	for i, a := range as {
		if op == transport.AtomicCswap {
			fabric.PutInt(&buf[2*i], size, a.Cmp)
			fabric.PutInt(&buf[2*i+1], size, a.V)
		} else {
			fabric.PutInt(&buf[2*i], size, a.V)
		}
	}
	h := new(pinHold)
	h.pin.Pin(&buf[0])
	base := uintptr(unsafe.Pointer(&buf[0]))
	t := r.t
	t.wmu.Lock()
	if err := t.rmaCheck(r.peer, 0, what, r.rkey); err != nil {
		t.wmu.Unlock()
		h.pin.Unpin()
		return err
	}
	t.flushPeer(r.peer) // frames sent before go before
	var reqs []*sendReq
	var err error
	post := as // one request each
	if len(as) > 1 {
		// One crossing into C for them all, released at once, and a
		// flush of the endpoint to wait for instead of a request each.
		raddrs := make([]uint64, len(as))
		for i, a := range as {
			raddrs[i] = r.addr + uint64(a.Off)
		}
		var req unsafe.Pointer
		req, err = t.amoN(r.peer, op, size, base, raddrs, r.rkey)
		if err != nil {
			err = fmt.Errorf("ucx: %s rank %d: %w", what, r.peer, err)
		}
		if req != nil {
			reqs = append(reqs, t.track(req, r.peer, what))
		}
		post = nil
	}
	for i, a := range post {
		var req unsafe.Pointer
		req, err = t.amo(r.peer, op, size, base+uintptr(16*i), base+uintptr(16*i+8), r.addr+uint64(a.Off), r.rkey)
		if err != nil {
			err = fmt.Errorf("ucx: %s rank %d: %w", what, r.peer, err)
			break
		}
		if req != nil {
			reqs = append(reqs, t.track(req, r.peer, what))
		}
	}
	if err := t.awaitPosted(h, reqs, err); err != nil {
		return err
	}
	for i := range as {
		as[i].Old = fabric.GetInt(&buf[2*i+1], size)
	}
	return nil
}

// bitwiseByCswap applies a bitwise and, or or exclusive or to the
// integers of as by compare-and-swap until each holds: UCX 1.13's self
// transport (a rank's endpoint to itself over shared memory) applies
// these operations with the integer's own value as the operand (found by
// memtest.ExerciseAtomics: an or of 0x3c into 0xf0 left 0xf0). Its add
// and compare-and-swap are right, and atomic with the peers' operations.
func (r *remote) bitwiseByCswap(op transport.AtomicOp, size int, as []transport.Atomic) error {
	cur := make([]transport.Atomic, len(as))
	for i, a := range as {
		cur[i] = transport.Atomic{Off: a.Off} // adds 0: reads
	}
	if err := r.Atomics(transport.AtomicAdd, size, cur); err != nil {
		return err
	}
	mask := ^uint64(0)
	if size == 4 {
		mask = 1<<32 - 1
	}
	left := make([]int, len(as)) // the integers not applied yet
	for i := range left {
		left[i] = i
	}
	for len(left) > 0 {
		try := make([]transport.Atomic, len(left))
		for j, i := range left {
			old := cur[i].Old
			v := old
			switch op {
			case transport.AtomicAnd:
				v &= as[i].V
			case transport.AtomicOr:
				v |= as[i].V
			default:
				v ^= as[i].V
			}
			try[j] = transport.Atomic{Off: as[i].Off, Cmp: old, V: v & mask}
		}
		if err := r.Atomics(transport.AtomicCswap, size, try); err != nil {
			return err
		}
		next := left[:0]
		for j, i := range left {
			if try[j].Old == try[j].Cmp {
				as[i].Old = try[j].Cmp
				continue
			}
			cur[i].Old = try[j].Old
			next = append(next, i)
		}
		left = next
	}
	return nil
}

var _ transport.Atomics = (*remote)(nil)
