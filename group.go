package mpi

import (
	"fmt"
	"sync/atomic"
)

// Results of CompareGroups and CompareComms (MPI_IDENT, MPI_CONGRUENT,
// MPI_SIMILAR, MPI_UNEQUAL).
const (
	// Ident: the same members in the same order (groups), or the very
	// same communicator.
	Ident = iota
	// Congruent: communicators with the same members in the same order
	// but different contexts.
	Congruent
	// Similar: the same members in another order.
	Similar
	// Unequal: different members.
	Unequal
)

// Group is an ordered set of processes (MPI_Group), each named by its
// world rank. A Group is immutable and may be shared by goroutines; the
// operations that derive one group from others return a new Group.
// Groups exist only on the rank that made them: Rank reports the position
// of that rank in the group.
type Group struct {
	ranks []int       // world rank of each member, in group order
	index map[int]int // world rank -> group rank
	me    int         // world rank of the rank that owns this value (-1: none)
	freed atomic.Bool
	// p is the rank that owns this value, where it is known (groups of
	// communicators and process sets, and those derived from them):
	// CommCreateFromGroup needs it to know whose rank creates, as
	// goroutine ranks share a process.
	p *proc
	// sess is the session the group comes from (Session.GroupFromPset,
	// and the groups derived from one): its communicators use the
	// session's buffer for buffered sends.
	sess *Session
}

// GroupEmpty is the group with no members (MPI_GROUP_EMPTY).
var GroupEmpty = &Group{me: -1, index: map[int]int{}}

// newGroup makes a group of the world ranks ranks for the rank whose world
// rank is me. ranks must not be modified afterwards.
func newGroup(ranks []int, me int) *Group {
	idx := make(map[int]int, len(ranks))
	for i, w := range ranks {
		idx[w] = i
	}
	return &Group{ranks: ranks, index: idx, me: me}
}

// errorf builds a group error for call op.
func (g *Group) errorf(op string, class error, format string, args ...any) error {
	e := &Error{Class: class, Op: op, Rank: NoRank, Msg: fmt.Sprintf(format, args...)}
	if g != nil && g.me >= 0 {
		e.Rank = g.me
	}
	return e
}

// check validates g for call op.
func (g *Group) check(op string) error {
	if g == nil {
		return (*Group)(nil).errorf(op, ErrGroup, "nil group")
	}
	if g.freed.Load() {
		return g.errorf(op, ErrGroup, "group has been freed")
	}
	return nil
}

// Group returns the group of c's members, in rank order (MPI_Comm_group).
// For an intercommunicator it is the local group.
func (c *Comm) Group() *Group {
	if c == nil || c.p == nil {
		return nil
	}
	members := c.group
	if c.inter != nil {
		members = c.inter.local
	}
	g := newGroup(members, c.p.Rank)
	g.p = c.p
	return g
}

// Size returns the number of members of g (MPI_Group_size).
func (g *Group) Size() int {
	if g == nil {
		return 0
	}
	return len(g.ranks)
}

// Rank returns the rank of the calling process in g, or Undefined if it
// is not a member (MPI_Group_rank).
func (g *Group) Rank() int {
	if g == nil {
		return Undefined
	}
	if r, ok := g.index[g.me]; ok {
		return r
	}
	return Undefined
}

// WorldRanks returns the world rank of each member of g, in group order.
func (g *Group) WorldRanks() []int {
	if g == nil {
		return nil
	}
	return append([]int(nil), g.ranks...)
}

// Free releases g (MPI_Group_free). Freeing GroupEmpty does nothing.
// Communicators made from g are not affected.
func (g *Group) Free() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Group.Free", nil, Undefined, Undefined), &err)
	}
	if err := g.check("GroupFree"); err != nil {
		return err
	}
	if g != GroupEmpty {
		g.freed.Store(true)
	}
	return nil
}

// TranslateRanks returns the rank in other of each process that has rank
// ranks[i] in g, or Undefined where that process is not in other
// (MPI_Group_translate_ranks). ProcNull translates to ProcNull.
func (g *Group) TranslateRanks(ranks []int, other *Group) (_ []int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Group.TranslateRanks", nil, Undefined, Undefined), &err)
	}
	const op = "GroupTranslateRanks"
	if err := g.check(op); err != nil {
		return nil, err
	}
	if err := other.check(op); err != nil {
		return nil, err
	}
	out := make([]int, len(ranks))
	for i, r := range ranks {
		switch {
		case r == ProcNull:
			out[i] = ProcNull
		case r < 0 || r >= len(g.ranks):
			return nil, g.errorf(op, ErrRank, "rank %d is not in the group (size %d)", r, len(g.ranks))
		default:
			if o, ok := other.index[g.ranks[r]]; ok {
				out[i] = o
			} else {
				out[i] = Undefined
			}
		}
	}
	return out, nil
}

// CompareGroups returns Ident if a and b have the same members in the
// same order, Similar if they have the same members in another order, and
// Unequal otherwise (MPI_Group_compare).
func CompareGroups(a, b *Group) int {
	if a.Size() != b.Size() {
		return Unequal
	}
	if a == nil || b == nil {
		return Ident // both empty
	}
	same := true
	for i, w := range a.ranks {
		if b.ranks[i] != w {
			same = false
		}
		if _, ok := b.index[w]; !ok {
			return Unequal
		}
	}
	if same {
		return Ident
	}
	return Similar
}

// Compare is CompareGroups(g, other).
func (g *Group) Compare(other *Group) int { return CompareGroups(g, other) }

// owner returns the world rank that owns the result of an operation on g
// and o.
func owner(g, o *Group) int {
	if g.me >= 0 {
		return g.me
	}
	return o.me
}

// ownerProc is the rank that owns the result of an operation on g and o.
func ownerProc(g, o *Group) *proc {
	if g.p != nil {
		return g.p
	}
	return o.p
}

// derived is a group of ranks made from g (and o, or nil), owned by their
// owner.
func derived(ranks []int, g, o *Group) *Group {
	if o == nil {
		o = g
	}
	n := newGroup(ranks, owner(g, o))
	n.p = ownerProc(g, o)
	n.sess = g.sess
	if n.sess == nil {
		n.sess = o.sess
	}
	return n
}

// Union returns the members of g in g's order followed by the members of
// other that are not in g, in other's order (MPI_Group_union).
func (g *Group) Union(other *Group) (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Group.Union", nil, Undefined, Undefined), &err)
	}
	const op = "GroupUnion"
	if err := g.check(op); err != nil {
		return nil, err
	}
	if err := other.check(op); err != nil {
		return nil, err
	}
	out := append([]int(nil), g.ranks...)
	for _, w := range other.ranks {
		if _, ok := g.index[w]; !ok {
			out = append(out, w)
		}
	}
	return derived(out, g, other), nil
}

// Intersection returns the members of g that are also in other, in g's
// order (MPI_Group_intersection).
func (g *Group) Intersection(other *Group) (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Group.Intersection", nil, Undefined, Undefined), &err)
	}
	return g.filter("GroupIntersection", other, true)
}

// Difference returns the members of g that are not in other, in g's
// order (MPI_Group_difference).
func (g *Group) Difference(other *Group) (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Group.Difference", nil, Undefined, Undefined), &err)
	}
	return g.filter("GroupDifference", other, false)
}

// filter returns the members of g that are (in) or are not (!in) members
// of other, in g's order.
func (g *Group) filter(op string, other *Group, in bool) (*Group, error) {
	if err := g.check(op); err != nil {
		return nil, err
	}
	if err := other.check(op); err != nil {
		return nil, err
	}
	var out []int
	for _, w := range g.ranks {
		if _, ok := other.index[w]; ok == in {
			out = append(out, w)
		}
	}
	return derived(out, g, other), nil
}

// checkRanks validates a list of distinct ranks of g for call op.
func (g *Group) checkRanks(op string, ranks []int) error {
	seen := make(map[int]bool, len(ranks))
	for _, r := range ranks {
		if r < 0 || r >= len(g.ranks) {
			return g.errorf(op, ErrRank, "rank %d is not in the group (size %d)", r, len(g.ranks))
		}
		if seen[r] {
			return g.errorf(op, ErrArg, "rank %d is listed twice", r)
		}
		seen[r] = true
	}
	return nil
}

// Incl returns the group of the members of g with ranks ranks, in that
// order: rank i of the new group is rank ranks[i] of g (MPI_Group_incl).
// The ranks must be distinct ranks of g (ErrRank, ErrArg otherwise).
func (g *Group) Incl(ranks []int) (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Group.Incl", nil, Undefined, Undefined), &err)
	}
	return g.incl(ranks)
}

// incl is Incl without the profiler hook, for the package's own use.
func (g *Group) incl(ranks []int) (*Group, error) {
	const op = "GroupIncl"
	if err := g.check(op); err != nil {
		return nil, err
	}
	if err := g.checkRanks(op, ranks); err != nil {
		return nil, err
	}
	out := make([]int, len(ranks))
	for i, r := range ranks {
		out[i] = g.ranks[r]
	}
	return derived(out, g, nil), nil
}

// Excl returns g without the members with ranks ranks, in g's order
// (MPI_Group_excl). The ranks must be distinct ranks of g.
func (g *Group) Excl(ranks []int) (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Group.Excl", nil, Undefined, Undefined), &err)
	}
	return g.excl(ranks)
}

// excl is Excl without the profiler hook, for the package's own use.
func (g *Group) excl(ranks []int) (*Group, error) {
	const op = "GroupExcl"
	if err := g.check(op); err != nil {
		return nil, err
	}
	if err := g.checkRanks(op, ranks); err != nil {
		return nil, err
	}
	drop := make(map[int]bool, len(ranks))
	for _, r := range ranks {
		drop[r] = true
	}
	var out []int
	for i, w := range g.ranks {
		if !drop[i] {
			out = append(out, w)
		}
	}
	return derived(out, g, nil), nil
}

// Range is a triplet {first, last, stride} of ranks: first, first+stride,
// ... while not past last. stride may be negative but not zero.
type Range [3]int

// expand lists the ranks of ranges, checked against g's size: each first
// and last must be a rank of g, strides non-zero, and no rank may appear
// twice.
func (g *Group) expand(op string, ranges []Range) ([]int, error) {
	var out []int
	n := len(g.ranks)
	for _, rg := range ranges {
		first, last, stride := rg[0], rg[1], rg[2]
		if stride == 0 {
			return nil, g.errorf(op, ErrArg, "range %v has stride 0", rg)
		}
		if first < 0 || first >= n || last < 0 || last >= n {
			return nil, g.errorf(op, ErrRank, "range %v leaves the group (size %d)", rg, n)
		}
		for r := first; (stride > 0 && r <= last) || (stride < 0 && r >= last); r += stride {
			out = append(out, r)
		}
	}
	if err := g.checkRanks(op, out); err != nil {
		return nil, err
	}
	return out, nil
}

// RangeIncl is Incl of the ranks the triplets in ranges describe, in that
// order (MPI_Group_range_incl).
func (g *Group) RangeIncl(ranges []Range) (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Group.RangeIncl", nil, Undefined, Undefined), &err)
	}
	const op = "GroupRangeIncl"
	if err := g.check(op); err != nil {
		return nil, err
	}
	ranks, err := g.expand(op, ranges)
	if err != nil {
		return nil, err
	}
	return g.incl(ranks)
}

// RangeExcl is Excl of the ranks the triplets in ranges describe
// (MPI_Group_range_excl).
func (g *Group) RangeExcl(ranges []Range) (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Group.RangeExcl", nil, Undefined, Undefined), &err)
	}
	const op = "GroupRangeExcl"
	if err := g.check(op); err != nil {
		return nil, err
	}
	ranks, err := g.expand(op, ranges)
	if err != nil {
		return nil, err
	}
	return g.excl(ranks)
}
