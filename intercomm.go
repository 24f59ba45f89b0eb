package mpi

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/device"
)

// Intercommunicators (MPI-3.1 section 6.6): a communicator between two
// disjoint groups. On an intercommunicator c, c.rank is the caller's rank
// in its own (local) group and c.group lists the world ranks of the other
// (remote) group: point-to-point calls name remote ranks, so the send and
// receive paths translate ranks through c.group exactly as they do on an
// intracommunicator, at the same cost. A message carries its sender's
// rank in the sender's local group, which is the rank the receiver knows
// it by in its remote group, so matching and Status.Source need nothing
// more.
//
// The intercommunicator's context id k is free on every member of both
// groups: context 2k carries point-to-point messages between the groups
// and 2k+1 the collectives' messages between the groups; the collectives'
// steps inside one group run on a private intracommunicator of the local
// group on the derived contexts 2k|ctxLocalBit and 2k+1|ctxLocalBit.

// interComm is the intercommunicator part of a Comm.
type interComm struct {
	local []int // world rank of each member of the local group
	lc    *Comm // the local group, for the collectives' local steps
	// link is the connection to another job whose members the remote
	// group are (port.go), or nil; low says that the local group comes
	// first where both groups must agree on an order (the accepting one).
	link *device.Link
	low  bool
}

// newInterComm makes an intercommunicator on context id id.
func newInterComm(p *proc, id uint32, rank int, local, remote []int, name string) *Comm {
	c := newComm(p, id*2, rank, remote, name)
	lc := newComm(p, id*2|ctxLocalBit, rank, local, name+".local")
	c.inter = &interComm{local: local, lc: lc}
	return c
}

// IsInter reports whether c is an intercommunicator (MPI_Comm_test_inter).
func (c *Comm) IsInter() bool { return c != nil && c.inter != nil }

// RemoteSize returns the size of the remote group of an intercommunicator
// (MPI_Comm_remote_size), and 0 for an intracommunicator.
func (c *Comm) RemoteSize() int {
	if c == nil || c.inter == nil {
		return 0
	}
	return len(c.group)
}

// RemoteGroup returns the remote group of an intercommunicator
// (MPI_Comm_remote_group).
func (c *Comm) RemoteGroup() (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.RemoteGroup", c, Undefined, Undefined), &err)
	}
	if err := c.check("RemoteGroup"); err != nil {
		return nil, err
	}
	if c.inter == nil {
		return nil, c.fail("RemoteGroup", ErrComm, loc{}, "not an intercommunicator")
	}
	return newGroup(c.group, c.p.Rank), nil
}

// encodeRanks and decodeRanks carry lists of world ranks.
func encodeRanks(rs []int) []byte {
	b := make([]byte, 8*len(rs))
	for i, r := range rs {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(r))
	}
	return b
}

func decodeRanks(b []byte) []int {
	rs := make([]int, len(b)/8)
	for i := range rs {
		rs[i] = int(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return rs
}

// exchange sends buf to rank peer of cc and receives peer's buffer, both
// with tag.
func exchange(cc coll.Comm, buf []byte, peer, tag int) ([]byte, error) {
	req, err := cc.Isend(buf, peer, tag)
	if err != nil {
		return nil, err
	}
	in, rerr := cc.RecvAlloc(peer, tag)
	if _, err := req.Wait(); err != nil {
		return nil, err
	}
	return in, rerr
}

// acrossGroups returns an allreduce over the members of two groups: a
// reduction to the leader root of the local group (lcc, tag rtag), an
// exchange of the leaders' results (exch, called at the leader only), and
// a broadcast in the local group (tag btag). f must be commutative, so
// that both leaders compute the same result.
func acrossGroups(lcc coll.Comm, root, rtag, btag int, f coll.Combine, exch func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(buf []byte) ([]byte, error) {
		acc, err := coll.Reduce(lcc, buf, f, true, root, rtag)
		if err != nil {
			return nil, err
		}
		if lcc.Rank() == root {
			theirs, err := exch(append([]byte(nil), acc...))
			if err != nil {
				// Tell the local group, which waits in the broadcast.
				coll.BcastVarAlg(lcc, "", []byte{}, root, btag)
				return nil, err
			}
			if acc, err = f(acc, theirs, true); err != nil {
				coll.BcastVarAlg(lcc, "", []byte{}, root, btag)
				return nil, err
			}
		}
		res, err := coll.BcastVarAlg(lcc, "", acc, root, btag)
		if err != nil {
			return nil, err
		}
		if len(res) == 0 {
			return nil, fmt.Errorf("the group leader failed to reach the other group")
		}
		return res, nil
	}
}

// IntercommCreate makes an intercommunicator between the group of local
// and another, disjoint group (MPI_Intercomm_create). It is collective
// over local, whose members all pass the same localLeader; the other
// group does the same with its own communicator. The two leaders must be
// able to talk on peer: the local leader passes peer and the rank of the
// other group's leader in it (remoteLeader), which the other ranks
// ignore. tag tells concurrent creations apart on peer.
//
// The leaders exchange their groups through peer (on its collective
// context, with the tag marked so that it cannot match anything else), and
// agree on a context id free on every member of both groups: each group
// ANDs its members' free maps, the leaders exchange and combine them, and
// each broadcasts the result to its group.
func IntercommCreate(local *Comm, localLeader int, peer *Comm, remoteLeader, tag int) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IntercommCreate", local, Undefined, tag), &err)
	}
	const op = "IntercommCreate"
	if err := local.intraOnly(op); err != nil {
		return nil, err
	}
	if localLeader < 0 || localLeader >= len(local.group) {
		return nil, local.fail(op, ErrRank, loc{}, "local leader %d is not a rank of %s (size %d)", localLeader, local.Name(), len(local.group))
	}
	if tag < 0 || tag > TagUB {
		return nil, local.fail(op, ErrTag, loc{}, "tag %d: tags run from 0 to %d", tag, TagUB)
	}
	leader := local.rank == localLeader
	ptag := groupTagBit | tag
	var pcc coll.Comm
	var xerr error // the leader's failure, which it tells its group
	overlap := -1  // a world rank in both groups, found by the leader
	if leader {
		switch {
		case peer.check(op) != nil:
			xerr = peer.check(op)
		case remoteLeader < 0 || remoteLeader >= len(peer.group):
			xerr = local.errorf(op, ErrRank, at("remote leader", remoteLeader, tag), "not a rank of the peer communicator %s (size %d)", peer.Name(), len(peer.group))
		case peer.group[remoteLeader] == local.p.Rank:
			xerr = local.errorf(op, ErrRank, at("remote leader", remoteLeader, tag), "the remote leader is the local leader")
		case slices.Contains(local.group, peer.group[remoteLeader]):
			// The remote leader is a member of this group, where it
			// waits for this leader instead of answering it: the
			// groups overlap, and the exchange would never end.
			overlap = peer.group[remoteLeader]
			xerr = local.errorf(op, ErrComm, at("remote leader", remoteLeader, tag), "%s", overlapMsg(overlap))
		default:
			pcc = collComm{peer.shadow}
		}
	}
	lcc := local.coll()
	tInfo, tAgree := local.collTag(), local.collTag()

	// The leaders swap their groups; the leader tells its group the remote
	// one (an empty record if the exchange failed).
	var rec []byte
	if leader {
		if xerr == nil {
			rec, xerr = exchange(pcc, encodeGroupVia(local.group, peer.group), remoteLeader, ptag)
			if xerr == nil {
				rec, xerr = decodeGroupVia(rec, peer.group, peer.group[remoteLeader] >= local.p.Size)
				if xerr != nil {
					xerr = local.errorf(op, ErrComm, at("remote leader", remoteLeader, tag), "%v", xerr)
				}
			}
		}
		if xerr != nil || len(rec) == 0 {
			rec = []byte{}
		}
		if overlap >= 0 {
			rec = overlapRecord(overlap)
		}
	}
	rec, err = coll.BcastVarAlg(lcc, "", rec, localLeader, tInfo)
	if xerr != nil {
		return nil, local.collErr(op, xerr)
	}
	if err != nil {
		return nil, local.collErr(op, err)
	}
	if w, ok := isOverlapRecord(rec); ok {
		return nil, local.fail(op, ErrComm, loc{}, "%s", overlapMsg(w))
	}
	if len(rec) == 0 || len(rec)%8 != 0 {
		return nil, local.fail(op, ErrComm, loc{}, "the local leader could not exchange groups with the remote leader")
	}
	remote := decodeRanks(rec)
	for _, w := range remote {
		if slices.Contains(local.group, w) {
			return nil, local.fail(op, ErrComm, loc{}, "%s", overlapMsg(w))
		}
	}

	var exch func([]byte) ([]byte, error)
	if leader {
		exch = func(b []byte) ([]byte, error) { return exchange(pcc, b, remoteLeader, ptag) }
	}
	id, err := local.p.agreeContext(acrossGroups(lcc, localLeader, tAgree, tAgree+4, agreeCombine, exch))
	if err != nil {
		return nil, local.ctxFail(op, err)
	}
	c := newInterComm(local.p, id, local.rank, local.group, remote, fmt.Sprintf("%s.inter(%d)", local.name, tag))
	c.errh.Store(local.errh.Load())
	return c, nil
}

// encodeGroupVia carries a group to the other leader: each member's world
// rank and its rank in the peer communicator (-1 if not a member), so
// that a leader in another job (port.go), where world ranks mean other
// processes, can name the members through the peer communicator.
func encodeGroupVia(group, peer []int) []byte {
	rs := make([]int, 0, 2*len(group))
	for _, w := range group {
		rs = append(rs, w, slices.Index(peer, w))
	}
	return encodeRanks(rs)
}

// decodeGroupVia reads the other leader's encodeGroupVia as world ranks
// (peer numbers) of this rank: through the peer communicator if the
// other leader is in another job (foreign), else as they are.
func decodeGroupVia(rec []byte, peer []int, foreign bool) ([]byte, error) {
	if len(rec) == 0 || len(rec)%16 != 0 {
		return nil, fmt.Errorf("the other leader's group record has %d bytes", len(rec))
	}
	rs := decodeRanks(rec)
	out := make([]int, len(rs)/2)
	for i := range out {
		w, pr := rs[2*i], rs[2*i+1]
		switch {
		case !foreign:
			out[i] = w
		case pr >= 0 && pr < len(peer):
			out[i] = peer[pr]
		default:
			return nil, fmt.Errorf("member %d of the other group is in another job and not in the peer communicator: between jobs, the groups must be within the peer communicator", i)
		}
	}
	return encodeRanks(out), nil
}

// overlapRecord is what a leader that found world rank w in both groups
// broadcasts to its group instead of the remote group's ranks: 9 bytes,
// which no list of 8-byte ranks is, a marker and w.
func overlapRecord(w int) []byte {
	return append([]byte{0xff}, encodeRanks([]int{w})...)
}

func isOverlapRecord(rec []byte) (int, bool) {
	if len(rec) != 9 || rec[0] != 0xff {
		return 0, false
	}
	return decodeRanks(rec[1:])[0], true
}

func overlapMsg(w int) string {
	return fmt.Sprintf("world rank %d is in both groups: they must be disjoint", w)
}

// interAgree agrees on a context id free on both groups of the
// intercommunicator c, with collective tag base base: local steps use
// base..base+7 on the local group, the leaders (local rank 0 of each
// group) exchange on c's collective context with tag base+1.
func (c *Comm) interAgree(base int) (uint32, error) {
	var exch func([]byte) ([]byte, error)
	if c.rank == 0 {
		cc := collComm{c.shadow}
		exch = func(b []byte) ([]byte, error) { return exchange(cc, b, 0, base+1) }
	}
	return c.p.agreeContext(acrossGroups(c.inter.lc.coll(), 0, base+3, base+5, agreeCombine, exch))
}

// interDup duplicates the intercommunicator c.
func (c *Comm) interDup(op string) (*Comm, error) {
	id, err := c.interAgree(c.collTag())
	if err != nil {
		return nil, c.ctxFail(op, err)
	}
	return newInterComm(c.p, id, c.rank, c.inter.local, c.group, c.name+".dup"), nil
}

// IntercommMerge makes an intracommunicator of both groups of the
// intercommunicator c (MPI_Intercomm_merge). It is collective over both
// groups; all members of a group pass the same high. The group that passes
// high false comes first; if both pass the same value, the group whose
// first member has the lower world rank comes first.
func (c *Comm) IntercommMerge(high bool) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IntercommMerge", c, Undefined, Undefined), &err)
	}
	const op = "IntercommMerge"
	if err := c.check(op); err != nil {
		return nil, err
	}
	if c.inter == nil {
		return nil, c.fail(op, ErrComm, loc{}, "not an intercommunicator")
	}
	base := c.collTag()
	lcc := c.inter.lc.coll()
	mine := []byte{0}
	if high {
		mine[0] = 1
	}
	// The leaders swap their flags; each tells its group.
	var theirs []byte
	var xerr error
	if c.rank == 0 {
		theirs, xerr = exchange(collComm{c.shadow}, mine, 0, base)
		if xerr != nil || len(theirs) != 1 {
			theirs = []byte{}
		}
	}
	theirs, err = coll.BcastVarAlg(lcc, "", theirs, 0, base)
	if xerr != nil {
		return nil, c.collErr(op, xerr)
	}
	if err != nil {
		return nil, c.collErr(op, err)
	}
	if len(theirs) != 1 {
		return nil, c.fail(op, ErrComm, loc{}, "the group leaders could not exchange their flags")
	}
	local, remote := c.inter.local, c.group
	// Peer numbers of another job's members are this rank's own, so
	// between jobs the accepting group counts as the lower.
	lower := local[0] < remote[0]
	if c.inter.link != nil {
		lower = c.inter.low
	}
	localFirst := !high && theirs[0] == 1 || (high == (theirs[0] == 1) && lower)
	var merged []int
	rank := c.rank
	if localFirst {
		merged = append(append(merged, local...), remote...)
	} else {
		merged = append(append(merged, remote...), local...)
		rank += len(remote)
	}
	id, err := c.interAgree(base)
	if err != nil {
		return nil, c.ctxFail(op, err)
	}
	m := newComm(c.p, id*2, rank, merged, c.name+".merge")
	m.errh.Store(c.errh.Load())
	return m, nil
}

// interSplit is Split on an intercommunicator: members of each group with
// the same color form the two groups of a new intercommunicator, ordered
// by key and then by rank; a color found in only one group gives nil. The
// new intercommunicators (one per color) share one context id, agreed
// across both groups.
func (c *Comm) interSplit(color, key int) (*Comm, error) {
	const op = "Split"
	base, base2 := c.collTag(), c.collTag()
	lcc := c.inter.lc.coll()
	var mine [16]byte
	binary.LittleEndian.PutUint64(mine[:], uint64(int64(color)))
	binary.LittleEndian.PutUint64(mine[8:], uint64(int64(key)))
	locals, err := coll.Allgather(lcc, mine[:], base)
	if err != nil {
		return nil, c.collErr(op, err)
	}
	// The leaders swap their groups' records; each tells its group.
	var rec []byte
	var xerr error
	if c.rank == 0 {
		if rec, xerr = exchange(collComm{c.shadow}, packParts(locals), 0, base); xerr != nil {
			rec = packParts(nil)
		}
	}
	rec, err = coll.BcastVarAlg(lcc, "", rec, 0, base+2)
	if xerr != nil {
		return nil, c.collErr(op, xerr)
	}
	if err != nil {
		return nil, c.collErr(op, err)
	}
	remotes, err := unpackParts(rec, len(c.group))
	if err != nil {
		return nil, c.collErr(op, err)
	}
	pick := func(recs [][]byte, world []int) ([]int, int, error) {
		type member struct{ key, rank int }
		var ms []member
		for r, b := range recs {
			if len(b) != 16 {
				return nil, 0, fmt.Errorf("bad color record from rank %d", r)
			}
			if int(int64(binary.LittleEndian.Uint64(b))) == color {
				ms = append(ms, member{int(int64(binary.LittleEndian.Uint64(b[8:]))), r})
			}
		}
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
		out, me := make([]int, len(ms)), -1
		for i, m := range ms {
			out[i] = world[m.rank]
			if m.rank == c.rank {
				me = i
			}
		}
		return out, me, nil
	}
	local, rank, err := pick(locals, c.inter.local)
	if err != nil {
		return nil, c.collErr(op, err)
	}
	remote, _, err := pick(remotes, c.group)
	if err != nil {
		return nil, c.collErr(op, err)
	}
	id, err := c.interAgree(base2)
	if err != nil {
		return nil, c.ctxFail(op, err)
	}
	if color == Undefined || len(remote) == 0 {
		c.p.ctx.release(id)
		return nil, nil
	}
	s := newInterComm(c.p, id, rank, local, remote, fmt.Sprintf("%s.split(%d)", c.name, color))
	s.errh.Store(c.errh.Load())
	return s, nil
}

// interCreate is Create on an intercommunicator: every member of each
// group passes the same subgroup of its own (local) group, and the result
// is an intercommunicator between the two subgroups; callers outside
// their subgroup, or whose other subgroup is empty, get nil.
func (c *Comm) interCreate(g *Group) (*Comm, error) {
	const op = "Create"
	if err := g.check(op); err != nil {
		return nil, c.handle(err)
	}
	for _, w := range g.ranks {
		if !slices.Contains(c.inter.local, w) {
			return nil, c.fail(op, ErrGroup, loc{}, "world rank %d is in the group but not in the local group of %s", w, c.Name())
		}
	}
	base, base2 := c.collTag(), c.collTag()
	var rec []byte
	var xerr error
	if c.rank == 0 {
		if rec, xerr = exchange(collComm{c.shadow}, encodeRanks(g.ranks), 0, base); xerr != nil {
			rec = nil
		}
	}
	// A record with a flag byte, so that an empty remote group and a
	// failed exchange differ.
	if c.rank == 0 {
		rec = append([]byte{byte(boolInt(xerr == nil))}, rec...)
	}
	rec, err := coll.BcastVarAlg(c.inter.lc.coll(), "", rec, 0, base)
	if xerr != nil {
		return nil, c.collErr(op, xerr)
	}
	if err != nil {
		return nil, c.collErr(op, err)
	}
	if len(rec) == 0 || rec[0] != 1 {
		return nil, c.fail(op, ErrComm, loc{}, "the group leaders could not exchange their groups")
	}
	remote := decodeRanks(rec[1:])
	id, err := c.interAgree(base2)
	if err != nil {
		return nil, c.ctxFail(op, err)
	}
	rank, in := g.index[c.p.Rank]
	if !in || len(remote) == 0 {
		c.p.ctx.release(id)
		return nil, nil
	}
	n := newInterComm(c.p, id, rank, g.ranks, remote, c.name+".create")
	n.errh.Store(c.errh.Load())
	return n, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
