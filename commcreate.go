package mpi

import (
	"fmt"
	"slices"
)

// Communicator constructors beyond Dup and Split (MPI-3.1 section 6.4),
// comparison, and the predefined Self communicator.

// SplitTypeShared is the split type of SplitType that groups the ranks
// that can share memory: those on the same node (MPI_COMM_TYPE_SHARED).
const SplitTypeShared = 1

// The hardware split types of MPI-4 for SplitType. mpigo knows one level
// of hardware, the node, which it names "mpi_shared_memory" (the only
// value the standard defines; GetHwResourceInfo reports it).
const (
	// SplitTypeHWGuided splits at the hardware level named by the info
	// key "mpi_hw_resource_type" (MPI_COMM_TYPE_HW_GUIDED):
	// "mpi_shared_memory" is SplitTypeShared; a level mpigo does not know,
	// or no such key, gives every rank nil, as the standard asks.
	SplitTypeHWGuided = 2
	// SplitTypeHWUnguided splits at a hardware level strictly smaller
	// than c (MPI_COMM_TYPE_HW_UNGUIDED): the node where c spans several,
	// nil for every rank where c lies within one node.
	SplitTypeHWUnguided = 3
	// SplitTypeResourceGuided is SplitTypeHWGuided under MPI-4.1's name
	// (MPI_COMM_TYPE_RESOURCE_GUIDED), which reads the same info key.
	SplitTypeResourceGuided = 4
)

// HWResourceShared is the value of the info key "mpi_hw_resource_type"
// that names the ranks sharing memory, the node.
const HWResourceShared = "mpi_shared_memory"

// Self returns the communicator that contains only the calling rank
// (MPI_COMM_SELF). It is the same *Comm on every call from this rank and
// cannot be freed. A nil *Comm has none: Self returns nil, on which every
// call fails with ErrComm.
func (c *Comm) Self() *Comm {
	if c == nil || c.p == nil {
		return nil
	}
	p := c.p
	p.selfOnce.Do(func() {
		p.self = newComm(p, 2*selfCtxID, 0, []int{p.Rank}, "SELF")
	})
	return p.self
}

// World returns the calling rank's world communicator (MPI_COMM_WORLD),
// the one its rank function was given. A nil *Comm belongs to no rank:
// World returns nil, on which every call fails with ErrComm.
func (c *Comm) World() *Comm {
	if c == nil || c.p == nil {
		return nil
	}
	return c.p.world
}

// intraOnly fails call op on an intercommunicator.
func (c *Comm) intraOnly(op string) error {
	if err := c.check(op); err != nil {
		return err
	}
	if c.inter != nil {
		return c.fail(op, ErrComm, loc{}, "not available on an intercommunicator")
	}
	return nil
}

// DupWithInfo is Dup, except that the new communicator's hints are a copy
// of info instead of c's (MPI_Comm_dup_with_info).
func (c *Comm) DupWithInfo(info *Info) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.DupWithInfo", c, Undefined, Undefined), &err)
	}
	return c.dupInfo("DupWithInfo", info)
}

// Idup starts a Dup and returns at once (MPI_Comm_idup). The returned
// communicator may be used only once the request has completed (Wait,
// Test, ...); if the request fails, it stays unusable. Like every
// collective, Idup must be called in the same order relative to other
// collectives on c by every member.
func (c *Comm) Idup() (_ *Comm, _ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Idup", c, Undefined, Undefined), &err)
	}
	if err := c.check("Idup"); err != nil {
		return nil, nil, err
	}
	return c.idup(c.info.Load())
}

// IdupWithInfo is Idup, except that the new communicator's hints are a
// copy of info instead of c's (MPI_Comm_idup_with_info).
func (c *Comm) IdupWithInfo(info *Info) (_ *Comm, _ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IdupWithInfo", c, Undefined, Undefined), &err)
	}
	if err := c.check("IdupWithInfo"); err != nil {
		return nil, nil, err
	}
	if info == nil {
		info = NewInfo()
	}
	return c.idup(info.Dup())
}

// idup starts a duplicate of c with the hints info.
func (c *Comm) idup(info *Info) (*Comm, *Request, error) {
	d := &Comm{}
	r, err := c.startColl("Idup", func(v *Comm) error {
		nc, err := v.dupContext("Idup")
		if err != nil {
			return err
		}
		// Hand the new communicator's state over to d, which the caller
		// holds; the request's completion publishes it.
		d.p, d.ctx, d.rank, d.group, d.name, d.shadow, d.inter, d.hc = nc.p, nc.ctx, nc.rank, nc.group, nc.name, nc.shadow, nc.inter, nc.hc
		if err := c.finishDup("Idup", d, info); err != nil {
			d.free()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return d, r, nil
}

// checkSubgroup validates that g is a group of members of c and returns
// the caller's rank in it (Undefined if it is not a member).
func (c *Comm) checkSubgroup(op string, g *Group) (int, error) {
	if err := g.check(op); err != nil {
		return 0, c.handle(err)
	}
	for _, w := range g.ranks {
		if !slices.Contains(c.group, w) {
			return 0, c.fail(op, ErrGroup, loc{}, "world rank %d is in the group but not in %s", w, c.Name())
		}
	}
	if r, ok := g.index[c.p.Rank]; ok {
		return r, nil
	}
	return Undefined, nil
}

// Create returns a communicator of the members of g, in g's order
// (MPI_Comm_create). It is collective over all of c, and every rank must
// pass the same group, a subset of c's; ranks not in g get nil.
//
// On an intercommunicator, each group passes a subgroup of its own group
// and the result is an intercommunicator between the two subgroups.
func (c *Comm) Create(g *Group) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Create", c, Undefined, Undefined), &err)
	}
	const op = "Create"
	if err := c.check(op); err != nil {
		return nil, err
	}
	if c.inter != nil {
		return c.interCreate(g)
	}
	rank, err := c.checkSubgroup(op, g)
	if err != nil {
		return nil, err
	}
	id, err := c.newContext()
	if err != nil {
		return nil, c.ctxFail(op, err)
	}
	if rank == Undefined {
		c.p.ctx.release(id)
		return nil, nil
	}
	n := newComm(c.p, id*2, rank, g.ranks, fmt.Sprintf("%s.create", c.name))
	n.errh.Store(c.errh.Load())
	return n, nil
}

// CreateGroup returns a communicator of the members of g, in g's order
// (MPI_Comm_create_group). Unlike Create it is collective only over the
// members of g: other ranks of c need not call it and may be doing
// anything else. Concurrent CreateGroup calls on c whose groups overlap
// must use different tags. A caller not in g gets nil.
//
// The members agree on a context id among themselves, on c's collective
// context with tag (marked so that it cannot match c's collectives).
func (c *Comm) CreateGroup(g *Group, tag int) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CreateGroup", c, Undefined, tag), &err)
	}
	const op = "CreateGroup"
	if err := c.intraOnly(op); err != nil {
		return nil, err
	}
	if tag < 0 || tag > TagUB {
		return nil, c.fail(op, ErrTag, loc{}, "tag %d: tags run from 0 to %d", tag, TagUB)
	}
	rank, err := c.checkSubgroup(op, g)
	if err != nil || rank == Undefined {
		return nil, err
	}
	// The members, addressed by their ranks in c on c's collective
	// context, so that a message always names its true sender.
	cc := subComm{collComm{c.shadow}, make([]int, len(g.ranks)), rank}
	for i, w := range g.ranks {
		cc.ranks[i] = slices.Index(c.group, w)
	}
	id, err := c.p.agreeContext(func(buf []byte) ([]byte, error) {
		return tagAllreduce(cc, buf, agreeCombine, groupTagBit|tag)
	})
	if err != nil {
		return nil, c.ctxFail(op, err)
	}
	n := newComm(c.p, id*2, rank, g.ranks, fmt.Sprintf("%s.group(%d)", c.name, tag))
	n.errh.Store(c.errh.Load())
	return n, nil
}

// SplitType partitions c by a property of the ranks
// (MPI_Comm_split_type). With SplitTypeShared, ranks on the same node
// (the processes a launcher placed on one host; all goroutine ranks of
// mpi.Run, or each group of Config.RanksPerNode of them) join one
// communicator, ordered by key and then by rank in c; a
// rank passing Undefined gets nil. SplitTypeHWGuided,
// SplitTypeResourceGuided and SplitTypeHWUnguided are MPI-4's hardware
// splits (see their constants): each splits at the node or gives nil.
// info is read only by the guided splits, for "mpi_hw_resource_type".
// On an intercommunicator (MPI-4.1) the result is an intercommunicator
// joining the ranks of each group on one node with the other group's
// ranks on that node, as Split joins colors; a node where the other group
// has no rank gives nil. It is collective over c.
func (c *Comm) SplitType(splitType, key int, info *Info) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.SplitType", c, Undefined, Undefined), &err)
	}
	const op = "SplitType"
	if err := c.check(op); err != nil {
		return nil, err
	}
	color := Undefined
	unguided := false
	switch splitType {
	case Undefined:
	case SplitTypeShared:
		color = c.p.node // the node's lowest world rank names it
	case SplitTypeHWGuided, SplitTypeResourceGuided:
		if info != nil {
			if v, _ := info.Get("mpi_hw_resource_type"); v == HWResourceShared {
				color = c.p.node
			}
		}
	case SplitTypeHWUnguided:
		color, unguided = c.p.node, true
	default:
		return nil, c.fail(op, ErrArg, loc{}, "unknown split type %d (want SplitTypeShared, SplitTypeHWGuided, SplitTypeHWUnguided, SplitTypeResourceGuided or Undefined)", splitType)
	}
	s, err := c.split(color, key)
	if unguided && s != nil && s.Size() == c.Size() && s.RemoteSize() == c.RemoteSize() {
		// One node holds all of c: no smaller level to give. Every rank
		// sees the same sizes, so every rank frees its part and gets nil.
		if err := s.Free(); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if s != nil {
		s.name = fmt.Sprintf("%s.shared", c.name)
		if s.shadow != nil {
			s.shadow.name = s.name
		}
	}
	return s, err
}

// CompareComms returns Ident if a and b are the same communicator,
// Congruent if they have the same members in the same order (for
// intercommunicators: both groups), Similar if they have the same members
// in another order, and Unequal otherwise (MPI_Comm_compare).
func CompareComms(a, b *Comm) int {
	if a == b {
		return Ident
	}
	if a == nil || b == nil || (a.inter == nil) != (b.inter == nil) {
		return Unequal
	}
	res := CompareGroups(a.Group(), b.Group())
	if a.inter != nil {
		res = max(res, CompareGroups(newGroup(a.group, -1), newGroup(b.group, -1)))
	}
	switch res {
	case Ident:
		return Congruent
	case Similar:
		return Similar
	}
	return Unequal
}

// Compare is CompareComms(c, other).
func (c *Comm) Compare(other *Comm) int { return CompareComms(c, other) }
