package transport

import (
	"errors"
	"fmt"
)

// One-sided communication (windows) needs to know how an origin can reach
// a target's memory. These optional interfaces say it; a transport that
// implements neither is reached by messages, which every transport
// carries (the runtime's fallback).

// SameProcess is implemented by transports whose peers are goroutines of
// the caller's process: an origin may address their memory directly.
type SameProcess interface {
	SameProcess(peer int) bool
}

// Segments is implemented by transports whose peers can map shared memory
// segments that a rank creates (processes on one node).
type Segments interface {
	// SegmentName is the file of rank's segment called suffix.
	SegmentName(rank int, suffix string) string
}

// RemoteMemory is implemented by transports that write and read a peer's
// memory without the peer's runtime taking part (RDMA where the device
// has it; UCX emulates it over its other transports, in its own progress
// of the peer's worker): a window's Put and Get towards such a peer go
// through it, accumulates on integers too where its Remote has Atomics,
// and the rest (other accumulates, locks, epochs) by messages.
type RemoteMemory interface {
	// DirectMemory reports whether the transport reaches peer's memory
	// without a software protocol over a socket in between (an RDMA
	// device, or shared memory): only then do puts and gets beat the
	// runtime's messages, which reach the peer's runtime over the same
	// socket in fewer steps.
	DirectMemory(peer int) bool
	// ExposeMemory lets the peers write and read b until the Exposure is
	// closed; b must not move meanwhile (the transport pins it).
	ExposeMemory(b []byte) (Exposure, error)
	// OpenRemote returns the memory peer exposed under key (its
	// Exposure's Key, which the caller carried to this rank).
	OpenRemote(peer int, key []byte) (Remote, error)
}

// Exposure is a rank's memory exposed to its peers (RemoteMemory).
type Exposure interface {
	// Key is what a peer needs to reach the memory: bytes to carry to
	// it.
	Key() []byte
	// Close ends the exposure; no peer may reach the memory afterwards.
	Close() error
}

// Remote is a peer's exposed memory, as an origin reaches it.
type Remote interface {
	// Len is the exposed memory's length in bytes.
	Len() int
	// Put writes src at byte off of the peer's memory and returns when
	// src may be reused; the bytes are in the peer's memory after Flush.
	Put(off int, src []byte) error
	// Get reads len(dst) bytes at byte off of the peer's memory into dst
	// and returns when dst holds them.
	Get(off int, dst []byte) error
	// PutRuns writes src into runs of the peer's memory, in order (src
	// holds their bytes one after the other), as Put does each.
	PutRuns(runs []Run, src []byte) error
	// GetRuns reads runs of the peer's memory, in order, into dst, one
	// after the other, and returns when dst holds them.
	GetRuns(runs []Run, dst []byte) error
	// Flush returns when every Put before it is complete in the peer's
	// memory.
	Flush() error
	// Close releases what the transport holds for the remote memory.
	Close() error
}

// Atomics is implemented by a Remote whose transport applies integer
// operations atomically in the peer's memory (UCX's atomics: the device's
// own on an RDMA device, else UCX's in the peer's worker progress). An
// operation through it is atomic with respect to the others through the
// same transport on the same memory, not with respect to the peer's own
// loads and stores: every origin of a window, the target included, must
// use it for an element if any does.
type Atomics interface {
	// AtomicOK reports whether an integer of size bytes (4 or 8) at
	// byte off of the peer's memory can be reached atomically: it lies
	// inside, at an address that is a multiple of size.
	AtomicOK(off, size int) bool
	// Atomics applies op to each integer of size bytes at as[i].Off,
	// with operand as[i].V (for AtomicCswap: the new value, replacing
	// the old one if it equals as[i].Cmp), all under way at once, and
	// returns when every one is applied in the peer's memory, as[i].Old
	// holding the integer's value before. Integers are in the machine's
	// byte order, in the low size bytes of the uint64s.
	Atomics(op AtomicOp, size int, as []Atomic) error
}

// AtomicOp is an integer operation of Atomics.
type AtomicOp uint8

// The integer operations of Atomics: two's complement addition, bitwise
// and, or and exclusive or, swap, and compare-and-swap.
const (
	AtomicAdd AtomicOp = iota
	AtomicAnd
	AtomicOr
	AtomicXor
	AtomicSwap
	AtomicCswap
)

// Atomic is one integer of an Atomics call.
type Atomic struct {
	Off    int    // byte offset in the peer's memory
	V, Cmp uint64 // operand; for AtomicCswap the new value and the one compared
	Old    uint64 // the integer's value before
}

// AlignedInt reports whether an integer of size bytes (4 or 8) at byte
// off of remote memory of n bytes at address base lies inside it, at an
// address that is a multiple of size: what Atomics.AtomicOK asks.
func AlignedInt(base uint64, n, off, size int) bool {
	return (size == 4 || size == 8) && off >= 0 && off <= n-size && (base+uint64(off))%uint64(size) == 0
}

// CheckAtomics says why an Atomics call on a of op on the integers of
// size bytes of as cannot be made on remote memory of n bytes: an
// unknown operation, or an integer a cannot reach (AtomicOK).
func CheckAtomics(a Atomics, op AtomicOp, size, n int, as []Atomic) error {
	if op > AtomicCswap {
		return fmt.Errorf("unknown operation %d", op)
	}
	for _, x := range as {
		if !a.AtomicOK(x.Off, size) {
			return fmt.Errorf("%d bytes at %d are not an aligned integer of the %d bytes it exposed", size, x.Off, n)
		}
	}
	return nil
}

// Run is a run of bytes of a peer's exposed memory: Len bytes at Off.
type Run struct{ Off, Len int }

// CheckRuns says why runs cannot move n bytes to or from remote memory of
// size bytes: a run that lies outside it, or lengths that do not add up
// to n.
func CheckRuns(runs []Run, n, size int) error {
	total := 0
	for _, r := range runs {
		if r.Off < 0 || r.Len < 0 || r.Off > size || r.Len > size-r.Off {
			return fmt.Errorf("bytes %d to %d lie outside the %d bytes exposed", r.Off, r.Off+r.Len, size)
		}
		total += r.Len
		if total > n {
			break
		}
	}
	if total != n {
		return fmt.Errorf("runs of %d bytes or more for a buffer of %d", total, n)
	}
	return nil
}

// ErrPeerLost is in the chain of a transport's error for an operation
// that failed because its peer is gone (PeerLost).
var ErrPeerLost = errors.New("peer lost")

// PeerLost returns err, a transport's error for an operation that failed
// because its peer is gone, marked so that errors.Is(e, ErrPeerLost)
// holds; its text is err's.
func PeerLost(err error) error { return peerLost{err} }

type peerLost struct{ error }

func (e peerLost) Unwrap() []error { return []error{e.error, ErrPeerLost} }

// RemoteMemoryFor returns the transport to peer if it reaches the peer's
// memory (RemoteMemory), else nil.
func (r *Router) RemoteMemoryFor(peer int) RemoteMemory {
	if peer < 0 || peer >= len(r.byPeer) {
		return nil
	}
	m, _ := r.byPeer[peer].(RemoteMemory)
	return m
}

// SameProcess reports whether the transport to peer says the peer runs in
// this process.
func (r *Router) SameProcess(peer int) bool {
	if peer < 0 || peer >= len(r.byPeer) {
		return false
	}
	s, ok := r.byPeer[peer].(SameProcess)
	return ok && s.SameProcess(peer)
}

// Segments returns the transport to peer if it shares memory segments,
// else nil.
func (r *Router) Segments(peer int) Segments {
	if peer < 0 || peer >= len(r.byPeer) {
		return nil
	}
	s, _ := r.byPeer[peer].(Segments)
	return s
}
