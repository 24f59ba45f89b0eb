package device

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/diag"
	"github.com/mpigo/mpi/internal/engine"
)

// This file is the wait of every blocking call, and what hang diagnosis
// knows of the waits that park.
//
// What it costs: nothing on a wait that completes while it spins or polls.
// A wait that parks its goroutine (which costs microseconds anyway) tells
// its rank's Waits, under a mutex, that it parks and when it ends; that is
// all. The costly part, finding the caller's file and line, is done only
// when a hang is suspected: the watcher wakes every parked goroutine and
// each one describes itself (Waits.Describe), then parks again.

// Wait waits for er: the rank's progress polls first (Prog), then the
// goroutine parks, telling Blk. The wait is timed while the wait timer is
// started (Stats.WaitOn).
func (d *Device) Wait(er *engine.Request) engine.Status {
	return d.WaitIn(er, d.Prog)
}

// WaitIn is Wait with the progress prog.
func (d *Device) WaitIn(er *engine.Request, prog engine.Progress) engine.Status {
	if d.Stats.WaitOn.Load() != 0 {
		return d.timedWait(er, prog)
	}
	return er.WaitIn(prog, &d.Blk)
}

// WaitRef is Wait returning the status in place (engine.Request.WaitRef).
func (d *Device) WaitRef(er *engine.Request) *engine.Status { return d.WaitRefIn(er, d.Prog) }

// WaitRefIn is WaitRef with the progress prog.
func (d *Device) WaitRefIn(er *engine.Request, prog engine.Progress) *engine.Status {
	if d.Stats.WaitOn.Load() != 0 {
		d.timedWait(er, prog)
	}
	return er.WaitRefIn(prog, &d.Blk)
}

func (d *Device) timedWait(er *engine.Request, prog engine.Progress) engine.Status {
	t0 := time.Now()
	st := er.WaitIn(prog, &d.Blk)
	d.Stats.WaitNs.Add(uint64(time.Since(t0)))
	return st
}

// Env is what a parked wait without a request waits for: a probe for
// (Peer, Tag) on context Ctx.
type Env struct {
	Ctx       uint32
	Peer, Tag int
}

// Describer describes one parked wait for a hang report, on the waiting
// goroutine (so that it can look at its own stack): r is its request, or
// nil for a probe (env then says what it waits for) or a wait on many
// requests. The layer above knows the communicators and the calls.
type Describer func(r *engine.Request, env *Env) diag.Wait

// Parked is one parked wait of a rank.
type Parked struct {
	r *engine.Request // nil for probes and WaitAny
	w *engine.Waiter
	// env describes a wait without a request (a probe).
	env    Env
	hasEnv bool
	static bool      // info was given at AddStatic and holds for every round
	gen    uint64    // the describe round info belongs to
	info   diag.Wait // filled by the waiting goroutine
}

// Waits is what hang diagnosis knows of one rank's waits: the ones parked
// now, and how many ended after parking. It implements engine.Blocker.
type Waits struct {
	// Describe, set before the rank starts, describes a parked wait.
	Describe Describer
	// mail is closed when a goroutine of the rank parks (see add).
	mail  func()
	mu    sync.Mutex
	waits []*Parked
	free  []*Parked
	gen   uint64        // current describe round, under mu
	want  atomic.Uint64 // = gen while a describe round runs, 0 otherwise
	// parked counts the waits parked now, progress the waits that ended
	// after parking; both under mu, which every change takes anyway (as
	// atomics they cost three more locked instructions a parked wait,
	// and only the watcher reads them: counts).
	parked   int32
	progress uint64
	// parkedNow is parked for readers without mu: a wait of the rank that
	// watched and completes leaves the rank's mailbox open only while no
	// goroutine of the rank is parked (progress.Rank).
	parkedNow atomic.Int32
	// Returned tells that the rank's function has returned.
	Returned atomic.Bool
	// Ctl counts the messages of hang diagnosis between processes that
	// the rank's engine matched: they are not the rank's progress.
	Ctl atomic.Uint64
	// busy counts the work outside MPI's waits that goroutines of the
	// library do for the rank now (the file system calls of a
	// non-blocking file access): a rank parked in a Wait for such work
	// is not blocked, it waits for its own I/O (BusyBegin).
	busy atomic.Int32
	// orphanErr, once the job has failed and its engines' Abort had time
	// to end every wait they know of, is the error with which a parked
	// wait that is still incomplete when woken fails itself (EndWaits).
	orphanErr atomic.Pointer[error]
}

// InitWaits makes d's waits describe themselves with describe, and close
// d's mailbox (if it has one) when a goroutine of the rank parks.
func (d *Device) InitWaits(describe Describer) {
	d.Blk.Describe = describe
	d.Blk.mail = func() {
		if d.Mail != nil {
			// Nobody collects the mailbox of a parked goroutine: what
			// senders left there is delivered now, and later messages
			// come the ordinary way, with a wake-up.
			d.Mail.Close()
		}
	}
}

func (b *Waits) add(r *engine.Request, w *engine.Waiter) *Parked {
	b.parkedNow.Add(1)
	if b.mail != nil {
		b.mail()
	}
	b.mu.Lock()
	var bw *Parked
	if n := len(b.free); n > 0 {
		bw = b.free[n-1]
		b.free = b.free[:n-1]
	} else {
		bw = new(Parked)
	}
	// Not *bw = Parked{...}: clearing the whole entry (its info is most
	// of it, with pointers) cost more than the rest of a park's
	// bookkeeping. info is read only when gen is the current round.
	bw.r, bw.w, bw.hasEnv, bw.static, bw.gen = r, w, false, false, 0
	bw.env = Env{} // describe reads it
	b.waits = append(b.waits, bw)
	b.parked++
	b.mu.Unlock()
	return bw
}

// Remove takes off a wait registered with Add or ParkEnv. Like Unpark,
// it counts the wait out only if it was still on the list, so that parked
// always equals the number of waits listed: a count that drifted below
// zero would keep a rank that has returned "parked" for ever, and the
// watcher would report a hang of ranks that have all returned.
func (b *Waits) Remove(bw *Parked) {
	b.mu.Lock()
	for i, x := range b.waits {
		if x == bw {
			b.drop(i)
			b.parked--
			b.progress++
			b.mu.Unlock()
			b.parkedNow.Add(-1)
			return
		}
	}
	b.mu.Unlock()
}

// Service returns the Blocker for a wait of a service goroutine of the
// rank (the holder of a file's shared pointer): it parks as the rank's
// waits do, so that messages reach it, and an aborted job ends it, but
// hang diagnosis does not count it. A rank whose only parked wait is a
// service's is not blocked in MPI: its own goroutine computes elsewhere.
func (b *Waits) Service() engine.Blocker { return serviceWaits{b} }

type serviceWaits struct{ b *Waits }

func (s serviceWaits) Park(r *engine.Request, w *engine.Waiter) {
	s.b.parkedNow.Add(1)
	if s.b.mail != nil {
		s.b.mail()
	}
}

func (s serviceWaits) Woken(r *engine.Request) {
	if e := s.b.orphanErr.Load(); e != nil && !r.Completing() {
		r.FailOnce(*e)
	}
}

func (s serviceWaits) Unpark(r *engine.Request) { s.b.parkedNow.Add(-1) }

// BusyBegin marks the rank busy with work outside MPI's waits until the
// matching BusyEnd: while a goroutine of the library reads or writes a
// file for the rank, the hang watcher takes the rank for running, so
// that a Wait for a long non-blocking file access (2 GiB written by
// MPICH's io/i_bigtype) is not reported as a hang. Only the file system
// calls and the packing around them are marked, never a wait for another
// rank, so a collective that another rank never joins is still reported.
func (b *Waits) BusyBegin() { b.busy.Add(1) }

// BusyEnd ends what BusyBegin began.
func (b *Waits) BusyEnd() { b.busy.Add(-1) }

// IsBusy reports whether work marked by BusyBegin runs for the rank now.
func (b *Waits) IsBusy() bool { return b.busy.Load() > 0 }

// AnyParked reports whether a goroutine of the rank is parked.
func (b *Waits) AnyParked() bool { return b.parkedNow.Load() != 0 }

// Counts returns how many waits are parked now and how many ended after
// parking.
func (b *Waits) Counts() (parked int32, progress uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.parked, b.progress
}

// drop takes wait i off the list and keeps it for reuse. b.mu is held.
func (b *Waits) drop(i int) {
	bw := b.waits[i]
	last := len(b.waits) - 1
	b.waits[i] = b.waits[last]
	b.waits[last] = nil
	b.waits = b.waits[:last]
	bw.r, bw.w = nil, nil
	if len(b.free) < 16 {
		b.free = append(b.free, bw)
	}
}

func (b *Waits) find(r *engine.Request) *Parked {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, x := range b.waits {
		if x.r == r {
			return x
		}
	}
	return nil
}

// Park implements engine.Blocker.
func (b *Waits) Park(r *engine.Request, w *engine.Waiter) {
	bw := b.add(r, w)
	if b.want.Load() != 0 {
		b.describe(bw)
	}
}

// Woken implements engine.Blocker. After the job failed, a wait that is
// still incomplete when EndWaits wakes it ends itself with the job's
// error (see EndWaits).
func (b *Waits) Woken(r *engine.Request) {
	if e := b.orphanErr.Load(); e != nil && !r.Completing() {
		// Its own completer may finish it at this very moment (a
		// non-blocking collective's goroutine, the executor): the
		// first of the two completes it.
		r.FailOnce(*e)
		return
	}
	if b.want.Load() == 0 {
		return
	}
	if bw := b.find(r); bw != nil {
		b.describe(bw)
	}
}

// Unpark implements engine.Blocker.
func (b *Waits) Unpark(r *engine.Request) {
	b.mu.Lock()
	for i, x := range b.waits {
		if x.r == r {
			b.drop(i)
			b.parked--
			b.progress++
			b.mu.Unlock()
			b.parkedNow.Add(-1)
			return
		}
	}
	b.mu.Unlock()
}

// Add registers a parked wait on w that is on no one request (a wait on
// many); Woken and Remove follow it.
func (b *Waits) Add(w *engine.Waiter) *Parked {
	bw := b.add(nil, w)
	if b.want.Load() != 0 {
		b.describe(bw)
	}
	return bw
}

// AddStatic registers a wait outside the engine that info describes
// whole (an origin waiting for a window's lock in shared memory, which
// sleeps between tries instead of parking on a waiter); Remove ends it.
func (b *Waits) AddStatic(info diag.Wait) *Parked {
	bw := b.add(nil, nil)
	b.mu.Lock()
	bw.static, bw.info, bw.gen = true, info, b.want.Load()
	b.mu.Unlock()
	return bw
}

// ParkEnv registers a parked wait that has no request: a probe for
// (src, tag) on context ctx.
func (b *Waits) ParkEnv(w *engine.Waiter, ctx uint32, src, tag int) *Parked {
	bw := b.add(nil, w)
	b.mu.Lock()
	bw.env, bw.hasEnv = Env{Ctx: ctx, Peer: src, Tag: tag}, true
	b.mu.Unlock()
	if b.want.Load() != 0 {
		b.describe(bw)
	}
	return bw
}

// Rewoken is Woken for a wait registered with Add or ParkEnv; w is the
// waiter it parks on next.
func (b *Waits) Rewoken(bw *Parked, w *engine.Waiter) {
	b.mu.Lock()
	bw.w = w
	b.mu.Unlock()
	if b.want.Load() != 0 {
		b.describe(bw)
	}
}

// describe fills bw.info for the current round, on the waiting goroutine.
func (b *Waits) describe(bw *Parked) {
	gen := b.want.Load()
	b.mu.Lock()
	if bw.gen == gen {
		b.mu.Unlock()
		return
	}
	r := bw.r
	var env *Env
	if bw.hasEnv {
		e := bw.env
		env = &e
	}
	b.mu.Unlock()
	var w diag.Wait
	if b.Describe != nil {
		w = b.Describe(r, env)
	} else {
		w = diag.Wait{Peer: diag.None, PeerWorld: -1, Tag: diag.None, Root: diag.None, Kind: diag.KindOther}
	}
	b.mu.Lock()
	bw.info, bw.gen = w, gen
	b.mu.Unlock()
}

// StartDescribe begins a describe round: every parked goroutine of the
// rank is woken to describe itself. It returns the round.
func (b *Waits) StartDescribe() uint64 {
	b.mu.Lock()
	b.gen++
	gen := b.gen
	b.want.Store(gen)
	ws := make([]*engine.Waiter, 0, len(b.waits))
	for _, bw := range b.waits {
		if bw.static {
			bw.gen = gen
			continue
		}
		ws = append(ws, bw.w)
	}
	b.mu.Unlock()
	for _, w := range ws {
		if w != nil {
			w.Wake()
		}
	}
	return gen
}

// Described reports whether every parked wait of the rank has described
// itself in round gen.
func (b *Waits) Described(gen uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bw := range b.waits {
		if bw.gen != gen {
			return false
		}
	}
	return true
}

// EndDescribe ends the describe round.
func (b *Waits) EndDescribe() { b.want.Store(0) }

// Snapshot returns the waits described in round gen, point-to-point ones
// first (they are what a diagnosis can follow), and the rank's state.
func (b *Waits) Snapshot(gen uint64) (waits []diag.Wait, state string) {
	b.mu.Lock()
	for _, bw := range b.waits {
		if bw.gen == gen {
			waits = append(waits, bw.info)
		}
	}
	b.mu.Unlock()
	state = diag.Running
	if len(waits) > 0 {
		state = diag.Blocked
	}
	if b.Returned.Load() {
		state = diag.Returned
	}
	sort.SliceStable(waits, func(i, j int) bool { return waitOrder(&waits[i]) < waitOrder(&waits[j]) })
	return waits, state
}

// waitOrder puts a rank's point-to-point waits before others: they are
// what a diagnosis can follow.
func waitOrder(w *diag.Wait) int {
	switch w.Kind {
	case diag.KindSend, diag.KindRecv:
		return 0
	case diag.KindColl:
		return 1
	}
	return 2
}

// WakeAll wakes every parked wait of the rank, and from now on (orphans
// set) has those still incomplete fail with cause when they wake
// (Woken). It reports whether any wait is parked.
func (b *Waits) WakeAll(cause error, orphans bool) bool {
	if orphans && b.orphanErr.Load() == nil {
		b.orphanErr.Store(&cause)
	}
	b.mu.Lock()
	ws := make([]*engine.Waiter, 0, len(b.waits))
	for _, bw := range b.waits {
		if bw.w != nil {
			ws = append(ws, bw.w)
		}
	}
	b.mu.Unlock()
	for _, w := range ws {
		w.Wake()
	}
	return len(ws) > 0
}

// Activity is the rank's progress as hang diagnosis counts it: waits that
// ended after parking, plus messages its engine matched, plus the chunks
// of large messages that reached its receives, plus the pieces its
// transports read of peers' memory (transport.Mover). The second counts a
// rank whose receives complete without ever blocking (its messages were
// already there) while another of its goroutines stays parked; the last
// two a receive of one message that takes longer than the threshold.
func (d *Device) Activity() uint64 {
	_, n := d.Blk.Counts()
	if d.Eng != nil {
		n += d.Eng.Matched() - d.Blk.Ctl.Load() + d.Eng.Chunks()
	}
	for _, t := range d.movers {
		n += t.Moved()
	}
	return n
}

// How EndWaits ends the waits an abort did not reach: it wakes the parked
// ones every reapTick, and after reapGrace has those still incomplete fail.
const (
	reapTick  = 20 * time.Millisecond
	reapGrace = 200 * time.Millisecond
)

// reapMax bounds EndWaits: a rank that has not returned a minute after
// its job failed waits outside the library, where waking cannot reach.
const reapMax = time.Minute

// EndWaits makes sure that no wait of the ranks ds stays parked once
// their job has failed with cause (an abort, a hang or check report). The
// engines' Abort fails every request they hold; a wait on a request that
// none holds (one that goroutines of a rank misused at once, such as two
// collectives on one communicator sharing a rank's meeting slot) would
// park for ever, and with it Run. So, until every rank has returned and
// no wait is parked, the parked goroutines are woken every reapTick;
// after reapGrace, in which every completion already under way (a copy
// out of a sender's buffer) has ended, a wait that is still incomplete
// when woken fails with cause (Waits.Woken). It returns at once; call it
// once per job.
func EndWaits(ds []*Device, cause error) {
	go func() {
		start := time.Now()
		t := time.NewTicker(reapTick)
		defer t.Stop()
		for range t.C {
			orphans := time.Since(start) >= reapGrace
			busy := false
			for _, d := range ds {
				if d.Blk.WakeAll(cause, orphans) || !d.Blk.Returned.Load() {
					busy = true
				}
			}
			if !busy && orphans || time.Since(start) > reapMax {
				return
			}
		}
	}()
}
