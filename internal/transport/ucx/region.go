//go:build cgo && mpigo_ucx

package ucx

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/mpigo/mpi/internal/wire"
)

// The single-copy road over UCX (transport.RegionReader, RegionStarter).
// The engine's sender exports the buffer of a large message: the
// transport pins it and names it by a token, which the engine's RTS
// carries. The receiver, once the RTS has matched a receive, pulls the
// region: it posts a receive tagged with a read id of its own
// (MG_DATA|id) straight into the posted receive buffer, then asks the
// sender for the bytes (a request tagged MG_CTL|rank: token, offset,
// length, read id); the sender's transport sends them from the pinned
// buffer with that tag, and UCX's protocols (eager, or rendezvous with
// zero copy on RDMA devices) put them in place. Before this road, the
// engine's Data chunks went into the transport's buffers and were copied
// from there into the receive buffer, 9% of a 4 MiB stream's time.
//
// A region is released (unpinned, forgotten) when a frame of its reader
// answers its RTS: the Fin after the read, or a CTS or a withdrawing
// CancelAck when the receiver takes the streamed road instead
// (wire.Header.AnswersRTS);
// when the reader fails; and at Close. A pull of an unknown token or
// range is answered with no bytes, which ends the read in error, and the
// engine then takes the streamed road.

// ctlSize is the length of a pull request (pull.go).
const ctlSize = pullSize

// A region is a buffer exported to peer.
type region struct {
	peer int
	p    uintptr
	n    int
	pin  runtime.Pinner
	// sent: the RTS naming the region went out, as sendID in context.
	sent    bool
	sendID  uint64
	context uint32
}

// A regionRead is a pull under way: the receives of its data, posted
// into the pinned destination, one a piece of at most pullPiece bytes.
type regionRead struct {
	peer   int
	pieces []pullPart
	left   int // pieces whose receive has not ended
	pin    runtime.Pinner
	done   func(error)
	err    error
}

// A pullPart is one piece of a pull: its read id, its length, and its
// receive (nil once ended).
type pullPart struct {
	id  uint64
	n   int
	req unsafe.Pointer
}

// pullPiece is the largest piece of a pull (tests lower it). Each piece
// is a pull of its own, and each that ends counts as progress for hang
// diagnosis (Moved): one pull of gigabytes would show none until its
// end, and a slow node takes longer than the hang threshold for it.
var pullPiece = 64 << 20

// cancel cancels the receives of rr still under way (its peer failed, or
// the transport closes); t.wmu is held.
func (rr *regionRead) cancel(t *Transport) {
	for _, p := range rr.pieces {
		if p.req != nil {
			t.cancelReq(p.req)
		}
	}
}

// A rawSend is a send of region.go's (a pull request, or a region's
// bytes) under way; free is C memory to free once it is done.
type rawSend struct {
	peer int
	req  unsafe.Pointer
	free unsafe.Pointer
}

// Exports reports whether peer can pull this rank's buffers: every peer
// reached over UCX can (transport.RegionReader).
func (t *Transport) Exports(peer int) bool { return peer >= 0 && peer < t.cfg.Size }

// ExportRegion pins b for peer to pull and returns its token
// (transport.RegionReader).
func (t *Transport) ExportRegion(peer int, b []byte) (uint64, bool) {
	if len(b) == 0 || !t.Exports(peer) {
		return 0, false
	}
	r := &region{peer: peer, n: len(b), p: uintptr(unsafe.Pointer(&b[0]))}
	r.pin.Pin(&b[0])
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.closed || t.failed[peer] != nil {
		r.pin.Unpin()
		return 0, false
	}
	t.nextTok++
	t.regions[t.nextTok] = r
	t.nExported.Add(1)
	return t.nextTok, true
}

// noteRTS records that the RTS naming region f.Token goes out; t.wmu is
// held.
func (t *Transport) noteRTS(f *wire.Frame) {
	if r := t.regions[f.Token]; r != nil && r.peer == f.To {
		r.sent, r.sendID, r.context = true, f.SendID, f.Context
	}
}

// releaseRegion ends the export of region tok; t.wmu is held.
func (t *Transport) releaseRegion(tok uint64, r *region) {
	delete(t.regions, tok)
	r.pin.Unpin()
	t.nExported.Add(-1)
}

// releaseAnswered releases the regions whose RTS (sendID, in context)
// peer has answered; t.wmu is held.
func (t *Transport) releaseAnswered(peer int, sendID uint64, context uint32) {
	for tok, r := range t.regions {
		if r.peer == peer && r.sent && r.sendID == sendID && r.context == context {
			t.releaseRegion(tok, r)
		}
	}
}

// releasePeer releases the regions exported to peer, which failed;
// t.wmu is held.
func (t *Transport) releasePeer(peer int) {
	for tok, r := range t.regions {
		if r.peer == peer {
			t.releaseRegion(tok, r)
		}
	}
}

// pulled serves peer's pull request b (a message tagged MG_CTL): it sends
// the bytes asked for, or none if the token or the range is not one of
// peer's regions; t.wmu is held.
func (t *Transport) pulled(peer int, b []byte) {
	pr, ok := parsePull(b)
	if !ok || t.failed[peer] != nil {
		return // no request of ours: nothing to answer to
	}
	var p uintptr
	var size int
	if r := t.regions[pr.token]; r != nil && r.peer == peer && pr.within(r.n) {
		p, size = r.p+uintptr(pr.off), int(pr.n)
	} else {
		p = uintptr(unsafe.Pointer(t.u)) // no bytes: any address will do
	}
	req, err := t.sendRaw(peer, dataBit|pr.id, p, size)
	if err == nil && req != nil {
		t.raw = append(t.raw, rawSend{peer: peer, req: req})
	}
}

// ReadRegion pulls len(dst) bytes at offset off of the region that peer
// exported as token into dst, and waits for them
// (transport.RegionReader).
func (t *Transport) ReadRegion(peer int, token uint64, off int, dst []byte) error {
	done := make(chan error, 1)
	if err := t.StartRegion(peer, token, off, dst, func(err error) { done <- err }); err != nil {
		return err
	}
	return t.await(done)
}

// StartRegion starts the pull of ReadRegion and returns at once
// (transport.RegionStarter): done is told the outcome once, on a
// goroutine progressing the worker with no lock of the transport held,
// or before StartRegion returns if there is nothing to read. An error
// means that nothing started, and done is not called.
func (t *Transport) StartRegion(peer int, token uint64, off int, dst []byte, done func(error)) error {
	if done == nil {
		return errors.New("ucx: StartRegion without a done function")
	}
	if peer < 0 || peer >= t.cfg.Size || off < 0 {
		return fmt.Errorf("ucx: a read of region %d of rank %d at offset %d", token, peer, off)
	}
	if len(dst) == 0 {
		done(nil)
		return nil
	}
	if err := t.eps.Ensure(peer); err != nil {
		return err
	}
	rr := &regionRead{peer: peer, done: done}
	rr.pin.Pin(&dst[0])
	t.wmu.Lock()
	if t.closed {
		t.wmu.Unlock()
		rr.pin.Unpin()
		return errors.New("ucx: transport closed")
	}
	if err := t.peerErr(peer); err != nil {
		t.wmu.Unlock()
		rr.pin.Unpin()
		return err
	}
	for o := 0; o < len(dst) && rr.err == nil; o += pullPiece {
		k := min(len(dst)-o, pullPiece)
		t.nextRead++
		id := t.nextRead
		req, err := t.postData(id, dst[o:o+k])
		if err != nil {
			if rr.left == 0 {
				t.wmu.Unlock()
				rr.pin.Unpin()
				return fmt.Errorf("ucx: posting the read of a region of rank %d: %w", peer, err)
			}
			// Pieces are under way: the read ends with this error once
			// they have (not cancelled: their bytes are on the way, and a
			// cancelled receive would leave them unmatched in UCX).
			rr.err = fmt.Errorf("ucx: posting the read of a region of rank %d: %w", peer, err)
			break
		}
		rr.pieces = append(rr.pieces, pullPart{id: id, n: k, req: req})
		rr.left++
		ctl := t.cmalloc(ctlSize)
		pullRequest{token, uint64(off + o), uint64(k), id}.put(unsafe.Slice((*byte)(ctl), ctlSize))
		sreq, err := t.sendRaw(peer, uint64(t.cfg.Rank)|ctlBit, uintptr(ctl), ctlSize)
		switch {
		case err != nil:
			t.cfree(ctl)
			rr.err = fmt.Errorf("ucx: asking rank %d for a region: %w", peer, err)
			t.cancelReq(req) // nothing comes for it; UCX ends it, checkReads reports it
		case sreq != nil:
			t.raw = append(t.raw, rawSend{peer: peer, req: sreq, free: ctl})
		default:
			t.cfree(ctl)
		}
	}
	t.reads = append(t.reads, rr)
	t.wmu.Unlock()
	t.loop.Nudge()
	return nil
}

// checkReads ends the pulls whose data is in, or whose receive ended in
// error, and returns them; t.wmu is held.
func (t *Transport) checkReads(over []*regionRead) []*regionRead {
	// A receive ends only in a call on the worker, which counts it
	// (mg_data_cb): none ended since the last look, none to test. Testing
	// each receive at every step cost a tenth of a rank's time receiving
	// a window of 64 large messages (perf, 4 MiB over UCX's tcp).
	n := uint64(t.u.rdone)
	if n == t.rdoneSeen {
		return over
	}
	t.rdoneSeen = n
	for i := 0; i < len(t.reads); i++ {
		rr := t.reads[i]
		for j := range rr.pieces {
			p := &rr.pieces[j]
			if p.req == nil {
				continue
			}
			done, n, err := t.testRecv(p.req)
			if !done {
				continue
			}
			p.req = nil
			rr.left--
			t.moved.Add(1)
			switch {
			case rr.err != nil:
			case err != nil:
				rr.err = fmt.Errorf("ucx: reading a region of rank %d: %w", rr.peer, err)
			case n != p.n:
				rr.err = fmt.Errorf("ucx: rank %d sent %d bytes of a region read of %d (no such region)", rr.peer, n, p.n)
			}
		}
		if rr.left > 0 {
			continue
		}
		rr.pin.Unpin()
		over = append(over, rr)
		t.reads = append(t.reads[:i], t.reads[i+1:]...)
		i--
	}
	return over
}

// checkRaw ends region.go's sends that UCX has completed; t.wmu is held.
func (t *Transport) checkRaw() {
	// As checkReads: only once a raw send ended (mg_raw_cb).
	n := uint64(t.u.sdone)
	if n == t.sdoneSeen {
		return
	}
	t.sdoneSeen = n
	for i := 0; i < len(t.raw); i++ {
		s := t.raw[i]
		if done, _ := t.reqDone(s.req); !done {
			continue
		}
		if s.free != nil {
			t.cfree(s.free)
		}
		t.raw = append(t.raw[:i], t.raw[i+1:]...)
		i--
	}
}

// failRegions ends what region.go has under way with peer, which failed:
// its regions are released, its pulls and sends cancelled (UCX then ends
// them in error); t.wmu is held.
func (t *Transport) failRegions(peer int, err error) {
	t.releasePeer(peer)
	for _, rr := range t.reads {
		if rr.peer == peer && rr.left > 0 {
			if rr.err == nil {
				rr.err = err
			}
			rr.cancel(t)
		}
	}
	for _, s := range t.raw {
		if s.peer == peer {
			t.cancelReq(s.req)
		}
	}
}

// regionsBusy reports whether pulls or region.go's sends are under way;
// t.wmu is held.
func (t *Transport) regionsBusy() bool { return len(t.reads) > 0 || len(t.raw) > 0 }

// A laterPull is a pull request from a peer this rank had no endpoint to
// (step serves it once the endpoint is made).
type laterPull struct {
	peer int
	req  [ctlSize]byte
}
