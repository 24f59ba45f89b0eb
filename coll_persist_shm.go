package mpi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
)

// Persistent collectives of processes of one node by publication.
//
// Between processes that share the node's memory (the shm transport:
// `mpigo run -transport shm`, or ranks of RunConfig over shm), the
// persistent collectives that goroutine ranks make by publication
// (coll_persist_pub.go: a short Allreduce or Reduce with a predefined
// or commutative operation, a Bcast, a Barrier) do the same in a block of
// shared memory of the request's own, made once at Init: rank 0 creates
// a segment (transport.Segments, named as a window's are, and unlinked
// once every rank has mapped it), with, for every rank, a line holding
// the number of its last Start (seq) and two buffers of the
// contribution's size, by parity of the Start's number.
//
// A Start copies the rank's contribution into its buffer for that Start
// and stores the Start's number (an atomic store: the bytes before it are
// visible to whoever loads the number) and returns: no message, no
// goroutine, no timer, nothing allocated. A Wait or Test finds the
// request complete once every rank's number has reached its own Start's;
// it then combines every rank's buffer in rank order 0..p-1 into its own
// output (or copies the root's), so that every rank gets the same bits.
//
// Nobody overwrites a buffer still to be read: a rank writes the buffer
// of Start k+2 only after its Start k+1 completed, which needs every
// rank's number to have reached k+1; a rank publishes k+1 only after its
// Start k completed, and it reads the buffers of Start k when that Start
// completes, before it returns from that Wait or Test. So the numbers the
// ranks publish anyway say that every buffer of k was read.
//
// A Wait watches the numbers for the poll time (progress.WatchShared),
// then parks on the request's engine request, which a watcher goroutine
// of the request (backstop) completes when the numbers are in: it sleeps
// on a word of the block that a Start clears and wakes (a futex shared
// between the processes), at most shmNap at a time, and fails the
// request with ErrProcFailed when a rank of the communicator is lost,
// the communicator is revoked or the job fails. WaitAny and friends start
// the same watcher before they park, and Test and GetStatus when they
// find the Start incomplete, so that a loop of them sees a lost rank
// too. The parked wait is an ordinary engine
// wait for hang diagnosis, described as a meeting's wait on the
// request's communicator.
//
// The ranks vote on this road in the record Init agrees on (a rank that
// reaches some rank otherwise, one process hosting several ranks, votes
// no), and take it only if all can; if the block cannot be made or
// mapped on some rank, every rank falls back to the road over messages
// (collPlan) too.

// shmRoad marks, in collInitPub, a request that may go by publications
// in shared memory.
const shmRoad = 0x53686d5075626c69 // "ShmPubli"

// shmPubMax bounds the bytes a rank publishes on the shared-memory road;
// above it the road over messages is as fast or faster (docs/collectives.md:
// level at 2 KiB, ahead at 4 KiB on a quiet machine, 2 ranks).
const shmPubMax = 2 << 10

// shmPubRanks bounds the ranks of a communicator on the shared-memory
// road: each rank's Wait reads every rank's number and buffer.
const shmPubRanks = 16

// shmLine is the room of one rank's Start number at the head of the
// block: a cache line each, so that ranks publishing do not share one.
const shmLine = 64

// A shmColl is what a persistent collective by publications in shared
// memory keeps from Init to Free.
type shmColl struct {
	r    *Request
	v    *Comm // the request's pinned view
	me   int
	mem  []byte           // this rank's mapping of the block
	seqs []*atomic.Uint64 // every rank's published Start number
	// sleep is the block's first word: 1 while a watcher of some rank
	// sleeps on it (backstop), cleared by the Start that wakes it.
	sleep *atomic.Uint32
	// bufs[i][b] is rank i's buffer for Starts of parity b.
	bufs [][2][]byte
	send []byte     // what the rank publishes (nil: nothing)
	recv []byte     // where its result goes (nil: it gets none)
	op   coll.VecOp // nil: recv gets rank from's buffer
	acc  []byte
	from int
	k    uint64 // the Start in flight
	// watched is the Start whose watcher runs (backstop), under r.mu.
	watched uint64
	er      engine.Request
	done    func() bool // ready, made once
	giveUp  func() error
}

// shmFits reports whether a persistent collective of c whose
// publication is n bytes may go by publications in shared memory: every
// other rank is a process of this node reached by shared memory, the
// ranks' data have one representation, and c is an intracommunicator
// with at least two ranks.
func (c *Comm) shmFits(n int) bool {
	p := c.p
	if n > shmPubMax || len(c.group) < 2 || len(c.group) > shmPubRanks || c.inter != nil || c.shadow == nil || c.ext || p.job.inproc || p.reprs != nil {
		return false
	}
	for r, g := range c.group {
		if r != c.rank && p.segmentsFor(g) == nil {
			return false
		}
	}
	return true
}

// shmLayout returns the size of the block of p ranks publishing n bytes,
// and the stride of one rank's two buffers.
func shmLayout(p, n int) (total, stride int) {
	stride = (n + shmLine - 1) / shmLine * shmLine
	return (p+1)*shmLine + 2*p*stride, stride
}

// shmSetup makes and maps the block of a request of c publishing n bytes
// on tag base tag: rank 0 creates it, the others map it, and every rank
// learns whether all did. It returns nil on every rank if one failed
// (the request then goes over messages) and an error only if the
// agreement itself failed.
func (c *Comm) shmSetup(tag, n int) ([]byte, error) {
	p := c.p
	total, _ := shmLayout(len(c.group), n)
	g0 := c.group[0]
	// Named after rank 0's inbox, through the transport towards another
	// rank (shmFits: every other rank has one).
	via := g0
	if c.rank == 0 {
		via = c.group[1]
	}
	name := p.segmentsFor(via).SegmentName(g0, segmentSuffix("c", uint64(c.ctx)<<32|uint64(uint32(tag))))
	agree := func(ok bool) (bool, error) {
		var rec [8]byte
		if ok {
			binary.LittleEndian.PutUint64(rec[:], ^uint64(0))
		}
		res, err := coll.Allreduce(c.coll(), rec[:], persistAgree, true, c.collTag())
		if err != nil {
			return false, err
		}
		return binary.LittleEndian.Uint64(res) == ^uint64(0), nil
	}
	var mem []byte
	if c.rank == 0 {
		mem, _ = createSegment(name, total)
	}
	made, err := agree(c.rank != 0 || mem != nil)
	if err == nil && made && c.rank != 0 {
		mem, _ = openSegment(name, total)
	}
	all := false
	if err == nil && made {
		all, err = agree(mem != nil)
	}
	if c.rank == 0 && mem != nil {
		removeSegment(name)
	}
	if err != nil || !all {
		if mem != nil {
			unmapSegment(mem)
		}
		return nil, err
	}
	return mem, nil
}

// newShmColl makes the shmColl of spec over the block mem, on the pinned
// view v.
func newShmColl(v *Comm, mem []byte, n int, spec *pubSpec) *shmColl {
	p := len(v.group)
	_, stride := shmLayout(p, n)
	pc := &shmColl{v: v, me: v.rank, mem: mem, send: spec.send, recv: spec.recv, op: spec.op, from: spec.from}
	pc.seqs = make([]*atomic.Uint64, p)
	pc.bufs = make([][2][]byte, p)
	pc.sleep = (*atomic.Uint32)(unsafe.Pointer(&mem[0]))
	for i := range p {
		pc.seqs[i] = (*atomic.Uint64)(unsafe.Pointer(&mem[(i+1)*shmLine]))
		for b := range 2 {
			off := (p+1)*shmLine + (2*i+b)*stride
			pc.bufs[i][b] = mem[off : off+n : off+n]
		}
	}
	if pc.op != nil && pc.recv != nil {
		pc.acc = AsBytes(make([]uint64, (len(pc.recv)+7)/8))[:len(pc.recv)]
	}
	pc.er.W = engine.NewWaiter()
	pc.done = pc.ready
	pc.giveUp = v.shmGiveUp()
	return pc
}

// shmGiveUp returns the test of a wait for the ranks of c between its
// naps: a rank of c lost, c revoked, the job aborted or failed.
func (c *Comm) shmGiveUp() func() error {
	p := c.p
	ctx := c.shadow.ctx
	return func() error {
		if p.Eng.Healthy() {
			if f := p.job.Failure(); f != nil {
				return f
			}
			return nil
		}
		if err := p.Eng.Err(); err != nil {
			return err
		}
		for r, g := range c.group {
			if err := p.Eng.Lost(g); err != nil {
				return fmt.Errorf("%w: rank %d of %s: %w", ErrProcFailed, r, c.Name(), err)
			}
		}
		if err := p.Eng.Revoked(ctx); err != nil {
			return err
		}
		if err := p.Eng.Revoked(c.ctx); err != nil {
			return err
		}
		return p.job.Failure()
	}
}

// startLocked is the request's Start, r.mu held: publish and return.
func (pc *shmColl) startLocked(r *Request) error {
	if !pc.v.p.Eng.Healthy() {
		if err := pc.giveUp(); err != nil {
			class := ErrProcFailed
			if errors.Is(err, ErrRevoked) {
				class = ErrRevoked
			}
			return r.c.fail("Start", class, loc{}, "%s: %v", pc.v.Name(), err)
		}
	}
	pc.k++
	k := pc.k
	pc.er.Reset()
	// As a meeting's wait (postMeetWait), for hang reports.
	pc.er.Context, pc.er.Peer, pc.er.Tag = pc.v.shadow.ctx, engine.AnySource, meetTag
	r.er = &pc.er
	copy(pc.bufs[pc.me][k&1], pc.send)
	pc.seqs[pc.me].Store(k)
	// A sleeping watcher stored the word before it looked at the numbers
	// once more: of it and this Start, one sees the other.
	if pc.sleep.Load() != 0 && pc.sleep.CompareAndSwap(1, 0) {
		wakeOn(pc.sleep)
	}
	return nil
}

// ready reports whether every rank has published the Start in flight.
func (pc *shmColl) ready() bool {
	k := pc.k
	for _, s := range pc.seqs {
		if s.Load() < k {
			return false
		}
	}
	return true
}

// watch is the request's Wait before it parks, r.mu held: it watches the
// numbers for the poll time and, if they are not in, starts the watcher
// that completes the engine request the Wait then parks on.
func (pc *shmColl) watch() bool {
	if pc.v.p.job.Prog.WatchShared(pc.done) {
		return true
	}
	pc.backstopLocked()
	return false
}

// backstopLocked starts the watcher of the Start in flight unless it
// runs, r.mu held.
func (pc *shmColl) backstopLocked() {
	if pc.watched == pc.k {
		return
	}
	pc.watched = pc.k
	go pc.backstop(pc.k)
}

// shmNap bounds one sleep of a watcher: between two, it asks giveUp.
const shmNap = time.Millisecond

// backstop completes Start k once every rank has published it, or fails
// it when giveUp says the ranks cannot. It sleeps on the block's sleep
// word, which the Start of another rank clears and wakes. It looks
// under r.mu, where a Start or Free would have told it that it is too
// late: the request has moved on to another Start, or its block is gone
// (a sleep on an unmapped word returns at once).
func (pc *shmColl) backstop(k uint64) {
	r := pc.r
	for {
		r.mu.Lock()
		if r.is(fFreed) || pc.k != k || r.er != &pc.er {
			r.mu.Unlock()
			return
		}
		if !pc.ready() {
			pc.sleep.Store(1)
		}
		if pc.ready() {
			pc.er.CompleteOnce(pubDone)
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		if err := pc.giveUp(); err != nil {
			r.mu.Lock()
			if !r.is(fFreed) && pc.k == k && r.er == &pc.er && !pc.ready() {
				pc.er.FailOnce(fmt.Errorf("%w: %s waited for its ranks: %w", ErrProcFailed, r.opName(), err))
			}
			r.mu.Unlock()
			return
		}
		sleepOn(pc.sleep, 1, shmNap)
	}
}

// finish gives a completed Start its result: every rank's buffer of Start
// pc.k combined in rank order into recv, or rank from's copied there.
func (pc *shmColl) finish(engine.Status) error {
	if pc.recv == nil {
		return nil
	}
	par := pc.k & 1
	if pc.op == nil {
		copy(pc.recv, pc.bufs[pc.from][par])
		return nil
	}
	a := pc.acc
	copy(a, pc.bufs[0][par])
	for i := 1; i < len(pc.bufs); i++ {
		pc.op(a, pc.bufs[i][par])
	}
	copy(pc.recv, a)
	return nil
}

// freed unmaps the block once the request is freed (inactive: Free of an
// active one is refused). A watcher still running looks at r.mu first
// and finds the request freed.
func (pc *shmColl) freed() {
	unmapSegment(pc.mem)
	pc.mem = nil
}

// shmRequest makes the request of a persistent collective op by
// publications in shared memory on tag base tag, or returns nil if the
// block could not be made on every rank.
func (c *Comm) shmRequest(op string, tag int, spec *pubSpec) (*Request, error) {
	n := len(spec.send)
	if spec.recv != nil && len(spec.recv) > n {
		n = len(spec.recv)
	}
	mem, err := c.shmSetup(tag, n)
	if err != nil || mem == nil {
		return nil, err
	}
	pc := newShmColl(c.pinnedView(tag), mem, n, spec)
	r := c.persistentColl(op, pc.start, pc.finish)
	pc.r = r
	r.x.pub = pc
	// A Wait that parks has watched for the poll time already (watch).
	r.x.parkNow = true
	r.x.freed = pc.freed
	return r, nil
}

// start is startLocked for a caller that does not hold r.mu.
func (pc *shmColl) start(r *Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return pc.startLocked(r)
}
