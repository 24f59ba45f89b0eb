package mpi

import (
	"github.com/mpigo/mpi/internal/checked"
	"github.com/mpigo/mpi/internal/engine"
)

// The mixed forms (hetero_coll.go) of the v and w collectives, the
// reduce-scatters, the low-level scans and the typed Into forms.
//
// The low-level v and w forms move every block as a point-to-point
// message with its datatype, from the rank that owns it to the rank that
// uses it, on the communicator's collective context: the receive converts
// it by its own datatype's type map (convLow), so any committed datatype
// works, contiguous or not, and nothing is staged.

// hetBlk is one block of a mixed collective and the rank it goes to or
// comes from.
type hetBlk struct {
	peer int
	nbrBlk
}

// hetExchange posts a receive for every block of recvs, sends every block
// of sends, and waits for all of them. Errors name op.
func (c *Comm) hetExchange(op string, sends, recvs []hetBlk) error {
	tag := c.collTag()
	sh := c.shadow
	return c.nbrErr(op, postAndWait(len(recvs), func(i int) (*Request, error) {
		b := recvs[i]
		return sh.irecv(nil, nil, b.buf, b.count, b.dt, b.peer, tag)
	}, len(sends), func(k int) (*Request, error) {
		b := sends[k]
		return sh.isend(nil, op, b.buf, b.count, b.dt, b.peer, tag, engine.Standard)
	}))
}

// hetVBlocks returns the p blocks of a v collective's buffer: counts[i]
// elements of dt at displs[i] extents of dt (displs nil: one after
// another in rank order).
func (c *Comm) hetVBlocks(op, what string, buf []byte, counts, displs []int, dt *Datatype) ([]hetBlk, error) {
	p := len(c.group)
	if len(counts) != p || (displs != nil && len(displs) != p) {
		return nil, c.argErr(op, ErrCount, "%s: %d counts and %d displacements for %d ranks", what, len(counts), len(displs), p)
	}
	types := make([]*Datatype, p)
	for i := range types {
		types[i] = dt
	}
	if displs == nil {
		displs = make([]int, p)
		sum := 0
		for i, n := range counts {
			displs[i] = sum
			if n > 0 {
				var ok bool
				if sum, ok = checked.Add(sum, n); !ok {
					sum = displOverflow
				}
			}
		}
	}
	return c.hetWBlocks(op, what, buf, counts, displs, types, true)
}

// hetWBlocks returns the p blocks of a w collective's buffer: counts[i]
// elements of types[i] at byte displs[i] (elemDispl: at displs[i]
// extents of types[i]).
func (c *Comm) hetWBlocks(op, what string, buf []byte, counts, displs []int, types []*Datatype, elemDispl bool) ([]hetBlk, error) {
	p := len(c.group)
	if len(counts) != p || len(displs) != p || len(types) != p {
		return nil, c.argErr(op, ErrCount, "%s: %d counts, %d displacements, %d types for %d ranks", what, len(counts), len(displs), len(types), p)
	}
	if isBottom(buf) {
		return nil, c.argErr(op, ErrBuffer, "collectives do not take Bottom: pass the buffer")
	}
	blks := make([]hetBlk, p)
	for i := range p {
		org := displs[i]
		if elemDispl && org >= 0 {
			org = scaleDispl(org, extentOf(types[i]))
		}
		b, err := c.block(op, what, i, buf, org, counts[i], types[i])
		if err != nil {
			return nil, err
		}
		blks[i] = hetBlk{i, b}
	}
	return blks, nil
}

// hetOne returns the single block of count elements of dt at the start
// of buf, exchanged with peer.
func (c *Comm) hetOne(op, what string, peer int, buf []byte, count int, dt *Datatype) (hetBlk, error) {
	if isBottom(buf) {
		return hetBlk{}, c.argErr(op, ErrBuffer, "collectives do not take Bottom: pass the buffer")
	}
	b, err := c.block(op, what, 0, buf, 0, count, dt)
	return hetBlk{peer, b}, err
}

// hetGatherv is gatherv's mixed form: every rank sends its block to root.
func (c *Comm) hetGatherv(name string, sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype, root int) error {
	inPlace := c.rank == root && isInPlace(sendbuf)
	var sends, recvs []hetBlk
	if c.rank == root {
		blks, err := c.hetVBlocks(name, "receive", recvbuf, recvcounts, displs, recvtype)
		if err != nil {
			return err
		}
		for i, b := range blks {
			if i != root || !inPlace {
				recvs = append(recvs, b)
			}
		}
	}
	if !inPlace {
		b, err := c.hetOne(name, "send", root, sendbuf, sendcount, sendtype)
		if err != nil {
			return err
		}
		sends = append(sends, b)
	}
	return c.hetExchange(name, sends, recvs)
}

// hetScatterv is scatterv's mixed form: root sends every rank its block.
func (c *Comm) hetScatterv(name string, sendbuf []byte, sendcounts, displs []int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int) error {
	inPlace := c.rank == root && isInPlace(recvbuf)
	var sends, recvs []hetBlk
	if c.rank == root {
		blks, err := c.hetVBlocks(name, "send", sendbuf, sendcounts, displs, sendtype)
		if err != nil {
			return err
		}
		for i, b := range blks {
			if i != root || !inPlace {
				sends = append(sends, b)
			}
		}
	}
	if !inPlace {
		b, err := c.hetOne(name, "receive", root, recvbuf, recvcount, recvtype)
		if err != nil {
			return err
		}
		recvs = append(recvs, b)
	}
	return c.hetExchange(name, sends, recvs)
}

// hetAllgatherv is allgatherv's mixed form: every rank sends its block to
// every rank. With InPlace, a rank's block is already in its recvbuf.
func (c *Comm) hetAllgatherv(name string, sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype) error {
	blks, err := c.hetVBlocks(name, "receive", recvbuf, recvcounts, displs, recvtype)
	if err != nil {
		return err
	}
	inPlace := isInPlace(sendbuf)
	mine := blks[c.rank]
	if !inPlace {
		if mine, err = c.hetOne(name, "send", 0, sendbuf, sendcount, sendtype); err != nil {
			return err
		}
	}
	var sends, recvs []hetBlk
	for i, b := range blks {
		if i == c.rank && inPlace {
			continue
		}
		recvs = append(recvs, b)
		s := mine
		s.peer = i
		sends = append(sends, s)
	}
	return c.hetExchange(name, sends, recvs)
}

// hetAlltoallw is the mixed form of Alltoall, Alltoallv and Alltoallw on
// an intracommunicator. With InPlace, the blocks sent are a copy of
// recvbuf's.
func (c *Comm) hetAlltoallw(name string, sendbuf []byte, sendcounts, sdispls []int, sendtypes []*Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtypes []*Datatype, elemDispl bool) error {
	recvs, err := c.hetWBlocks(name, "receive", recvbuf, recvcounts, rdispls, recvtypes, elemDispl)
	if err != nil {
		return err
	}
	if isInPlace(sendbuf) {
		sendbuf = append([]byte(nil), recvbuf...)
		sendcounts, sdispls, sendtypes = recvcounts, rdispls, recvtypes
	}
	sends, err := c.hetWBlocks(name, "send", sendbuf, sendcounts, sdispls, sendtypes, elemDispl)
	if err != nil {
		return err
	}
	return c.hetExchange(name, sends, recvs)
}

// steps returns the displacements 0, n, 2n, ... of p blocks of n.
func steps(p, n int) []int {
	d := make([]int, p)
	for i := range d {
		d[i] = scaleDispl(i, n)
	}
	return d
}

// hetScatterParts sends parts[i] from root to rank i and returns this
// rank's part, converted.
func (c *Comm) hetScatterParts(parts [][]byte, root int, conv hetConv) ([]byte, error) {
	tag := c.collTag()
	if c.rank != root {
		return c.hetRecv(root, tag, conv)
	}
	cc := collComm{c.shadow}
	for i, b := range parts {
		if i != root {
			if err := cc.Send(b, i, tag); err != nil {
				return nil, err
			}
		}
	}
	return parts[root], nil
}

// hetLowReduceScatter is reduceScatter's mixed form: in (whole elements
// of dt, block i at offs[i]:offs[i+1]) is reduced at rank 0 and block i of
// the result sent to rank i, which converts it into out.
func (c *Comm) hetLowReduceScatter(name string, in, out []byte, offs []int, dt *Datatype, op *ReduceOp) error {
	f, _ := op.combine(dt)
	conv := lowConvOf(dt)
	res, err := c.hetReduce(append([]byte(nil), in...), f, 0, false, conv)
	if err != nil {
		return c.collErr(name, err)
	}
	var parts [][]byte
	if c.rank == 0 {
		parts = make([][]byte, len(c.group))
		for i := range parts {
			parts[i] = res[offs[i]:offs[i+1]]
		}
	}
	got, err := c.hetScatterParts(parts, 0, conv)
	if err != nil {
		return c.collErr(name, err)
	}
	if len(got) != len(out) {
		return c.fail(name, ErrTruncate, loc{}, "rank 0 sent %d bytes, this rank's block has %d", len(got), len(out))
	}
	copy(out, got)
	return nil
}

// hetLowScan is scan's mixed form over whole elements of dt.
func (c *Comm) hetLowScan(name string, in, out []byte, dt *Datatype, op *ReduceOp, inclusive bool) error {
	f, _ := op.combine(dt)
	res, err := c.hetScan(in, f, inclusive, lowConvOf(dt))
	if err != nil {
		return c.collErr(name, err)
	}
	if res != nil {
		copy(out, res)
	}
	return nil
}

// hetReduceScatterT is reduceScatterT's mixed form: the slices are
// reduced at rank 0 and block i (elements lo[i]:lo[i+1]) sent to rank i.
func hetReduceScatterT[E any](c *Comm, name string, v []E, lo []int, op Op[E]) ([]E, error) {
	all, err := hetReduceSliceT(c, name, v, op, 0)
	if err != nil {
		return nil, err
	}
	ts := typeOf[[]E]()
	var parts [][]byte
	if c.rank == 0 {
		parts = make([][]byte, len(c.group))
		for i := range parts {
			blk := all[lo[i]:lo[i+1]]
			if parts[i], err = ownBytes(ts, &blk); err != nil {
				return nil, c.typeErr(name, loc{}, err)
			}
		}
	}
	got, err := c.hetScatterParts(parts, 0, convOf[[]E](ts))
	if err != nil {
		return nil, c.collErr(name, err)
	}
	var out []E
	if err := fromBytes(ts, got, &out); err != nil {
		return nil, c.typeErr(name, loc{}, err)
	}
	return out, nil
}

// hetScanSliceT is ScanSlice's mixed form.
func hetScanSliceT[E any](c *Comm, v []E, op Op[E]) ([]E, error) {
	ts := typeOf[[]E]()
	b, err := ownBytes(ts, &v)
	if err != nil {
		return nil, c.typeErr("ScanSlice", loc{}, err)
	}
	res, err := c.hetScan(b, sliceCombine(nil, op), true, convOf[[]E](ts))
	if err != nil {
		return nil, c.collErr("ScanSlice", err)
	}
	var r []E
	if err := fromBytes(ts, res, &r); err != nil {
		return nil, c.typeErr("ScanSlice", loc{}, err)
	}
	return r, nil
}

// hetAllgatherInto is AllgatherInto's mixed form: every rank sends v to
// every rank.
func hetAllgatherInto[E any](c *Comm, v, out []E) error {
	t := typeOf[E]()
	b := unsafeBytes(v, t.size)
	parts := make([][]byte, len(c.group))
	for i := range parts {
		parts[i] = b
	}
	return hetInto(c, "AllgatherInto", t, parts, unsafeBytes(out, t.size))
}

// hetAlltoallInto is AlltoallInto's mixed form.
func hetAlltoallInto[E any](c *Comm, send, recv []E) error {
	t := typeOf[E]()
	sb := unsafeBytes(send, t.size)
	blk := len(sb) / max(len(c.group), 1)
	parts := make([][]byte, len(c.group))
	for i := range parts {
		parts[i] = sb[i*blk : (i+1)*blk]
	}
	return hetInto(c, "AlltoallInto", t, parts, unsafeBytes(recv, t.size))
}

// hetInto sends parts[i] to rank i and places rank i's block, converted,
// at block i of out (blocks of equal size).
func hetInto(c *Comm, name string, t *typeInfo, parts [][]byte, out []byte) error {
	got, err := c.hetAlltoall(parts, func(b []byte) ([]byte, error) {
		swapTyped(t, b) // t is plain: its elements' bytes
		return b, nil
	})
	if err != nil {
		return c.collErr(name, err)
	}
	blk := len(out) / max(len(c.group), 1)
	for i, g := range got {
		if len(g) != blk {
			return c.fail(name, ErrCount, loc{}, "rank %d sent %d bytes, the block has %d", i, len(g), blk)
		}
		copy(out[i*blk:], g)
	}
	return nil
}
