package mpi

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
)

// Persistent collectives (MPI-4.0 section 6.13): AllreduceInit and the
// other Init forms make a request once; each Start runs the collective
// again with the same arguments, and Wait (or Test, WaitAll, ...) completes
// it.
//
// The Init calls are collective and made in the same order on every rank,
// like the blocking collectives, so every rank takes the same tag base
// from the communicator's collective sequence there, once: every Start of
// the request runs on a view of the communicator pinned to that base.
// MPI lets ranks start different persistent collectives in different
// orders (only Init is ordered), which a tag taken at Start could not
// allow. Reusing one base from one Start to the next is safe: a rank
// starts again only once its part of the previous run is complete, and
// messages between two ranks on one tag never overtake each other, so a
// run never takes a message of the next.
//
// Init also agrees with every rank on what was made: one small allreduce
// of a descriptor (the call, its root, its type signature where every
// rank has the same one) and of each rank's argument checks. Init orders
// that differ across ranks, or arguments that failed their checks on one
// rank, are then an error of Init on every rank instead of a Start that
// never matches its peers. The algorithm is whatever the blocking call
// chooses for those arguments; its choice is cached on the communicator,
// so a Start of fixed-size data allocates nothing: a Wait for the request
// runs the blocking algorithm on the pinned view on the waiting goroutine,
// or, if none comes within the request's grace (startGrace, growing to
// maxGrace while Waits come in time) to twice that, the request's timer
// runs it on a goroutine of its own, as the non-blocking collectives do
// (coll_nb.go; collPlan.claim, collPlan.tick). Goroutine ranks meet in
// memory there, as the blocking call does, at a meeting point that
// belongs to the request (Comm.ownMeet: a communicator's own meet holds
// one call at a time, and a persistent collective may be in flight while
// a blocking one meets); freeing the request lets it go. Over messages
// this made an 8-byte persistent Allreduce of 4 goroutine ranks 3-5x
// slower than the plain call. Short reductions, broadcasts and barriers
// of goroutine ranks go by publication instead, decided at Init
// (collInitPub, coll_persist_pub.go).
//
// The arguments (buffers, counts, displacements, datatypes) are kept:
// the slices must not be modified until the request is freed, and the
// buffers not touched while a Start is in flight. Freeing or cancelling
// an active persistent collective (started and not yet waited for) is an
// ErrRequest, as is starting one that is active.
//
// The tag base is a number of the communicator's collective sequence,
// which wraps after 2^24 collective calls: a persistent collective kept
// across 16 million other collective calls on its communicator may share
// its tags with a later one. Make such long-lived requests on a Dup of
// their own.

// collPlan is what a persistent collective keeps from Init to Free.
type collPlan struct {
	v    *Comm               // c pinned to the request's tag base
	body func(v *Comm) error // the blocking collective, with its arguments
	run  func()              // tick, made once so that a Start allocates nothing
	op   string
	er   *engine.Request // the request's engine request (its reqMore's e)
	err  error           // the result of a Start the timer ran (exec)
	// state is the Start in flight in one word, so that a Start costs one
	// locked instruction and a Wait's claim another: the number of the
	// Start (counting from 1) above planBusy and planClaimed.
	// planClaimed is set by whichever runs the Start, a Wait or the timer
	// (claim). planBusy is set with it by the timer (claimExec), until
	// its run has finished: a failed job's wait reaper may complete a
	// request whose run still goes on, and a new Start must not begin
	// under it. A Wait that runs the Start completes the request only
	// after the run, so it needs no planBusy. A Start writes a new number
	// (by compare-and-swap, so that the claim of a tick that read an
	// older Start fails) only when its run is not busy.
	state atomic.Uint64
	// timer runs a Start that no Wait has claimed after startGrace to
	// twice that (tick). A Start arms it only if it is not armed (armed),
	// and a Wait never stops it: a loop of Start and Wait arms it once
	// per startGrace or so, instead of arming and stopping it every time
	// (two locks of the runtime's timer heap, about 0.1 us of a Start).
	timer *time.Timer
	armed atomic.Bool
	// seen is the number of the Start the last tick found unclaimed (the
	// timer's goroutine only).
	seen uint64
	// grace is the timer's delay now, from startGrace to maxGrace
	// (tick).
	grace atomic.Int64
}

// The low bits of collPlan.state; the Start's number is above them.
const (
	planClaimed uint64 = 1 << iota
	planBusy
	planGen // one Start
)

// collPlanHook, when set (by tests), is given every collPlan made.
var collPlanHook func(c *Comm, pl *collPlan)

// startGrace is how long a Start waits for a Wait to run it on the
// waiting goroutine before a goroutine of its own runs it, while the
// program has not shown that it waits for its Starts: each tick that
// finds its Start already claimed by a Wait doubles the delay, up to
// maxGrace, and a Start the timer had to run sets it back. A firing
// timer wakes a thread of the runtime, which in a loop of Start and Wait
// on 2 cores took the core from the other rank every 20 us: an
// Allreduce of 1 KiB of 2 goroutine ranks was 1.2x the plain call's
// time, of 4 KiB to 1 MiB between processes 1.06-1.08x (issue 43).
const (
	startGrace = 20 * time.Microsecond
	maxGrace   = time.Millisecond
)

// claim takes the Start in flight for the caller to run, unless another
// goroutine has taken it: a Wait for the request, or the Start's timer.
// A rank that starts and then waits for the request (an iterative
// solver's loop) runs the collective on its own goroutine, which meets
// the other ranks in memory or polls the transports as the blocking call
// does, instead of parking while another goroutine runs it and wakes it
// (an 8-byte Allreduce then cost several times the plain call, and a
// goroutine made at each Start woke an idle processor, which often ran
// it first). If the rank waits for something else first (the Starts of
// several requests waited for in another order than on its peers, or
// Test in a loop), the timer runs the collective on a goroutine of its
// own after startGrace, so no order of waits can hang.
func (pl *collPlan) claim() bool { return pl.claimWith(planClaimed) }

// claimExec is claim for the timer's goroutine, whose run (exec) is busy
// until it ends.
func (pl *collPlan) claimExec() bool { return pl.claimWith(planClaimed | planBusy) }

// claimWith is claim setting bits.
func (pl *collPlan) claimWith(bits uint64) bool {
	s := pl.state.Load()
	return s&planClaimed == 0 && pl.state.CompareAndSwap(s, s|bits)
}

// tick is the timer's: it runs the Start in flight if it was already
// unclaimed at the last tick (so after startGrace at least), arms the
// timer again while a Start is unclaimed, and else leaves it unarmed for
// the next Start to arm. It marks the timer unarmed before it looks at
// the Start, and a Start marks itself unclaimed before it looks at the
// timer: of a tick and a Start at once, one sees the other.
func (pl *collPlan) tick() {
	pl.armed.Store(false)
	s := pl.state.Load()
	if s&planClaimed != 0 {
		pl.grace.Store(min(2*pl.grace.Load(), int64(maxGrace)))
		return
	}
	if g := s / planGen; g != pl.seen {
		pl.seen = g
		if pl.armed.CompareAndSwap(false, true) {
			pl.timer.Reset(time.Duration(pl.grace.Load()))
		}
		return
	}
	pl.grace.Store(int64(startGrace))
	if pl.claimExec() {
		pl.exec()
	}
}

// runHere runs the Start a Wait claimed and returns its error, naming
// the call that made the request.
func (pl *collPlan) runHere() error {
	err := pl.body(pl.v)
	if err != nil {
		nameOp(err, pl.op)
	}
	return err
}

// exec runs the Start the timer claimed (claimExec) on the timer's
// goroutine, ends its run (planBusy) and completes its engine request,
// for the Wait, Test or WaitAny of the rank to see.
func (pl *collPlan) exec() {
	err := pl.body(pl.v)
	if err != nil {
		nameOp(err, pl.op)
	}
	pl.err = err
	pl.state.And(^planBusy)
	pl.er.CompleteOnce(engine.Status{Source: -1, Tag: -1})
}

// nameOp makes err (from the blocking call a request runs) name the call
// that made the request, op. Apart from exec, so that exec's own frame
// needs nothing on the heap.
func nameOp(err error, op string) {
	var e *Error
	if errors.As(err, &e) && e.Op != op {
		e.Op = op + " (" + e.Op + ")"
	}
}

// startLocked is the request's Start, r.mu held (Request.begin): the
// engine request made ready for a run the timer may do, the Start's
// number published unclaimed, and the timer armed unless it is. The
// error is not yet passed through the error handler (begin does that
// once r.mu is released).
func (pl *collPlan) startLocked(r *Request) error {
	for {
		s := pl.state.Load()
		if s&planBusy != 0 {
			return r.c.errorf("Start", ErrRequest, loc{}, "the previous run of %s has not finished", pl.op)
		}
		// Ready before the number is out, for a run of the timer.
		pl.er.Reset()
		// The last Start is not claimed only if a failed job's reaper
		// ended its wait before anybody ran it: a tick may claim it
		// meanwhile, and then this Start finds it busy.
		if pl.state.CompareAndSwap(s, (s/planGen+1)*planGen) {
			break
		}
	}
	r.er = pl.er
	if !pl.armed.Load() && pl.armed.CompareAndSwap(false, true) {
		pl.timer.Reset(time.Duration(pl.grace.Load()))
	}
	return nil
}

// start is startLocked for a caller that does not hold r.mu (begin takes
// startLocked).
func (pl *collPlan) start(r *Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return pl.startLocked(r)
}

// finish gives the error of a Start the timer ran (exec).
func (pl *collPlan) finish(engine.Status) error { return pl.err }

// completePlan completes r, a persistent collective whose Start its Wait
// ran on the waiting goroutine (collPlan.runHere) with the result err,
// without its engine request, which nobody else waits on: what
// r.complete does for it, with the status a run of the timer gives
// (Source and Tag -1, nothing received). r.mu is held.
func (r *Request) completePlan(err error) {
	if !r.packStatus(-1, -1, 0, 0, r.elem(), false) {
		r.setStatusOf(&engine.Status{Source: -1, Tag: -1}, r.elem())
	}
	r.setErr(err)
	r.set(fFinished, true)
	r.er = nil // inactive until the next Start
}

// persistDesc returns the descriptor Init agrees on: the call's name, root and
// a signature (0 where ranks may differ).
func persistDesc(op string, root int, sig uint64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(op))
	return h.Sum64() ^ rootMix(root) ^ sig*0x9e3779b97f4a7c15
}

// persistAgree ANDs the records of collInitPub's agreement (and of the
// shared block's set-up, shmSetup).
func persistAgree(acc, in []byte, _ bool) ([]byte, error) {
	for i := range acc {
		acc[i] &= in[i]
	}
	return acc, nil
}

// collInit makes a persistent collective: check runs the local argument
// checks (it may be nil), desc is the descriptor every rank must agree on
// (persistDesc), units the neighbourhood tag units (0: not a neighbourhood
// collective), and body the blocking collective on the pinned view.
func (c *Comm) collInit(op string, check func() error, desc func() uint64, units int, body func(v *Comm) error) (*Request, error) {
	return c.collInitPub(op, check, desc, units, nil, body)
}

// collInitPub is collInit for a collective that may go by publications
// between goroutine ranks (coll_persist_pub.go): pub, called once the
// local checks passed, returns what this rank publishes and gets, or nil
// if its arguments do not allow it.
func (c *Comm) collInitPub(op string, check func() error, desc func() uint64, units int, pub func() *pubSpec, body func(v *Comm) error) (*Request, error) {
	if err := c.intraOnly(op); err != nil {
		return nil, err
	}
	if err := c.enterColl(op); err != nil {
		return nil, err
	}
	defer c.exitColl()
	var local error
	if check != nil {
		local = check()
	}
	var d uint64
	if local == nil && desc != nil {
		d = desc()
	}
	var spec *pubSpec
	var road uint64
	if local == nil && pub != nil {
		if spec = pub(); spec != nil {
			// Between goroutine ranks every rank decides alike (the
			// job's transport), and a rank that would not publish
			// (another operation) fails Init. Between processes, what a
			// rank reaches by shared memory depends on where it runs
			// (several ranks per process): the ranks vote (rec[24:]),
			// and take the shared block only if all can.
			road = shmRoad
			if c.inProcess() {
				road = pubRoad
				d ^= pubRoad
			}
		}
	}
	agreeTag := c.collTag()
	tag := 0
	if units > 0 {
		tag = c.nbrTag(units)
	} else {
		tag = c.collTag()
	}
	var rec [32]byte
	binary.LittleEndian.PutUint64(rec[0:], d)
	binary.LittleEndian.PutUint64(rec[8:], ^d)
	if local == nil {
		binary.LittleEndian.PutUint64(rec[16:], ^uint64(0))
	}
	if road == shmRoad {
		binary.LittleEndian.PutUint64(rec[24:], ^uint64(0))
	}
	res, err := coll.Allreduce(c.coll(), rec[:], persistAgree, true, agreeTag)
	if local != nil {
		return nil, local
	}
	if err != nil {
		return nil, c.collErr(op, err)
	}
	if binary.LittleEndian.Uint64(res[16:]) != ^uint64(0) {
		return nil, c.fail(op, ErrArg, loc{}, "the arguments of another rank's %s failed their checks", op)
	}
	if binary.LittleEndian.Uint64(res[0:]) != d || binary.LittleEndian.Uint64(res[8:]) != ^d {
		return nil, c.fail(op, ErrOther, loc{}, "the ranks of %s made different persistent collectives here, or gave different roots or type signatures: the Init calls must be made in the same order, with matching arguments, on every rank", c.Name())
	}
	if road == shmRoad && binary.LittleEndian.Uint64(res[24:]) != ^uint64(0) {
		spec = nil // some rank cannot: every rank goes over messages
	}
	if spec != nil && road == pubRoad {
		return c.pubRequest(op, tag, spec), nil
	}
	if spec != nil {
		r, err := c.shmRequest(op, tag, spec)
		if err != nil {
			return nil, c.collErr(op, err)
		}
		if r != nil {
			return r, nil
		}
	}
	pl := &collPlan{v: c.pinnedView(tag), body: body, op: op}
	pl.run = pl.tick
	pl.state.Store(planClaimed) // no Start yet: as if the last were over
	pl.grace.Store(int64(startGrace))
	if collPlanHook != nil {
		collPlanHook(c, pl)
	}
	pl.timer = time.AfterFunc(time.Hour, pl.run)
	pl.timer.Stop()
	if units == 0 {
		// Goroutine ranks meet in memory, as the blocking call does, at
		// a meeting point of the request's own (Comm.ownMeet).
		pl.v.ownMeet = true
	}
	r := c.persistentColl(op, pl.start, pl.finish)
	pl.er = r.x.e
	r.x.parkNow = true
	r.x.plan = pl
	r.x.freed = func() {
		pl.timer.Stop()
		pl.v.leaveMeet()
	}
	return r, nil
}

// lowDesc is desc for a low-level collective whose ranks all pass count
// elements of dt.
func lowDesc(op string, root int, count int, dt *Datatype) func() uint64 {
	return func() uint64 { return persistDesc(op, root, lowSig(dt, count)) }
}

// nameDesc is desc for a collective whose ranks may pass different
// signatures (the v forms, Gather's receive side only at root, ...).
func nameDesc(op string, root int) func() uint64 {
	return func() uint64 { return persistDesc(op, root, 0) }
}

// BarrierInit makes a persistent barrier (MPI_Barrier_init). info is
// accepted for MPI's sake (nil will do); no hint changes what it does.
func (c *Comm) BarrierInit(info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.BarrierInit", c, Undefined, Undefined), &err)
	}
	return c.collInitPub("BarrierInit", nil, nameDesc("BarrierInit", -1), 0, c.barrierPub, barrierOf)
}

// BcastInit makes a persistent Bcast (MPI_Bcast_init).
func (c *Comm) BcastInit(buf []byte, count int, dt *Datatype, root int, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.BcastInit", c, root, Undefined), &err)
	}
	const op = "BcastInit"
	check := func() error {
		if err := c.lowArgs(op, true, root, count, dt, nil); err != nil {
			return err
		}
		_, err := c.lowBufs(op, true, root, nil, buf, count, dt)
		return err
	}
	pub := func() *pubSpec {
		if n, err := c.lowBufs(op, true, root, nil, buf, count, dt); err == nil && n >= 0 && !c.mixed() {
			return c.bcastPub(buf[:n], root)
		}
		return nil
	}
	return c.collInitPub(op, check, lowDesc(op, root, count, dt), 0, pub,
		func(v *Comm) error { return v.bcastBuf("Bcast", buf, count, dt, root) })
}

// lowArgs checks what a low-level Init can check alone: the root (if
// rooted), the count and datatype, and the operation (if op is not
// nil).
func (c *Comm) lowArgs(name string, rooted bool, root, count int, dt *Datatype, op *ReduceOp) error {
	if rooted {
		if err := c.checkRoot(name, root); err != nil {
			return err
		}
	}
	if op != nil {
		_, err := c.lowOpArgs(name, count, dt, op)
		return err
	}
	if dt == nil {
		return c.argErr(name, ErrType, "nil datatype")
	}
	if s := dt.checkComm(); s != "" {
		return c.argErr(name, ErrType, "%s", s)
	}
	if count < 0 {
		return c.argErr(name, ErrCount, "negative count %d", count)
	}
	return nil
}

// rootArg is lowArgs for the root alone.
func (c *Comm) rootArg(name string, root int) func() error {
	return func() error { return c.checkRoot(name, root) }
}

// GatherInit makes a persistent Gather (MPI_Gather_init).
func (c *Comm) GatherInit(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GatherInit", c, root, Undefined), &err)
	}
	const op = "GatherInit"
	return c.collInit(op, c.rootArg(op, root), nameDesc(op, root), 0, func(v *Comm) error {
		return v.Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)
	})
}

// GathervInit makes a persistent Gatherv (MPI_Gatherv_init).
func (c *Comm) GathervInit(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype, root int, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GathervInit", c, root, Undefined), &err)
	}
	const op = "GathervInit"
	return c.collInit(op, c.rootArg(op, root), nameDesc(op, root), 0, func(v *Comm) error {
		return v.Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root)
	})
}

// ScatterInit makes a persistent Scatter (MPI_Scatter_init).
func (c *Comm) ScatterInit(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.ScatterInit", c, root, Undefined), &err)
	}
	const op = "ScatterInit"
	return c.collInit(op, c.rootArg(op, root), nameDesc(op, root), 0, func(v *Comm) error {
		return v.Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)
	})
}

// ScattervInit makes a persistent Scatterv (MPI_Scatterv_init).
func (c *Comm) ScattervInit(sendbuf []byte, sendcounts, displs []int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.ScattervInit", c, root, Undefined), &err)
	}
	const op = "ScattervInit"
	return c.collInit(op, c.rootArg(op, root), nameDesc(op, root), 0, func(v *Comm) error {
		return v.Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root)
	})
}

// AllgatherInit makes a persistent Allgather (MPI_Allgather_init).
func (c *Comm) AllgatherInit(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.AllgatherInit", c, Undefined, Undefined), &err)
	}
	const op = "AllgatherInit"
	return c.collInit(op, func() error { return c.lowArgs(op, false, -1, recvcount, recvtype, nil) }, lowDesc(op, -1, recvcount, recvtype), 0, func(v *Comm) error {
		return v.Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
	})
}

// AllgathervInit makes a persistent Allgatherv (MPI_Allgatherv_init).
func (c *Comm) AllgathervInit(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.AllgathervInit", c, Undefined, Undefined), &err)
	}
	const op = "AllgathervInit"
	return c.collInit(op, nil, nameDesc(op, -1), 0, func(v *Comm) error {
		return v.Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)
	})
}

// AlltoallInit makes a persistent Alltoall (MPI_Alltoall_init).
func (c *Comm) AlltoallInit(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.AlltoallInit", c, Undefined, Undefined), &err)
	}
	const op = "AlltoallInit"
	return c.collInit(op, func() error { return c.lowArgs(op, false, -1, recvcount, recvtype, nil) }, lowDesc(op, -1, recvcount, recvtype), 0, func(v *Comm) error {
		return v.Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
	})
}

// AlltoallvInit makes a persistent Alltoallv (MPI_Alltoallv_init).
func (c *Comm) AlltoallvInit(sendbuf []byte, sendcounts, sdispls []int, sendtype *Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtype *Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.AlltoallvInit", c, Undefined, Undefined), &err)
	}
	const op = "AlltoallvInit"
	return c.collInit(op, nil, nameDesc(op, -1), 0, func(v *Comm) error {
		return v.Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype)
	})
}

// AlltoallwInit makes a persistent Alltoallw (MPI_Alltoallw_init).
func (c *Comm) AlltoallwInit(sendbuf []byte, sendcounts, sdispls []int, sendtypes []*Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtypes []*Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.AlltoallwInit", c, Undefined, Undefined), &err)
	}
	const op = "AlltoallwInit"
	return c.collInit(op, nil, nameDesc(op, -1), 0, func(v *Comm) error {
		return v.Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes)
	})
}

// ReduceInit makes a persistent Reduce (MPI_Reduce_init).
func (c *Comm) ReduceInit(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp, root int, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.ReduceInit", c, root, Undefined), &err)
	}
	const name = "ReduceInit"
	check := func() error {
		if err := c.lowArgs(name, true, root, count, dt, op); err != nil {
			return err
		}
		_, err := c.lowBufs(name, false, root, sendbuf, recvbuf, count, dt)
		return err
	}
	return c.collInitPub(name, check, lowDesc(name, root, count, dt), 0, c.lowReducePub(name, sendbuf, recvbuf, count, dt, op, root), func(v *Comm) error {
		return v.Reduce(sendbuf, recvbuf, count, dt, op, root)
	})
}

// AllreduceInit makes a persistent Allreduce (MPI_Allreduce_init): the
// request combines the current contents of sendbuf (or recvbuf, with
// InPlace) into recvbuf each time it is started.
func (c *Comm) AllreduceInit(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.AllreduceInit", c, Undefined, Undefined), &err)
	}
	const name = "AllreduceInit"
	check := func() error {
		if err := c.lowArgs(name, false, -1, count, dt, op); err != nil {
			return err
		}
		_, err := c.lowBufs(name, false, -1, sendbuf, recvbuf, count, dt)
		return err
	}
	return c.collInitPub(name, check, lowDesc(name, -1, count, dt), 0, c.lowReducePub(name, sendbuf, recvbuf, count, dt, op, -1), c.lowAllreduceBody(sendbuf, recvbuf, count, dt, op))
}

// lowAllreduceBody is allreduceBody for the low-level AllreduceInit:
// for elements that are whole blocks and a commutative operation (the
// vector road of Comm.Allreduce) its Start runs allreduceVec on what Init
// worked out (the kernel, the input with InPlace resolved, the type
// signature, a scratch buffer of the request's own); otherwise
// Comm.Allreduce.
func (c *Comm) lowAllreduceBody(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp) func(v *Comm) error {
	slow := func(v *Comm) error { return v.Allreduce(sendbuf, recvbuf, count, dt, op) }
	if c == nil || c.p == nil || op == nil || !op.commutative || dt == nil || dt.block() <= 0 || c.mixed() {
		return slow // Init fails on a nil or freed c, or does not go this way
	}
	n, err := c.lowBufs("AllreduceInit", false, -1, sendbuf, recvbuf, count, dt)
	if err != nil || n < 0 {
		return slow
	}
	f, err := op.vec(dt)
	if err != nil || f == nil {
		return slow
	}
	in := sendbuf
	if isInPlace(sendbuf) {
		in = recvbuf
	}
	in, out := in[:n], recvbuf[:n]
	sig, esz := lowSig(dt, count), dt.block()
	var scratch []byte // made at the first Start
	return func(v *Comm) error {
		if scratch == nil {
			scratch = AsBytes(make([]uint64, (n+7)/8))[:n]
		}
		cc := v.lowCall(sig, true)
		return cc.done("Allreduce", v.allreduceVec(cc, in, out, scratch, esz, f))
	}
}

// ReduceScatterBlockInit makes a persistent ReduceScatterBlock
// (MPI_Reduce_scatter_block_init).
func (c *Comm) ReduceScatterBlockInit(sendbuf, recvbuf []byte, recvcount int, dt *Datatype, op *ReduceOp, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.ReduceScatterBlockInit", c, Undefined, Undefined), &err)
	}
	const name = "ReduceScatterBlockInit"
	return c.collInit(name, func() error { return c.lowArgs(name, false, -1, recvcount, dt, op) }, lowDesc(name, -1, recvcount, dt), 0, func(v *Comm) error {
		return v.ReduceScatterBlock(sendbuf, recvbuf, recvcount, dt, op)
	})
}

// ReduceScatterInit makes a persistent ReduceScatter
// (MPI_Reduce_scatter_init).
func (c *Comm) ReduceScatterInit(sendbuf, recvbuf []byte, recvcounts []int, dt *Datatype, op *ReduceOp, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.ReduceScatterInit", c, Undefined, Undefined), &err)
	}
	const name = "ReduceScatterInit"
	return c.collInit(name, func() error { return c.lowArgs(name, false, -1, 0, dt, op) }, nameDesc(name, -1), 0, func(v *Comm) error {
		return v.ReduceScatter(sendbuf, recvbuf, recvcounts, dt, op)
	})
}

// ScanInit makes a persistent Scan (MPI_Scan_init).
func (c *Comm) ScanInit(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.ScanInit", c, Undefined, Undefined), &err)
	}
	const name = "ScanInit"
	return c.collInit(name, func() error { return c.lowArgs(name, false, -1, count, dt, op) }, lowDesc(name, -1, count, dt), 0, func(v *Comm) error {
		return v.Scan(sendbuf, recvbuf, count, dt, op)
	})
}

// ExscanInit makes a persistent Exscan (MPI_Exscan_init).
func (c *Comm) ExscanInit(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.ExscanInit", c, Undefined, Undefined), &err)
	}
	const name = "ExscanInit"
	return c.collInit(name, func() error { return c.lowArgs(name, false, -1, count, dt, op) }, lowDesc(name, -1, count, dt), 0, func(v *Comm) error {
		return v.Exscan(sendbuf, recvbuf, count, dt, op)
	})
}

// nbrInit is collInit for a neighbourhood collective: c must have a
// topology, whose tag units the request reserves.
func (c *Comm) nbrInit(op string, body func(v *Comm) error) (*Request, error) {
	t, err := c.nbrTopo(op)
	if err != nil {
		return nil, err
	}
	return c.collInit(op, nil, nameDesc(op, -1), t.units, body)
}

// NeighborAllgatherInit makes a persistent NeighborAllgather
// (MPI_Neighbor_allgather_init).
func (c *Comm) NeighborAllgatherInit(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAllgatherInit", c, Undefined, Undefined), &err)
	}
	return c.nbrInit("NeighborAllgatherInit", func(v *Comm) error {
		return v.NeighborAllgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
	})
}

// NeighborAllgathervInit makes a persistent NeighborAllgatherv
// (MPI_Neighbor_allgatherv_init).
func (c *Comm) NeighborAllgathervInit(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAllgathervInit", c, Undefined, Undefined), &err)
	}
	return c.nbrInit("NeighborAllgathervInit", func(v *Comm) error {
		return v.NeighborAllgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)
	})
}

// NeighborAlltoallInit makes a persistent NeighborAlltoall
// (MPI_Neighbor_alltoall_init).
func (c *Comm) NeighborAlltoallInit(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAlltoallInit", c, Undefined, Undefined), &err)
	}
	return c.nbrInit("NeighborAlltoallInit", func(v *Comm) error {
		return v.NeighborAlltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
	})
}

// NeighborAlltoallvInit makes a persistent NeighborAlltoallv
// (MPI_Neighbor_alltoallv_init).
func (c *Comm) NeighborAlltoallvInit(sendbuf []byte, sendcounts, sdispls []int, sendtype *Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtype *Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAlltoallvInit", c, Undefined, Undefined), &err)
	}
	return c.nbrInit("NeighborAlltoallvInit", func(v *Comm) error {
		return v.NeighborAlltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype)
	})
}

// NeighborAlltoallwInit makes a persistent NeighborAlltoallw
// (MPI_Neighbor_alltoallw_init).
func (c *Comm) NeighborAlltoallwInit(sendbuf []byte, sendcounts, sdispls []int, sendtypes []*Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtypes []*Datatype, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAlltoallwInit", c, Undefined, Undefined), &err)
	}
	return c.nbrInit("NeighborAlltoallwInit", func(v *Comm) error {
		return v.NeighborAlltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes)
	})
}

// Typed forms: each runs the zero-allocation Into form of its collective
// over caller-owned slices of plain elements.

// typedDesc is desc for a typed collective over n elements of E on every
// rank.
func typedDesc[E any](op string, root, n int) func() uint64 {
	return func() uint64 { return persistDesc(op, root, typeOf[E]().sig+uint64(n)) }
}

// BarrierInit makes a persistent barrier (c.BarrierInit).
func BarrierInit(c *Comm) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("BarrierInit", c, Undefined, Undefined), &err)
	}
	return c.collInitPub("BarrierInit", nil, nameDesc("BarrierInit", -1), 0, c.barrierPub, barrierOf)
}

// BcastInit makes a persistent BcastInto: each Start copies root's buf
// into buf on every rank.
func BcastInit[E any](c *Comm, buf []E, root int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("BcastInit", c, root, Undefined), &err)
	}
	const op = "BcastInit"
	pub := func() *pubSpec {
		if t := typeOf[E](); t.shape == shapePlain && !c.mixed() {
			return c.bcastPub(unsafeBytes(buf, t.size), root)
		}
		return nil
	}
	return c.collInitPub(op, c.rootArg(op, root), typedDesc[E](op, root, len(buf)), 0, pub, func(v *Comm) error { return BcastInto(v, buf, root) })
}

// AllreduceInit makes a persistent AllreduceSliceInto: each Start combines
// every rank's v with op into out (MPI_Allreduce_init). out must have the
// length of v; it may be v itself.
func AllreduceInit[E any](c *Comm, v, out []E, op Op[E]) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AllreduceInit", c, Undefined, Undefined), &err)
	}
	const name = "AllreduceInit"
	return c.collInitPub(name, func() error { return checkSliceOp(c, name, v, out, op) }, typedDesc[E](name, -1, len(v)), 0,
		typedReducePub(c, v, out, op, -1), allreduceBody(c, v, out, op))
}

// allreduceBody returns the blocking call a typed persistent Allreduce
// of v into out runs at each Start. For plain elements and a predefined
// operation (the vector road of AllreduceSliceInto, allreduceFast) what
// the blocking call works out at each call is worked out here once: the
// element type and its kernel, the byte views of v and out, and a
// scratch buffer of the request's own instead of one from the pool; the
// arguments were checked by Init. Its Start then runs the algorithm
// alone (allreduceVec), about 30 ns less than the call on 1 KiB
// (issue 43). Other element types and operations run
// AllreduceSliceInto.
func allreduceBody[E any](c *Comm, v, out []E, op Op[E]) func(vc *Comm) error {
	t := typeOf[E]()
	if c == nil || c.p == nil || op.vec == nil || t.shape != shapePlain || c.mixed() || len(v) != len(out) {
		return func(vc *Comm) error { return AllreduceSliceInto(vc, v, out, op) }
	}
	const opname = "AllreduceSliceInto"
	src, b := unsafeBytes(v, t.size), unsafeBytes(out, t.size)
	f := vecOf(t, op)
	var scratch []byte // made at the first Start that needs one (large)
	return func(vc *Comm) error {
		cc := vc.typedCall(t, len(out))
		if len(b) <= len(cc.small) {
			return cc.done(opname, vc.allreduceVec(cc, src, b, cc.small[:len(b)], t.size, f))
		}
		if scratch == nil {
			scratch = AsBytes(make([]uint64, (len(b)+7)/8))[:len(b)]
		}
		return cc.done(opname, vc.allreduceVec(cc, src, b, scratch, t.size, f))
	}
}

// checkSliceOp checks a typed reduction's Init: a valid op and an out as
// long as v.
func checkSliceOp[E any](c *Comm, name string, v, out []E, op Op[E]) error {
	if err := checkOp(c, name, op); err != nil {
		return err
	}
	if len(out) != len(v) {
		return c.fail(name, ErrCount, loc{}, "out has %d elements, v has %d", len(out), len(v))
	}
	return nil
}

// ReduceInit makes a persistent ReduceSliceInto (MPI_Reduce_init): out
// gets the result at root and is left alone elsewhere.
func ReduceInit[E any](c *Comm, v, out []E, op Op[E], root int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReduceInit", c, root, Undefined), &err)
	}
	const name = "ReduceInit"
	return c.collInitPub(name, func() error {
		if err := checkReduce(c, name, op, root); err != nil {
			return err
		}
		if c.rank == root && len(out) != len(v) {
			return c.fail(name, ErrCount, loc{}, "out has %d elements, v has %d", len(out), len(v))
		}
		return nil
	}, typedDesc[E](name, root, len(v)), 0, typedReducePub(c, v, out, op, root), func(vc *Comm) error { return ReduceSliceInto(vc, v, out, op, root) })
}

// AllgatherInit makes a persistent AllgatherInto (MPI_Allgather_init).
func AllgatherInit[E any](c *Comm, v, out []E) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AllgatherInit", c, Undefined, Undefined), &err)
	}
	const name = "AllgatherInit"
	return c.collInit(name, nil, typedDesc[E](name, -1, len(v)), 0, func(vc *Comm) error { return AllgatherInto(vc, v, out) })
}

// AlltoallInit makes a persistent AlltoallInto (MPI_Alltoall_init).
func AlltoallInit[E any](c *Comm, send, recv []E) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AlltoallInit", c, Undefined, Undefined), &err)
	}
	const name = "AlltoallInit"
	return c.collInit(name, nil, typedDesc[E](name, -1, len(send)), 0, func(vc *Comm) error { return AlltoallInto(vc, send, recv) })
}

// ReduceScatterBlockInit makes a persistent ReduceScatterBlockInto
// (MPI_Reduce_scatter_block_init).
func ReduceScatterBlockInit[E any](c *Comm, v, out []E, op Op[E]) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReduceScatterBlockInit", c, Undefined, Undefined), &err)
	}
	const name = "ReduceScatterBlockInit"
	return c.collInit(name, func() error { return checkOp(c, name, op) }, typedDesc[E](name, -1, len(v)), 0,
		func(vc *Comm) error { return ReduceScatterBlockInto(vc, v, out, op) })
}

// ScanInit makes a persistent ScanSliceInto (MPI_Scan_init).
func ScanInit[E any](c *Comm, v, out []E, op Op[E]) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ScanInit", c, Undefined, Undefined), &err)
	}
	const name = "ScanInit"
	return c.collInit(name, func() error { return checkSliceOp(c, name, v, out, op) }, typedDesc[E](name, -1, len(v)), 0,
		func(vc *Comm) error { return ScanSliceInto(vc, v, out, op) })
}

// persistentColl makes the inactive request of a persistent collective
// that start starts and finish completes; freeing it while it is active
// is an error (activeFree).
func (c *Comm) persistentColl(op string, start func(r *Request) error, finish func(st engine.Status) error) *Request {
	r := c.newRequest(op, loc{})
	r.er = nil
	r.set(fLive, false)
	r.set(fFinished, true)
	r.x.start = start
	r.x.finish = finish
	r.x.activeFree = true
	return r
}
