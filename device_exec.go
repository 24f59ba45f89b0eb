package mpi

// The executor of engine effects: frames the engine wants sent go to the
// transports (exec), single-copy reads the engine asks for run here, out of
// the engine's lock (fetch); frames that arrive go to the engine (deliver),
// and a reply sender sends the answers of deliveries made on a transport's
// own goroutine (replies).

import (
	"fmt"
	"sync"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// exec hands the frames in out to the transports and completes the
// requests that were waiting for that.
func (p *proc) exec(out *engine.Outbox) {
	n := out.Len()
	if n == 0 {
		return
	}
	if p.counting() {
		p.countOut(out)
	}
	for i := 0; i < n; i++ {
		it := out.At(i)
		if it.Fetch != nil {
			var more engine.Outbox
			p.fetch(it.Fetch, &more)
			p.exec(&more)
			continue
		}
		var err error
		if it.Fill != nil {
			err = sendFilled(p, it)
		} else {
			err = p.tr.Send(it.F)
		}
		if it.Done != nil {
			if err != nil {
				it.Done.FailOnce(fmt.Errorf("%w: %w", ErrProcFailed, err))
			} else {
				it.Done.CompleteOnce(engine.Status{})
			}
		} else if err != nil && it.F.Kind != wire.Eager {
			// A protocol reply that cannot be delivered: the peer is gone.
			p.failPeer(it.F.To, fmt.Errorf("%w: rank %d: %w", ErrProcFailed, it.F.To, err))
		}
	}
}

// fetch runs the single-copy read f through the transport to f.From and
// reports the outcome to the engine, whose answer (Fin, or CTS to fall
// back to the streamed rendezvous) goes to out. It runs without the
// engine's lock: a large copy does not hold up the rank's other traffic.
func (p *proc) fetch(f *engine.Fetch, out *engine.Outbox) {
	var err error
	if f.From >= 0 && f.From < len(p.regionTo) && p.regionTo[f.From] != nil {
		err = p.regionTo[f.From].ReadRegion(f.From, f.Token, 0, f.Dst)
	} else {
		// A token from a peer whose transport cannot read (a peer's bug):
		// the streamed rendezvous still works.
		err = fmt.Errorf("rank %d: no single-copy road to rank %d", p.rank, f.From)
	}
	p.eng.Fetched(f, err, out)
}

// fillPool holds the chunk buffers that non-contiguous sends pack into
// just before a frame leaves (engine.Item.Fill): at most one chunk
// (Config.ChunkSize, or the eager limit) per frame being sent.
var fillPool sync.Pool

func sendFilled(p *proc, it *engine.Item) error {
	var b []byte
	bp, _ := fillPool.Get().(*[]byte)
	if bp != nil && cap(*bp) >= it.FillLen {
		b = (*bp)[:it.FillLen]
	} else {
		nb := make([]byte, it.FillLen)
		bp, b = &nb, nb
	}
	it.Fill.Pack(b, it.FillOff)
	f := it.F
	f.Payload = b
	err := p.tr.Send(f)
	fillPool.Put(bp)
	return err
}

// deliver is the transport handler: a frame arrived for this rank.
func (p *proc) deliver(f wire.Frame) {
	if p.counting() {
		p.countFrame(&f.Header, f.From)
	}
	if f.Kind == wire.Eager && f.Flags&wire.FlagSync == 0 {
		// Needs no answer, so no Outbox (a few hundred bytes to clear).
		if err := p.eng.DeliverEager(&f.Header, f.From, f.Payload); err != nil {
			p.internal(err)
		}
		return
	}
	var out engine.Outbox
	if err := p.eng.Deliver(&f, &out); err != nil {
		p.internal(err)
	}
	p.exec(&out)
}

// deliverEager is deliver for an eager message that needs no answer,
// given by its parts: the short road between goroutine ranks
// (inproc.EagerFunc).
func (p *proc) deliverEager(h wire.Header, from int, payload []byte) {
	if p.counting() {
		p.countRecv(from, int(h.Size), h.Context, int(h.Tag))
	}
	if err := p.eng.DeliverEager(&h, from, payload); err != nil {
		p.internal(err)
	}
}

// eagerRun delivers a run of plain eager messages from one sender into
// p's engine under one lock (engine.DeliverEagerRun): shm's EagerRun.
func (p *proc) eagerRun(from int, hs []wire.Header, ps [][]byte) (int, error) {
	if p.counting() {
		for i := range hs {
			p.countRecv(from, int(hs[i].Size), hs[i].Context, int(hs[i].Tag))
		}
	}
	return p.eng.DeliverEagerRun(from, hs, ps)
}

// replies queues the frames that deliveries from a transport's own
// goroutine (tcp readers) want sent, and a goroutine of the proc sends them.
// A reader must never block in a write: if two ranks' readers each waited
// for the other to read, with both socket buffers full, neither would.
//
// A delivery first tries to send its answers itself, with sends that never
// wait (transport.TrySender: shm), which spares the hand-over to the reply
// sender's goroutine, a wake-up on the critical path of every rendezvous
// (docs/performance.md, "Mid-sized messages over shm"). Answers keep their
// order: a delivery sends directly only while nothing is queued and no
// other goroutine is sending answers (busy); what it cannot send at once,
// and all that follows, is queued.
type replies struct {
	mu    sync.Mutex
	items []engine.Item
	busy  bool // a goroutine is sending answers; others queue theirs
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

// startReplies starts p's reply sender; the returned function stops it.
func (p *proc) startReplies() func() error {
	if p.q != nil { // one reply sender serves every transport of the rank
		return func() error { return nil }
	}
	q := &replies{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	p.q = q
	go func() {
		defer close(q.done)
		var batch engine.Outbox
		for {
			select {
			case <-q.wake:
			case <-q.stop:
				return
			}
			for {
				q.mu.Lock()
				if q.busy || len(q.items) == 0 {
					// A delivery sending directly wakes this goroutine
					// again if it leaves items behind.
					q.mu.Unlock()
					break
				}
				items := q.items
				q.items, q.busy = nil, true
				q.mu.Unlock()
				for _, it := range items {
					batch.Reset()
					*batch.Add() = it
					p.exec(&batch)
				}
				q.mu.Lock()
				q.busy = false
				q.mu.Unlock()
			}
		}
	}()
	return func() error {
		close(q.stop)
		<-q.done
		return nil
	}
}

// deliverQueued is the handler for transports that deliver on their own
// goroutines: the engine's answers go to the reply sender.
func (p *proc) deliverQueued(f wire.Frame) {
	if p.counting() {
		p.countFrame(&f.Header, f.From)
	}
	var out engine.Outbox
	if err := p.eng.Deliver(&f, &out); err != nil {
		p.internal(err)
	}
	if n := out.Len(); n > 0 {
		// A read runs here, on the transport's goroutine, which waits for
		// no peer while it copies; only its answer is queued.
		var more engine.Outbox
		for i := 0; i < n; i++ {
			if it := out.At(i); it.Fetch != nil {
				p.fetch(it.Fetch, &more)
			}
		}
		p.answer(&out, &more)
	}
}

// answer sends the answers of a delivery on a transport's own goroutine:
// those in out (but its reads, already run), then those in more (the
// answers of the reads). It sends what its transports take at once
// itself, and queues the rest, in order, for the reply sender.
func (p *proc) answer(out, more *engine.Outbox) {
	n := out.Len()
	q := p.q
	q.mu.Lock()
	sent := 0 // answers sent directly, in order: those of out, then more
	if !q.busy && len(q.items) == 0 {
		q.busy = true
		q.mu.Unlock()
		sent = p.trySendAnswers(out, more)
		q.mu.Lock()
		q.busy = false
	}
	k := 0
	for i := 0; i < n; i++ {
		if it := out.At(i); it.Fetch == nil {
			if k >= sent {
				q.items = append(q.items, *it)
			}
			k++
		}
	}
	for i := 0; i < more.Len(); i++ {
		if k >= sent {
			q.items = append(q.items, *more.At(i))
		}
		k++
	}
	queued := len(q.items) > 0
	q.mu.Unlock()
	if queued {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// trySendAnswers sends the answers in out (but its reads) and then those
// in more, in that order, as long as their transports take them at once
// (transport.TrySender), and returns how many it sent. It stops at the
// first it cannot send so: a frame to pack (Fill), a transport without
// TrySend, or no room now.
func (p *proc) trySendAnswers(out, more *engine.Outbox) int {
	sent := 0
	for _, o := range [2]*engine.Outbox{out, more} {
		for i, n := 0, o.Len(); i < n; i++ {
			it := o.At(i)
			if it.Fetch != nil {
				continue
			}
			t, ok := p.tr.For(it.F.To).(transport.TrySender)
			if !ok || it.Fill != nil || !t.TrySend(it.F) {
				return sent
			}
			if p.counting() && (it.F.Kind == wire.Eager || it.F.Kind == wire.RTS) {
				p.countSent(it.F.To, int(it.F.Size), it.F.Context, int(it.F.Tag))
			}
			if it.Done != nil {
				it.Done.CompleteOnce(engine.Status{})
			}
			sent++
		}
	}
	return sent
}
