package device

// The executor of engine effects: frames the engine wants sent go to the
// transports (Exec), single-copy reads the engine asks for run here, out
// of the engine's lock (fetch); frames that arrive go to the engine
// (Deliver and its kin), and a reply sender sends the answers of
// deliveries made on a transport's own goroutine (replies.go).

import (
	"fmt"
	"sync"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// Exec hands the frames in out to the transports and completes the
// requests that were waiting for that.
func (d *Device) Exec(out *engine.Outbox) {
	n := out.Len()
	if n == 0 {
		return
	}
	if d.Counting() {
		d.countOut(out)
	}
	for i := 0; i < n; i++ {
		it := out.At(i)
		if it.Fetch != nil {
			var more engine.Outbox
			d.fetch(it.Fetch, &more)
			d.Exec(&more)
			continue
		}
		var err error
		if it.Fill != nil {
			err = d.sendFilled(it)
		} else {
			err = d.Tr.Send(it.F)
		}
		if it.Done != nil {
			if err != nil {
				it.Done.FailOnce(fmt.Errorf("%w: %w", d.Hooks.ProcFailed, err))
			} else {
				it.Done.CompleteOnce(engine.Status{})
			}
		} else if err != nil && it.F.Kind != wire.Eager {
			// A protocol reply that cannot be delivered: the peer is gone.
			d.Hooks.FailPeer(it.F.To, fmt.Errorf("%w: rank %d: %w", d.Hooks.ProcFailed, it.F.To, err))
		}
	}
}

// fetch runs the single-copy read f through the transport to f.From and
// reports the outcome to the engine, whose answer (Fin, or CTS to fall
// back to the streamed rendezvous) goes to out. It runs without the
// engine's lock: a large copy does not hold up the rank's other traffic.
//
// A transport that can start a read and report its end later
// (transport.RegionStarter) gets it that way: the read's outcome then
// goes to the engine from the transport's goroutine (fetched), and out
// gets nothing unless the read could not start.
func (d *Device) fetch(f *engine.Fetch, out *engine.Outbox) {
	var err error
	if f.From >= 0 && f.From < len(d.RegionTo) && d.RegionTo[f.From] != nil {
		rr := d.RegionTo[f.From]
		if s, ok := rr.(transport.RegionStarter); ok && d.q != nil {
			if err = s.StartRegion(f.From, f.Token, 0, f.Dst, func(err error) { d.fetched(f, err) }); err == nil {
				return
			}
		} else {
			err = rr.ReadRegion(f.From, f.Token, 0, f.Dst)
		}
	} else {
		// A token from a peer whose transport cannot read (a peer's bug):
		// the streamed rendezvous still works.
		err = fmt.Errorf("rank %d: no single-copy road to rank %d", d.Rank, f.From)
	}
	d.Eng.Fetched(f, err, out)
}

// fetched reports the end of a read started by fetch to the engine, on
// the transport's goroutine, and has its answer sent as a delivery's
// are (answer: at once if the transport takes it without waiting, else by
// the reply sender).
func (d *Device) fetched(f *engine.Fetch, err error) {
	var none, more engine.Outbox
	d.Eng.Fetched(f, err, &more)
	d.answer(&none, &more)
}

// fillPool holds the chunk buffers that non-contiguous sends pack into
// just before a frame leaves (engine.Item.Fill): at most one chunk
// (the engine's chunk size, or the eager limit) per frame being sent.
var fillPool sync.Pool

func (d *Device) sendFilled(it *engine.Item) error {
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
	err := d.Tr.Send(f)
	fillPool.Put(bp)
	return err
}

// Deliver is the handler of transports that deliver on the sender's
// goroutine (self, inproc): a frame arrived for this rank, and its
// answers are sent at once.
func (d *Device) Deliver(f wire.Frame) {
	if d.Counting() {
		d.countFrame(&f.Header, f.From)
	}
	if f.Kind == wire.Eager && f.Flags&wire.FlagSync == 0 {
		// Needs no answer, so no Outbox (a few hundred bytes to clear).
		if err := d.Eng.DeliverEager(&f.Header, f.From, f.Payload); err != nil {
			d.Hooks.Internal(err)
		}
		return
	}
	var out engine.Outbox
	if err := d.Eng.Deliver(&f, &out); err != nil {
		d.Hooks.Internal(err)
	}
	d.Exec(&out)
}

// DeliverEager is Deliver for an eager message that needs no answer,
// given by its parts: the short road between goroutine ranks
// (inproc.EagerFunc).
func (d *Device) DeliverEager(h wire.Header, from int, payload []byte) {
	if d.Counting() {
		d.CountRecv(from, int(h.Size), h.Context, int(h.Tag))
	}
	if err := d.Eng.DeliverEager(&h, from, payload); err != nil {
		d.Hooks.Internal(err)
	}
}

// deliverEagerRef is DeliverEager for shm's fast boxes, which hand over
// the header by reference and want the engine's error back.
func (d *Device) deliverEagerRef(h *wire.Header, from int, b []byte) error {
	if d.Counting() {
		d.CountRecv(from, int(h.Size), h.Context, int(h.Tag))
	}
	return d.Eng.DeliverEager(h, from, b)
}

// EagerRun delivers a run of plain eager messages from one sender into
// the engine under one lock (engine.DeliverEagerRun): shm's EagerRun.
func (d *Device) EagerRun(from int, hs []wire.Header, ps [][]byte) (int, error) {
	if d.Counting() {
		for i := range hs {
			d.CountRecv(from, int(hs[i].Size), hs[i].Context, int(hs[i].Tag))
		}
	}
	return d.Eng.DeliverEagerRun(from, hs, ps)
}

// DeliverQueued is the handler for transports that deliver on their own
// goroutines (tcp readers, the shm poller): the engine's answers go out
// through answer.
func (d *Device) DeliverQueued(f wire.Frame) {
	if d.Counting() {
		d.countFrame(&f.Header, f.From)
	}
	var out engine.Outbox
	if err := d.Eng.Deliver(&f, &out); err != nil {
		d.Hooks.Internal(err)
	}
	if n := out.Len(); n > 0 {
		// A read runs here, on the transport's goroutine, which waits for
		// no peer while it copies; only its answer is queued.
		var more engine.Outbox
		for i := 0; i < n; i++ {
			if it := out.At(i); it.Fetch != nil {
				d.fetch(it.Fetch, &more)
			}
		}
		d.answer(&out, &more)
	}
}
