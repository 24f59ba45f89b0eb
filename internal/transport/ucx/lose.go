//go:build cgo && mpigo_ucx

package ucx

// A peer lost while operations to it are under way (transport.PeerLoser).
//
// Over UCX's tcp the endpoint's error handler tells the transport of a
// dead peer, and UCX ends the operations under way with an error. Over
// its shared memory (posix, sysv, cma) UCX 1.13 makes endpoints without
// failure detection and says nothing: a send, or a window's put or get
// (served by the target's progress there), waits for ever. The runtime
// learns of the loss another way (the launcher, another transport, the
// fault-tolerance agreement) and tells the transport through LosePeer;
// what waits on the peer then ends with the loss.
//
// UCX itself cannot be told to give up such an operation (a forced close
// of the endpoint is refused without failure detection), and it may
// still hold the memory it was given: the payload of a send, the
// destination of a get. So the operation is abandoned, not ended: its
// waiter returns, and its request, C memory and pin stay with the
// transport (lost) until UCX ends it after all, or until Close destroys
// the worker. A get's destination stays pinned, and so alive, meanwhile:
// a dead peer writes nothing into it, and if UCX ever did, it would write
// into memory the program still owns, never into freed memory.

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"github.com/mpigo/mpi/internal/transport"
)

// A pinHold is the pin of memory that one or more requests use. The
// caller that pinned it unpins it after its wait (settle), unless a
// request was abandoned under way; then the last abandoned request to end
// unpins it.
type pinHold struct {
	pin   runtime.Pinner
	users int // abandoned requests still under way
}

// LosePeer ends what waits on peer here, as the job learnt that it is
// lost (transport.PeerLoser): sends and one-sided operations to it return
// an error marked transport.ErrPeerLost, pulls from it end, its regions
// are released, and later operations to it fail at once. It reports
// nothing back (Config.OnPeerError): the job knows already.
func (t *Transport) LosePeer(peer int, err error) {
	if peer < 0 || peer >= t.cfg.Size {
		return
	}
	t.wmu.Lock()
	if t.closed || t.failed[peer] != nil {
		t.wmu.Unlock()
		return
	}
	err = transport.PeerLost(fmt.Errorf("ucx: rank %d lost rank %d: %w", t.cfg.Rank, peer, err))
	t.failed[peer] = err
	if t.lost == nil {
		t.lost = make([]error, t.cfg.Size)
	}
	t.lost[peer] = err
	for i := 0; i < len(t.sends); i++ {
		s := t.sends[i]
		if s.peer != peer {
			continue
		}
		// A request cancelled over an endpoint with failure detection
		// ends at the next progress; the others may never end.
		s.cancel(t)
		s.lost = true
		s.done <- err
		t.abandoned = append(t.abandoned, s)
		t.sends = slices.Delete(t.sends, i, i+1)
		i--
	}
	for _, r := range t.inq.Peer(peer) {
		r.cancel(t)
	}
	t.failRegions(peer, err)
	t.dropGathered(peer)
	t.wmu.Unlock()
	t.loop.Nudge()
}

// checkAbandoned ends the abandoned requests that UCX has ended after
// all, freeing their C memory and, with the last of a pin's, the pin;
// t.wmu is held.
func (t *Transport) checkAbandoned() {
	for i := 0; i < len(t.abandoned); i++ {
		if s := t.abandoned[i]; s.over() {
			t.endAbandoned(s)
			t.abandoned = slices.Delete(t.abandoned, i, i+1)
			i--
		}
	}
}

// endAbandoned releases what abandoned request s held; t.wmu is held.
func (t *Transport) endAbandoned(s *sendReq) {
	C.free(unsafe.Pointer(s.sb))
	s.sb = nil
	s.ended = true
	if h := s.pin; h != nil {
		s.pin = nil
		if h.users--; h.users == 0 {
			h.pin.Unpin()
		}
	}
}

// settle unpins h once the requests that used it (each nil if it ended at
// once) are done with it: now if none was abandoned under way, else when
// the last abandoned one ends (checkAbandoned, Close). The caller has
// received each request's outcome from its done channel, so a request's
// lost mark, written before its outcome was sent, is read here without
// the lock.
func (t *Transport) settle(h *pinHold, reqs ...*sendReq) {
	abandoned := false
	for _, s := range reqs {
		if s != nil && s.lost {
			abandoned = true
		}
	}
	if !abandoned {
		h.pin.Unpin()
		return
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	for _, s := range reqs {
		if s != nil && s.lost && !s.ended {
			h.users++
			s.pin = h
		}
	}
	if h.users == 0 {
		h.pin.Unpin()
	}
}

// releaseAbandoned releases what the abandoned requests still held, once
// the worker is destroyed and UCX holds nothing any more (Close); t.wmu
// is held.
func (t *Transport) releaseAbandoned() {
	for _, s := range t.abandoned {
		t.endAbandoned(s)
	}
	t.abandoned = nil
}
