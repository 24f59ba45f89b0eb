package mpi

import (
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
)

// Wildcards and special values.
const (
	// AnySource matches a message from any rank (MPI_ANY_SOURCE).
	AnySource = engine.AnySource
	// AnyTag matches a message with any tag (MPI_ANY_TAG).
	AnyTag = engine.AnyTag
	// ProcNull is a rank that does not exist: sends to it and receives from
	// it complete at once and move nothing (MPI_PROC_NULL).
	ProcNull = -2
	// Undefined is the color that leaves a rank out of Split, and the count
	// that cannot be expressed in a datatype (MPI_UNDEFINED).
	Undefined = -32766
	// TagUB is the largest valid tag (MPI_TAG_UB).
	TagUB = 1<<30 - 1
)

// Comm is a communicator: a group of ranks and a private space for their
// messages (MPI_Comm). A message sent on one communicator can only be
// received on the same communicator. A Comm is safe for use by many
// goroutines at once.
type Comm struct {
	p     *proc
	ctx   uint32 // point-to-point context; ctx+1 carries collectives
	rank  int
	group []int // world rank of each member
	name  string

	errh  atomic.Pointer[ErrHandler]
	seq   atomic.Uint32 // collective call number, for collective tags
	nbseq atomic.Uint32 // non-blocking collective call number (nbCollTag)
	freed atomic.Bool
	mix   atomic.Uint32 // mixed's answer, once known in a mixed job: 1 no, 2 yes (hetero.go)
	// partNext is the id of the next partitioned send made on c
	// (part.go: partDataTag).
	partNext atomic.Uint32

	shadow    *Comm  // the same members on the collective context ctx+1
	pinned    int    // non-blocking collective views: 1 + the tag base they own
	freeEpoch uint64 // pinned views: freeEpoch when the call was made (typeProblem)
	// ownMeet: a pinned view that meets in memory at a meeting point of
	// its own, keyed by its tag base (a persistent collective's view,
	// which runs one call at a time: coll_persist.go).
	ownMeet bool
	hc      *hierCache
	// inColl is 1 while one of this rank's goroutines is in a blocking
	// collective on c (enterColl).
	inColl atomic.Uint32
	// spareCall is a typed collective call kept for the next one on c
	// (coll_call.go typedCall).
	spareCall atomic.Pointer[collCall]
	// arChoice remembers the last allreduce algorithm chosen (coll_choice.go).
	arChoice atomic.Pointer[vecChoice]
	// meetp is where the members meet in memory, once looked up
	// (coll_meet.go).
	meetp atomic.Pointer[meet]
	// bcChoice remembers the last broadcast algorithm chosen (coll_choice.go).
	bcChoice atomic.Pointer[algChoice]
	// a2aChoice remembers the last alltoall algorithm chosen (coll_choice.go).
	a2aChoice atomic.Pointer[algChoice]

	topo *topology // Cartesian, graph or distributed graph topology; nil: none

	// inter is set on an intercommunicator (intercomm.go): then rank is
	// the caller's rank in the local group and group lists the remote
	// group, the ranks point-to-point calls address.
	inter *interComm
	attrs attrTable            // cached attributes (attr.go)
	info  atomic.Pointer[Info] // hints set with SetInfo (info.go)

	ftState commFT // acknowledged failures (ft.go)
	// ext: a member is a process of another job, reached through a link
	// (port.go): no meeting in memory, no node hierarchy.
	ext bool

	// buf is the communicator's own buffer for buffered sends
	// (Comm.AttachBuffer), made on first attach; sess is the session
	// the communicator was made from, whose buffer comes next (buffer.go).
	buf  atomic.Pointer[engine.BsendBuffer]
	sess *Session
}

// newComm makes a communicator and its collective shadow.
func newComm(p *proc, ctx uint32, rank int, group []int, name string) *Comm {
	c := &Comm{p: p, ctx: ctx, rank: rank, group: group, name: name, hc: &hierCache{}}
	for _, w := range group {
		if w >= p.Size {
			c.ext = true // a member of another job (port.go)
			break
		}
	}
	c.shadow = &Comm{p: p, ctx: ctx + 1, rank: rank, group: group, name: name, ext: c.ext}
	if p.ft != nil {
		p.ft.adopt(c) // ft.go
	} else {
		p.noteComm(c)
	}
	return c
}

// coll returns the point-to-point service collectives on c run on: c's
// members on c's private collective context, which user messages (even
// AnySource/AnyTag receives) can never match.
func (c *Comm) coll() coll.Comm { return collComm{c.shadow} }

// newWorld makes the world communicator of p.
func newWorld(p *proc, n int) *Comm {
	g := make([]int, n)
	for i := range g {
		g[i] = i
	}
	p.ctx.reserve(0)         // world
	p.ctx.reserve(1)         // reserved for a per-process communicator
	p.ctx.reserve(bootCtxID) // sessions' agreements (session.go)
	return newComm(p, 0, p.Rank, g, "WORLD")
}

// Rank returns the caller's rank in c, from 0 to Size()-1. A nil *Comm
// (what CartCreate, GraphCreate and Split give ranks left out, MPI's
// MPI_COMM_NULL) has rank Undefined.
func (c *Comm) Rank() int {
	if c == nil {
		return Undefined
	}
	return c.rank
}

// Size returns the number of ranks in c; for an intercommunicator, the
// size of the local group (MPI_Comm_size). A nil *Comm has size 0.
func (c *Comm) Size() int {
	if c == nil {
		return 0
	}
	if c.inter != nil {
		return len(c.inter.local)
	}
	return len(c.group)
}

// Name returns c's name: "WORLD", or a name set with SetName, or a
// generated description.
func (c *Comm) Name() string {
	if c == nil {
		return "nil communicator"
	}
	return c.name
}

// SetName names c in error messages (MPI_Comm_set_name). On a nil *Comm
// it does nothing.
func (c *Comm) SetName(name string) {
	if c == nil {
		return
	}
	c.name = name
	c.shadow.name = name
}

// SetErrHandler sets what happens when a call on c fails
// (MPI_Comm_set_errhandler). Communicators made from c inherit it. On a
// nil *Comm it does nothing: calls on a nil communicator return their
// error (ErrComm) and call no handler.
func (c *Comm) SetErrHandler(h *ErrHandler) {
	if c == nil {
		return
	}
	c.errh.Store(h)
}

// ErrHandler returns c's error handler. A nil *Comm answers ErrorsReturn,
// what its calls do: they return ErrComm.
func (c *Comm) ErrHandler() *ErrHandler {
	if c == nil {
		return ErrorsReturn
	}
	if h := c.errh.Load(); h != nil {
		return h
	}
	return ErrorsReturn
}

// WorldRank returns the world rank of the member with rank r of c. For an
// intercommunicator, r is a rank of the remote group, as in point-to-point
// calls. It is Undefined for a rank c does not have, and on a nil *Comm.
func (c *Comm) WorldRank(r int) int {
	if c == nil || r < 0 || r >= len(c.group) {
		return Undefined
	}
	return c.group[r]
}

// members returns the number of ranks point-to-point calls on c address
// (the remote group of an intercommunicator); 0 for a nil *Comm, so that
// a call can size its per-rank arguments before its own check of c
// reports ErrComm.
func (c *Comm) members() int {
	if c == nil {
		return 0
	}
	return len(c.group)
}

// check validates c for call op.
func (c *Comm) check(op string) error {
	if c == nil || c.p == nil {
		e := (*Comm)(nil).errorf(op, ErrComm, loc{}, "").(*Error)
		e.Comm = "a nil communicator"
		return e
	}
	if c.freed.Load() {
		return c.errorf(op, ErrComm, loc{}, "communicator has been freed")
	}
	return nil
}

// Free releases c (MPI_Comm_free): the delete callbacks of its attributes
// run (in the reverse order of setting), then its context id is released.
// Pending operations on it complete normally; c must not be used again. If
// a delete callback fails, Free returns its error and c stays valid.
func (c *Comm) Free() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Free", c, Undefined, Undefined), &err)
	}
	return c.free()
}

// free is Free without the profiler hook, for the package's own use.
func (c *Comm) free() error {
	if err := c.check("Free"); err != nil {
		return err
	}
	if c.ctx == 0 || c.ctx == 2*selfCtxID {
		return c.fail("Free", ErrComm, loc{}, "the predefined communicator %s cannot be freed", c.Name())
	}
	if c.pinned != 0 {
		return c.fail("Free", ErrComm, loc{}, "not a communicator of the caller")
	}
	if err := c.deleteAllAttrs("Free"); err != nil {
		return err
	}
	if c.freed.Swap(true) {
		return c.fail("Free", ErrComm, loc{}, "communicator has been freed")
	}
	c.p.ctx.release(c.ctx / 2)
	c.hc.free()
	c.leaveMeet()
	return nil
}

// Dup returns a new communicator with the same members and ranks as c and
// a new context, so that its messages never mix with c's (MPI_Comm_dup).
// It is collective over c.
//
// Attributes are copied by their keyval's copy callback (CreateKeyval), and
// the info hints are inherited. An intercommunicator is duplicated into an
// intercommunicator between the same groups, collectively over both.
//
// A rank holds at most 16384 communicators at once (context ids): past
// that, Dup, Split and every call that makes a communicator fail with
// ErrOther until some are freed with Free.
func (c *Comm) Dup() (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Dup", c, Undefined, Undefined), &err)
	}
	if err := c.check("Dup"); err != nil {
		return nil, err // before c.info is read: c may be nil
	}
	return c.dupInfo("Dup", c.info.Load())
}

// dupInfo duplicates c and gives the new communicator info (nil: none).
func (c *Comm) dupInfo(op string, info *Info) (*Comm, error) {
	if err := c.check(op); err != nil {
		return nil, err
	}
	d, err := c.dupContext(op)
	if err != nil {
		return nil, err
	}
	if err := c.finishDup(op, d, info); err != nil {
		d.free()
		return nil, err
	}
	return d, nil
}

// dupContext makes a communicator with c's members on a new context.
func (c *Comm) dupContext(op string) (*Comm, error) {
	if c.inter != nil {
		return c.interDup(op)
	}
	id, err := c.newContext()
	if err != nil {
		return nil, c.ctxFail(op, err)
	}
	return newComm(c.p, id*2, c.rank, c.group, c.name+".dup"), nil
}

// finishDup gives d, a duplicate of c, c's error handler and attributes
// and the hints info.
func (c *Comm) finishDup(op string, d *Comm, info *Info) error {
	d.errh.Store(c.errh.Load())
	d.sess = c.sess
	d.topo = c.topo // a duplicate keeps the topology (immutable, so shared)
	if info != nil {
		d.info.Store(info.Dup())
	}
	return c.copyAttrs(op, d)
}

// Split partitions c into one new communicator per color
// (MPI_Comm_split). Members with the same color join the same
// communicator, ordered by key and then by their rank in c. A rank that
// passes color Undefined gets a nil *Comm. Split is collective over c.
//
// On an intercommunicator, the members of each group with the same color
// form the two groups of a new intercommunicator; a color present in only
// one group gives nil.
func (c *Comm) Split(color, key int) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Split", c, Undefined, Undefined), &err)
	}
	return c.split(color, key)
}

// split is Split without the profiler hook, for the package's own use.
func (c *Comm) split(color, key int) (*Comm, error) {
	if err := c.check("Split"); err != nil {
		return nil, err
	}
	if color < 0 && color != Undefined {
		return nil, c.fail("Split", ErrArg, loc{}, "color %d is negative (only Undefined may be)", color)
	}
	if c.inter != nil {
		return c.interSplit(color, key)
	}
	var mine [16]byte
	binary.LittleEndian.PutUint64(mine[:], uint64(int64(color)))
	binary.LittleEndian.PutUint64(mine[8:], uint64(int64(key)))
	all, err := coll.Allgather(c.coll(), mine[:], c.collTag())
	if err != nil {
		return nil, c.fail("Split", ErrIntern, loc{}, "exchanging colors: %v", err)
	}
	type member struct{ key, rank int }
	var members []member
	for r, b := range all {
		if len(b) != 16 {
			return nil, c.fail("Split", ErrIntern, loc{}, "bad color record from rank %d", r)
		}
		if int(int64(binary.LittleEndian.Uint64(b))) == color {
			members = append(members, member{int(int64(binary.LittleEndian.Uint64(b[8:]))), r})
		}
	}
	// Every rank takes part in choosing the context, even those left out.
	id, err := c.newContext()
	if err != nil {
		return nil, c.ctxFail("Split", err)
	}
	if color == Undefined {
		c.p.ctx.release(id)
		return nil, nil
	}
	sort.SliceStable(members, func(i, j int) bool { return members[i].key < members[j].key })
	group := make([]int, len(members))
	rank := 0
	for i, m := range members {
		group[i] = c.group[m.rank]
		if m.rank == c.rank {
			rank = i
		}
	}
	s := newComm(c.p, id*2, rank, group, fmt.Sprintf("%s.split(%d)", c.name, color))
	s.errh.Store(c.errh.Load())
	return s, nil
}

// collTag returns the base tag for the next collective call on c. Every
// member calls collectives on c in the same order, so they agree on it; each
// call may use 8 tags from the base.
func (c *Comm) collTag() int {
	if c.pinned != 0 {
		return c.pinned - 1
	}
	return int(c.seq.Add(1)%(1<<24)) * 8
}

// nbTagBit marks the tag bases of non-blocking collectives. They are
// numbered apart from the blocking ones (nbCollTag), as MPICH and Open
// MPI keep them apart: a rank that starts an Iallreduce and then calls
// Barrier, beside one that calls Barrier and then starts the Iallreduce,
// completes both (mpi4py's fallback for MPI_Comm_iagree relies on it).
// Each kind still has to be called in the same order on every member.
// Blocking tags stay below 1<<27 (groupTagBit's rule), so the two ranges
// never meet.
const nbTagBit = 1 << 28

// nbCollTag is collTag for a non-blocking collective, reserving units
// sequence numbers (8 tags each) from the non-blocking count.
func (c *Comm) nbCollTag(units int) int {
	if c.pinned != 0 {
		return c.pinned - 1
	}
	u := uint32(units)
	first := c.nbseq.Add(u) - u + 1
	return nbTagBit | int(first%(1<<24))*8
}

// Context ids. Context id k gives the point-to-point context 2k and the
// collective context 2k+1. A new communicator's id must be free on every
// member: the members AND their free masks together and take the lowest
// common free id. Goroutines creating communicators at the same time may
// pick the same id locally; a second round confirms the choice everywhere
// or retries.
const ctxIDs = 1 << 14

type ctxAlloc struct {
	mu   sync.Mutex
	used [ctxIDs / 64]uint64
}

func (a *ctxAlloc) reserve(id uint32) {
	a.mu.Lock()
	a.used[id/64] |= 1 << (id % 64)
	a.mu.Unlock()
}

func (a *ctxAlloc) release(id uint32) {
	a.mu.Lock()
	a.used[id/64] &^= 1 << (id % 64)
	a.mu.Unlock()
}

// freeMask returns the bitmap of free ids as bytes.
func (a *ctxAlloc) freeMask() []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := make([]byte, len(a.used)*8)
	for i, w := range a.used {
		binary.LittleEndian.PutUint64(b[i*8:], ^w)
	}
	return b
}

// tryTake reserves id if it is still free.
func (a *ctxAlloc) tryTake(id uint32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used[id/64]&(1<<(id%64)) != 0 {
		return false
	}
	a.used[id/64] |= 1 << (id % 64)
	return true
}

// newContext agrees with every member of c on a context id free on all of them.
func (c *Comm) newContext() (uint32, error) {
	cc := c.coll()
	return c.p.agreeContext(func(buf []byte) ([]byte, error) {
		return coll.Allreduce(cc, buf, agreeCombine, true, c.collTag())
	})
}

// enterColl marks c as in a blocking collective, op, of this rank, or
// returns an error if another goroutine of this rank is in one on c
// already. MPI requires every rank to call the collectives of a
// communicator in one order, which two goroutines calling at once cannot
// give: over goroutine ranks the second one's meeting waited for ever,
// over processes the calls' messages paired the goroutines of one rank
// with the other's in whatever order they took their tags, and mixed
// their contributions without a word. One compare-and-swap on a word of
// the rank's own, and a store at exitColl, cost nothing measurable (the
// 8-byte Allreduce on goroutine ranks, docs/performance.md). The
// non-blocking collectives' views (pinned) are not marked: they overlap
// one another and blocking calls legitimately.
func (c *Comm) enterColl(op string) error {
	if c == nil || c.pinned != 0 || c.inColl.CompareAndSwap(0, 1) {
		return nil
	}
	return c.fail(op, ErrOther, loc{}, "another goroutine of this rank is in a blocking collective on %s: the collectives of a communicator must be called in the same order on every rank, by one goroutine at a time (give each goroutine a communicator of its own with Dup, or start the calls with the non-blocking forms)", c.Name())
}

// exitColl ends what enterColl marked.
func (c *Comm) exitColl() {
	if c != nil && c.pinned == 0 {
		c.inColl.Store(0)
	}
}
