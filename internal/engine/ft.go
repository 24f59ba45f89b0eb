package engine

import "github.com/mpigo/mpi/internal/wire"

// Fault tolerance (the MPI standard's ULFM interface): revoked contexts and
// failures that treat AnySource receives apart. The runtime decides what is
// revoked and who failed; the engine only fails the requests concerned.

// Revoke marks the contexts ctxs revoked with err: every pending send and
// receive on them fails with err now, and every later one at once. Blocked
// probes are woken to look again, and the messages waiting unreceived on
// them are dropped: no receive may take them any more, and a later
// communicator that gets the context again (Unrevoke) must not.
//
// A send or receive in the middle of a rendezvous is failed here while
// its peer may be alive and unaware: the peer's CTS, Fin, Ack or Data
// frames for it may still come, and are dropped (abandon, late), not
// taken for protocol errors. The peer's side of the same transfer ends
// when the revocation reaches it.
func (e *Engine) Revoke(err error, ctxs ...uint32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.revoked == nil {
		e.revoked = map[uint32]error{}
	}
	for _, c := range ctxs {
		if e.revoked[c] == nil {
			e.revoked[c] = err
		}
	}
	e.revokedAny.Store(true)
	hit := func(c uint32) bool { return e.revoked[c] != nil }
	for id, r := range e.sends {
		if hit(r.Context) {
			delete(e.sends, id)
			e.abandon(id, r.To, true, 0)
			r.Fail(e.revoked[r.Context])
		}
	}
	for id, r := range e.recvs {
		if hit(r.Context) {
			delete(e.recvs, id)
			e.abandon(id, r.from, false, r.want-r.got)
			e.failRecv(id, r, e.revoked[r.Context])
		}
	}
	for _, f := range e.fetches {
		if hit(f.r.Context) && f.failed == nil {
			// The read runs outside the lock: the receive fails when it
			// reports back (Fetched), never falling back to a CTS on
			// a revoked context (see Abort). The sender's send ends with
			// its own revocation; no Fin goes to it.
			f.failed = e.revoked[f.r.Context]
		}
	}
	var prev *Request
	for r := e.postedHead; r != nil; {
		next := r.next
		if hit(r.Context) {
			e.unlinkPosted(prev, r)
			r.Fail(e.revoked[r.Context])
		} else {
			prev = r
		}
		r = next
	}
	var mprev *inbound
	for m := e.unexpHead; m != nil; {
		next := m.next
		if hit(m.hdr.Context) {
			// Not unlinkUnexp: a message dropped is no progress.
			if mprev == nil {
				e.unexpHead = next
			} else {
				mprev.next = next
			}
			if e.unexpTail == m {
				e.unexpTail = mprev
			}
			e.freeInbound(m)
		} else {
			mprev = m
		}
		m = next
	}
	for _, w := range e.probes {
		w.Wake()
	}
	e.probes = e.probes[:0]
}

// maxAbandoned bounds the requests the engine remembers as abandoned
// (about 32 bytes each). Only rendezvous and synchronous transfers in
// progress when a communicator is revoked are abandoned, a handful per
// revocation; when more are remembered the oldest is forgotten, and an
// answer for it is still forgiven while its context stays revoked
// (wasAbandoned).
const maxAbandoned = 4096

// abandonedReq is what the engine remembers of a request Revoke failed
// while its peer still owed it answers.
type abandonedReq struct {
	peer int  // world rank the answers come from
	send bool // a send (owed one CTS, Fin or Ack) or a receive (owed Data)
	left int  // a receive: Data bytes still owed
}

// abandon remembers that the request id, talking to world rank peer, was
// failed while peer may still answer it: owing one answer if it is a
// send, left bytes of Data if a receive. e.mu is held.
//
// Why remember ids rather than forgive every unknown answer once anything
// failed: an engine that forgave everything would also hide genuine
// protocol errors between healthy ranks for the rest of the job. Ids are
// never reused (nextID only grows), so an id remembered here can only
// ever name the abandoned request, and a late frame can never land in a
// newer request's buffer, even on a context that a new communicator got
// after Shrink (Unrevoke).
func (e *Engine) abandon(id uint64, peer int, send bool, left int) {
	if e.abandoned == nil {
		e.abandoned = map[uint64]abandonedReq{}
	}
	if len(e.abandonRing) < maxAbandoned {
		e.abandonRing = append(e.abandonRing, id)
	} else {
		delete(e.abandoned, e.abandonRing[e.abandonNext]) // the oldest
		e.abandonRing[e.abandonNext] = id
		e.abandonNext = (e.abandonNext + 1) % maxAbandoned
	}
	e.abandoned[id] = abandonedReq{peer: peer, send: send, left: left}
}

// wasAbandoned reports whether f, an answer naming id (a send if send,
// else a receive) that the engine does not know, is owed to a request
// Revoke failed (abandon), and forgets the request once its last answer
// is in. An id forgotten because more than maxAbandoned were remembered
// is still recognised while f's context stays revoked: every request on
// it has failed, so the answer can only be for one of them. e.mu is held.
func (e *Engine) wasAbandoned(f *wire.Frame, id uint64, send bool) bool {
	if a, ok := e.abandoned[id]; ok && a.peer == f.From && a.send == send {
		a.left -= len(f.Payload)
		if send || a.left <= 0 {
			delete(e.abandoned, id)
		} else {
			e.abandoned[id] = a
		}
		return true
	}
	return e.revokedLocked(f.Context) != nil
}

// sendBlocked returns why a send on ctx to world rank to fails at once
// (the context is revoked, or the peer failed under FailPeer), or nil.
func (e *Engine) sendBlocked(ctx uint32, to int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.revokedLocked(ctx); err != nil {
		return err
	}
	if e.ftLost {
		return e.lost[to]
	}
	return nil
}

// Revoked returns the error context ctx was revoked with, or nil.
func (e *Engine) Revoked(ctx uint32) error {
	if !e.revokedAny.Load() {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.revoked[ctx]
}

// revokedLocked is Revoked with e.mu held.
func (e *Engine) revokedLocked(ctx uint32) error {
	if len(e.revoked) == 0 { // no map lookup on every receive
		return nil
	}
	return e.revoked[ctx]
}

// unlinkPosted removes r, which follows prev (nil: r is the head), from
// the posted queue. e.mu is held.
func (e *Engine) unlinkPosted(prev, r *Request) {
	if prev == nil {
		e.postedHead = r.next
	} else {
		prev.next = r.next
	}
	if e.postedTail == r {
		e.postedTail = prev
	}
	r.next = nil
}

// FailPeer is FailAll for a job that survives failures: the requests that
// need world rank peer fail with err, and posted AnySource receives fail
// with anyErr, but only those whose context anyHit accepts (the
// communicators peer belongs to). Other AnySource receives stay posted.
// anyHit is called with e.mu held and must not call the engine.
func (e *Engine) FailPeer(peer int, err, anyErr error, anyHit func(ctx uint32) bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lost == nil {
		e.lost = map[int]error{}
	}
	if e.lost[peer] == nil {
		e.lost[peer], e.lastLost = err, err
		e.lostEpoch++
	}
	e.ftLost = true
	e.revokedAny.Store(true) // sends take the checked path from now on
	e.failPeerRequests(peer, err)
	var prev *Request
	for r := e.postedHead; r != nil; {
		next := r.next
		switch {
		case r.FromWorld == peer+1:
			e.unlinkPosted(prev, r)
			r.Fail(err)
		case r.FromWorld == 0 && r.Peer == AnySource && anyHit(r.Context):
			e.unlinkPosted(prev, r)
			r.Fail(anyErr)
		default:
			prev = r
		}
		r = next
	}
}

// Unrevoke clears the revocation of ctxs: a new communicator got them.
func (e *Engine) Unrevoke(ctxs ...uint32) {
	if !e.revokedAny.Load() {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range ctxs {
		delete(e.revoked, c)
	}
}
