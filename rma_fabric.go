package mpi

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/transport"
)

// Windows between nodes over a fabric that reaches a peer's memory
// itself (transport.RemoteMemory: UCX's puts and gets, libfabric's
// writes and reads). Each rank whose
// transport to some member of the window offers it exposes its part when
// the window is made, and the ranks exchange the keys; an origin then
// puts and gets towards such a target through the fabric, with no
// message to the target's runtime (on an RDMA device, without its CPU).
// Everything else travels by message as before: accumulates (their
// atomicity is the target's, element by element, whichever origin they
// come from; those on integers may take the fabric's atomics instead,
// rma_atomic.go), locks, epochs and their notices; so do target layouts
// of many small runs (fabRuns). What ends an epoch first
// completes the fabric's puts (Flush, Unlock, Fence, Complete, Free), and
// only then sends its message or meets, so the target sees them when the
// epoch's end says it should. Dynamic windows, targets of another byte
// order and targets with nothing to expose keep the message road.
//
// The road is taken by default only towards targets the fabric reaches
// directly (an RDMA device, or UCX's shared memory), not where its puts
// and gets run over a socket (UCX's tcp, libfabric's tcp) or wait for the
// target's progress (libfabric's shm): there, measured, an 8-byte put and
// its flush took longer than by message (docs/fabric.md). MPIGO_FABRIC_RMA=1 takes it towards every target the
// fabric reaches, MPIGO_FABRIC_RMA=0 towards none.

// When the road is taken (Config's fabricRMA, MPIGO_FABRIC_RMA).
const (
	rmaAuto   int8 = iota // towards targets the fabric reaches directly (transport.RemoteMemory.DirectMemory)
	rmaOff                // never (MPIGO_FABRIC_RMA=0)
	rmaAlways             // towards every target the fabric reaches (MPIGO_FABRIC_RMA=1)
)

// fabWin is a window's road through the fabric.
type fabWin struct {
	tr   transport.RemoteMemory // the transport x is exposed through
	x    transport.Exposure     // this rank's part; nil: not exposed
	rm   []transport.Remote     // per target: its part, reached through the fabric; nil: by message
	pend []atomic.Bool          // per target: a Put not flushed yet

	// The fabric's atomics (rma_atomic.go): this rank's own part
	// through the fabric, and nil atom unless the window takes them.
	selfRm transport.Remote
	atom   *atomicWin
}

// exposeFabric exposes this rank's part of w through the first transport
// to another member that reaches remote memory, and returns its key (nil:
// none, the targets then reach this rank by message).
func (w *Window[T]) exposeFabric() []byte {
	p := w.c.p
	if p.job.fabricRMA == rmaOff || w.dynamic || w.me == nil || len(w.me.buf) == 0 {
		return nil
	}
	for r, g := range w.c.group {
		if r == w.c.rank || p.inProcess(g) {
			continue
		}
		if tr := p.Tr.RemoteMemoryFor(g); tr != nil && (p.job.fabricRMA == rmaAlways || tr.DirectMemory(g)) {
			x, err := tr.ExposeMemory(w.me.buf)
			if err != nil {
				return nil // by message
			}
			w.fab = &fabWin{tr: tr, x: x}
			return x.Key()
		}
	}
	return nil
}

// openFabric opens the parts of the targets that exposed theirs (keys, in
// rank order) through the transport this rank exposed its own through.
// A target it cannot open stays on the message road.
func (w *Window[T]) openFabric(keys [][]byte) {
	p := w.c.p
	for r, key := range keys {
		if len(key) == 0 || r == w.c.rank || w.reach[r] != nil || w.peers[r] != nil || w.c.swapFrom(r) {
			continue
		}
		g := w.c.group[r]
		tr := p.Tr.RemoteMemoryFor(g)
		if tr == nil || (p.job.fabricRMA != rmaAlways && !tr.DirectMemory(g)) {
			continue
		}
		rm, err := tr.OpenRemote(g, key)
		if err != nil || rm.Len() < w.sizes[r]*w.esize {
			if rm != nil {
				rm.Close()
			}
			continue
		}
		if w.fab == nil {
			w.fab = &fabWin{}
		}
		if w.fab.rm == nil {
			w.fab.rm = make([]transport.Remote, len(keys))
			w.fab.pend = make([]atomic.Bool, len(keys))
		}
		w.fab.rm[r] = rm
	}
}

// remote returns target's part if this rank reaches it through the
// fabric, else nil.
func (w *Window[T]) remote(target int) transport.Remote {
	if w.fab == nil || w.fab.rm == nil || target < 0 || target >= len(w.fab.rm) {
		return nil
	}
	return w.fab.rm[target]
}

// fabPut writes b at byte off of target's part through the fabric.
func (w *Window[T]) fabPut(op string, rm transport.Remote, target, off int, b []byte) error {
	w.fab.pend[target].Store(true)
	if err := rm.Put(off, b); err != nil {
		return w.fabFailed(op, target, err)
	}
	return nil
}

// fabGet reads target's part at byte off into b through the fabric.
func (w *Window[T]) fabGet(op string, rm transport.Remote, target, off int, b []byte) error {
	if err := rm.Get(off, b); err != nil {
		return w.fabFailed(op, target, err)
	}
	return nil
}

// A target layout of several runs of bytes goes through the fabric, one
// operation per run (Remote.PutRuns, GetRuns: all under way at once),
// when it has at most fabMaxRuns runs of fabMinRun bytes or more on
// average; else by message, one message for them all, which costs less
// than many small operations (docs/fabric.md, measured).
var (
	fabMaxRuns       = 1024
	fabMinRun  int64 = 1024
)

// fabRuns returns the runs at the target of the values d describes, the
// first value at byte base, if the fabric should carry them (fabMaxRuns,
// fabMinRun).
func fabRuns(d *vdesc, base int64) ([]transport.Run, bool) {
	nr := d.count * int64(len(d.segs))
	if nr == 0 || nr > int64(fabMaxRuns) || d.bytes()/nr < fabMinRun {
		return nil, false
	}
	runs := make([]transport.Run, 0, nr)
	for k := int64(0); k < d.count; k++ {
		for _, sg := range d.segs {
			if sg.Len > 0 {
				runs = append(runs, transport.Run{Off: int(base + k*d.ext + sg.Off), Len: int(sg.Len)})
			}
		}
	}
	return runs, true
}

// fabPutRuns writes b into runs of target's part through the fabric.
func (w *Window[T]) fabPutRuns(op string, rm transport.Remote, target int, runs []transport.Run, b []byte) error {
	w.fab.pend[target].Store(true)
	if err := rm.PutRuns(runs, b); err != nil {
		return w.fabFailed(op, target, err)
	}
	return nil
}

// fabGetRuns reads runs of target's part into b through the fabric.
func (w *Window[T]) fabGetRuns(op string, rm transport.Remote, target int, runs []transport.Run, b []byte) error {
	if err := rm.GetRuns(runs, b); err != nil {
		return w.fabFailed(op, target, err)
	}
	return nil
}

// fabFlush completes the fabric's puts towards target, if it has any
// not flushed yet.
func (w *Window[T]) fabFlush(op string, target int) error {
	rm := w.remote(target)
	if rm == nil || !w.fab.pend[target].Swap(false) {
		return nil
	}
	if err := rm.Flush(); err != nil {
		return w.fabFailed(op, target, err)
	}
	return nil
}

// fabFailed is the error of a fabric operation towards target: the loss
// of the target's process if the job knows of it, else the fabric's.
func (w *Window[T]) fabFailed(op string, target int, err error) error {
	if errors.Is(err, transport.ErrPeerLost) || w.c.p.Eng.Lost(w.c.group[target]) != nil {
		return w.failed(op, target, fmt.Errorf("%w: %w", ErrProcFailed, err))
	}
	return w.failed(op, target, err)
}

// closeFabric releases the fabric's hold on the window: the remotes, then
// this rank's exposure (Free calls it after the last barrier, when no
// origin reaches this rank's part any more).
func (w *Window[T]) closeFabric() {
	if w.fab == nil {
		return
	}
	for _, rm := range w.fab.rm {
		if rm != nil {
			rm.Close()
		}
	}
	if w.fab.selfRm != nil {
		w.fab.selfRm.Close()
	}
	if w.fab.x != nil {
		w.fab.x.Close()
	}
}
