package engine

// Fault tolerance (the MPI standard's ULFM interface): revoked contexts and
// failures that treat AnySource receives apart. The runtime decides what is
// revoked and who failed; the engine only fails the requests concerned.

// Revoke marks the contexts ctxs revoked with err: every pending send and
// receive on them fails with err now, and every later one at once. Blocked
// probes are woken to look again.
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
			r.Fail(e.revoked[r.Context])
		}
	}
	for id, r := range e.recvs {
		if hit(r.Context) {
			delete(e.recvs, id)
			r.Fail(e.revoked[r.Context])
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
	for _, w := range e.probes {
		w.Wake()
	}
	e.probes = e.probes[:0]
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
