package mpi

import (
	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/datatype"
)

// Collectives on a communicator whose members differ in byte order
// (hetero.go, docs/hetero.md).
//
// The algorithms of internal/coll move bytes and may split a message at
// any byte (a large broadcast is scattered, then gathered), forward what
// they received, and combine operands as they arrive: none of that can
// convert numbers, which needs whole values and the sender of each. So a
// mixed communicator runs the simple algorithms below instead: every
// message goes from its owner straight to the rank that uses it, as the
// sender's memory, and the receiver converts it (hetConv) before it
// reads it. Reductions are done at a root in rank order, then broadcast.
// They cost O(p) messages at the root instead of O(log p) steps, which is
// what a job over a laptop and a lab machine can afford; homogeneous
// communicators (every rank of a homogeneous job, and the same-order
// subcommunicators of a mixed one) never come here.
//
// Every collective has a mixed form: those of the rooted and all-to-all
// collectives and reductions are below, the v and w forms, reduce-
// scatters, low-level scans and Into forms in hetero_collv.go; the non-blocking
// forms run these on a pinned view; neighbour collectives are converting
// point-to-point receives already; the intercommunicator algorithms
// convert each block where it ends (hetFix, at the end of this file).
// Windows: hetero_rma.go.

// hetConv converts the bytes of one message from a rank of the other byte
// order into this rank's, in place or into a new slice.
type hetConv func(b []byte) ([]byte, error)

// convOf returns the conversion for values of T (t is typeOf[T]).
func convOf[T any](t *typeInfo) hetConv {
	return func(b []byte) ([]byte, error) {
		switch t.shape {
		case shapePlain, shapePlainSlice:
			swapTyped(t, b)
			return b, nil
		case shapeString:
			return b, nil
		}
		v := new(T)
		if err := datatype.DecodeSwapped(b, v, false); err != nil {
			return nil, err
		}
		return ownBytes(t, v)
	}
}

// lowConvOf returns the conversion for whole elements of dt laid out at
// extent spacing (the blocks the low-level collectives move).
func lowConvOf(dt *Datatype) hetConv {
	return func(b []byte) ([]byte, error) {
		if ext := dt.t.Extent(); ext > 0 {
			dt.t.Swap(b, int(int64(len(b))/ext))
		}
		return b, nil
	}
}

// hetRecv receives one message of the collective from rank src and
// converts it if src's byte order differs.
func (c *Comm) hetRecv(src, tag int, conv hetConv) ([]byte, error) {
	b, err := collComm{c.shadow}.RecvAlloc(src, tag)
	if err != nil || !c.swapFrom(src) {
		return b, err
	}
	return conv(b)
}

// hetBcast returns root's b on every rank.
func (c *Comm) hetBcast(b []byte, root int, conv hetConv) ([]byte, error) {
	tag := c.collTag()
	if c.rank != root {
		return c.hetRecv(root, tag, conv)
	}
	cc := collComm{c.shadow}
	for r := range c.group {
		if r != root {
			if err := cc.Send(b, r, tag); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// hetGather returns every rank's b, converted, at root (nil elsewhere).
func (c *Comm) hetGather(b []byte, root int, conv hetConv) ([][]byte, error) {
	return c.hetGatherAt(b, root, c.collTag(), conv)
}

// hetGatherAt is hetGather with messages of tag tag.
func (c *Comm) hetGatherAt(b []byte, root, tag int, conv hetConv) ([][]byte, error) {
	if c.rank != root {
		return nil, collComm{c.shadow}.Send(b, root, tag)
	}
	parts := make([][]byte, len(c.group))
	for r := range c.group {
		if r == root {
			parts[r] = b
			continue
		}
		var err error
		if parts[r], err = c.hetRecv(r, tag, conv); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// hetReduce folds every rank's b with f in rank order at root; with all,
// the result is then broadcast. It returns the result where there is one.
func (c *Comm) hetReduce(b []byte, f coll.Combine, root int, all bool, conv hetConv) ([]byte, error) {
	parts, err := c.hetGather(b, root, conv)
	if err != nil {
		return nil, err
	}
	var acc []byte
	if c.rank == root {
		if acc, err = hetFold(parts, f); err != nil {
			return nil, err
		}
	}
	if !all {
		return acc, nil
	}
	return c.hetBcast(acc, root, conv)
}

// hetFold combines parts with f in rank order.
func hetFold(parts [][]byte, f coll.Combine) ([]byte, error) {
	acc := append([]byte(nil), parts[0]...)
	for _, in := range parts[1:] {
		var err error
		if acc, err = f(acc, in, true); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// hetAlltoall sends parts[r] to rank r and returns what each rank sent
// this one, converted.
func (c *Comm) hetAlltoall(parts [][]byte, conv hetConv) ([][]byte, error) {
	tag := c.collTag()
	cc := collComm{c.shadow}
	reqs := make([]coll.Request, 0, len(parts))
	for r, b := range parts {
		if r == c.rank {
			continue
		}
		q, err := cc.Isend(b, r, tag)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, q)
	}
	got := make([][]byte, len(parts))
	got[c.rank] = parts[c.rank]
	var first error
	for r := range parts {
		if r == c.rank {
			continue
		}
		b, err := c.hetRecv(r, tag, conv)
		if err != nil && first == nil {
			first = err
		}
		got[r] = b
	}
	for _, q := range reqs {
		if _, err := q.Wait(); err != nil && first == nil {
			first = err
		}
	}
	return got, first
}

// hetScan is the inclusive (or exclusive) prefix reduction along the
// ranks: rank r waits for the prefix of ranks 0..r-1, then passes on its
// own. It returns this rank's result (nil for rank 0 of an exclusive scan).
func (c *Comm) hetScan(b []byte, f coll.Combine, inclusive bool, conv hetConv) ([]byte, error) {
	tag := c.collTag()
	cc := collComm{c.shadow}
	acc := append([]byte(nil), b...)
	var prefix []byte
	if c.rank > 0 {
		var err error
		if prefix, err = c.hetRecv(c.rank-1, tag, conv); err != nil {
			return nil, err
		}
		if acc, err = f(append([]byte(nil), prefix...), acc, true); err != nil {
			return nil, err
		}
	}
	if c.rank+1 < len(c.group) {
		if err := cc.Send(acc, c.rank+1, tag); err != nil {
			return nil, err
		}
	}
	if inclusive {
		return acc, nil
	}
	return prefix, nil
}

// The typed collectives' mixed forms. Each returns the error as the
// collective would (an *Error, through the communicator's handler).

func hetBcastT[T any](c *Comm, v T, root int) (T, error) {
	var zero T
	t := typeOf[T]()
	var b []byte
	if c.rank == root {
		var err error
		if b, err = viewBytes(t, &v, nil); err != nil {
			return zero, c.typeErr("Bcast", loc{}, err)
		}
	}
	got, err := c.hetBcast(b, root, convOf[T](t))
	if err != nil {
		return zero, c.collErr("Bcast", err)
	}
	if c.rank == root {
		return v, nil
	}
	var r T
	if err := fromBytes(t, got, &r); err != nil {
		return zero, c.typeErr("Bcast", loc{}, err)
	}
	return r, nil
}

func hetReduceT[T any](c *Comm, opname string, v T, op Op[T], root int) (T, error) {
	var zero T
	t := typeOf[T]()
	b, err := ownBytes(t, &v)
	if err != nil {
		return zero, c.typeErr(opname, loc{}, err)
	}
	all := root < 0
	res, err := c.hetReduce(b, valueCombine(nil, t, op), max(root, 0), all, convOf[T](t))
	if err != nil {
		return zero, c.collErr(opname, err)
	}
	if !all && c.rank != root {
		return zero, nil
	}
	var r T
	if err := fromBytes(t, res, &r); err != nil {
		return zero, c.typeErr(opname, loc{}, err)
	}
	return r, nil
}

func hetReduceSliceT[E any](c *Comm, opname string, v []E, op Op[E], root int) ([]E, error) {
	ts := typeOf[[]E]()
	b, err := ownBytes(ts, &v)
	if err != nil {
		return nil, c.typeErr(opname, loc{}, err)
	}
	all := root < 0
	res, err := c.hetReduce(b, sliceCombine(nil, op), max(root, 0), all, convOf[[]E](ts))
	if err != nil {
		return nil, c.collErr(opname, err)
	}
	if !all && c.rank != root {
		return nil, nil
	}
	var r []E
	if err := fromBytes(ts, res, &r); err != nil {
		return nil, c.typeErr(opname, loc{}, err)
	}
	if len(r) == 0 && len(v) == 0 {
		return []E{}, nil
	}
	return r, nil
}

func hetGatherT[T any](c *Comm, opname string, v T, root int, all bool) ([]T, error) {
	t := typeOf[T]()
	b, err := viewBytes(t, &v, nil)
	if err != nil {
		return nil, c.typeErr(opname, loc{}, err)
	}
	conv := convOf[T](t)
	parts, err := c.hetGather(b, root, conv)
	if err != nil {
		return nil, c.collErr(opname, err)
	}
	if all {
		// Root sends the gathered values as one encoded []T... which
		// would need T to encode; instead every value goes on by itself
		// in its owner's order, and each receiver converts it.
		if parts, err = c.hetBcastParts(parts, root, conv); err != nil {
			return nil, c.collErr(opname, err)
		}
	}
	if parts == nil {
		return nil, nil
	}
	return decodeAll[T](c, opname, t, parts)
}

// hetBcastParts sends root's parts (already in root's order) to every
// rank, one message per part.
func (c *Comm) hetBcastParts(parts [][]byte, root int, conv hetConv) ([][]byte, error) {
	n := len(c.group)
	if c.rank != root {
		parts = make([][]byte, n)
	}
	for i := range n {
		var err error
		if parts[i], err = c.hetBcast(parts[i], root, conv); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

func hetScatterT[T any](c *Comm, vs []T, root int) (T, error) {
	var zero T
	t := typeOf[T]()
	tag := c.collTag()
	var r T
	if c.rank == root {
		cc := collComm{c.shadow}
		for i := range vs {
			if i == root {
				continue
			}
			b, err := viewBytes(t, &vs[i], nil)
			if err != nil {
				return zero, c.typeErr("Scatter", loc{}, err)
			}
			if err := cc.Send(b, i, tag); err != nil {
				return zero, c.collErr("Scatter", err)
			}
		}
		return vs[root], nil
	}
	b, err := c.hetRecv(root, tag, convOf[T](t))
	if err != nil {
		return zero, c.collErr("Scatter", err)
	}
	if err := fromBytes(t, b, &r); err != nil {
		return zero, c.typeErr("Scatter", loc{}, err)
	}
	return r, nil
}

func hetAlltoallT[T any](c *Comm, vs []T) ([]T, error) {
	t := typeOf[T]()
	parts, err := valueParts(c, "Alltoall", t, vs)
	if err != nil {
		return nil, err
	}
	got, err := c.hetAlltoall(parts, convOf[T](t))
	if err != nil {
		return nil, c.collErr("Alltoall", err)
	}
	return decodeAll[T](c, "Alltoall", t, got)
}

func hetScanT[T any](c *Comm, opname string, v T, op Op[T], inclusive bool) (T, bool, error) {
	var zero T
	t := typeOf[T]()
	b, err := ownBytes(t, &v)
	if err != nil {
		return zero, false, c.typeErr(opname, loc{}, err)
	}
	res, err := c.hetScan(b, valueCombine(nil, t, op), inclusive, convOf[T](t))
	if err != nil {
		return zero, false, c.collErr(opname, err)
	}
	if res == nil {
		return zero, false, nil
	}
	var r T
	if err := fromBytes(t, res, &r); err != nil {
		return zero, false, c.typeErr(opname, loc{}, err)
	}
	return r, true, nil
}

// hetBcastInto is BcastInto's mixed form.
func hetBcastInto[E any](c *Comm, buf []E, root int) error {
	t := typeOf[E]()
	b := unsafeBytes(buf, t.size)
	got, err := c.hetBcast(b, root, convOf[E](t))
	if err != nil {
		return c.collErr("BcastInto", err)
	}
	if c.rank != root {
		if len(got) != len(b) {
			return c.fail("BcastInto", ErrCount, loc{}, "root sent %d bytes, buf has %d", len(got), len(b))
		}
		copy(b, got)
	}
	return nil
}

// The low-level collectives' mixed forms; b is count elements of dt as
// contiguous blocks (dt.block()).

// hetLowReduce reduces in (n bytes) with op into out at root (all: on
// every rank).
func (c *Comm) hetLowReduce(name string, in, out []byte, dt *Datatype, op *ReduceOp, root int, all bool) error {
	f, _ := op.combine(dt)
	res, err := c.hetReduce(append([]byte(nil), in...), f, root, all, lowConvOf(dt))
	if err != nil {
		return c.collErr(name, err)
	}
	if all || c.rank == root {
		copy(out, res)
	}
	return nil
}

// hetLowBcast broadcasts count elements of dt from root's buf (b: their
// blocks, packed into a staging buffer when sp is not nil).
func (c *Comm) hetLowBcast(buf, b []byte, sp *dspan, count int, dt *Datatype, root int) error {
	got, err := c.hetBcast(b, root, func(b []byte) ([]byte, error) { return b, nil })
	if err != nil {
		return c.collErr("Bcast", err)
	}
	if c.rank == root {
		return nil
	}
	if len(got) != len(b) {
		return c.fail("Bcast", ErrTruncate, loc{}, "root sent %d bytes, buf has room for %d", len(got), len(b))
	}
	copy(b, got)
	if sp != nil {
		sp.unpack(b)
	}
	// Converted in place, by the datatype's own map of buf.
	if c.swapFrom(root) {
		dt.t.Swap(buf, count)
	}
	return nil
}

// The intercommunicator collectives (coll_inter.go) keep their algorithms
// on a mixed intercommunicator: their messages are forwarded whole, so
// every block still comes from a known rank, and the rank that uses it
// converts it at the end (hetFix) by that rank's order. Only the
// reductions inside a group, which combine what they receive, run the
// mixed form there (interLocalReduce).

// mixConv returns the conversion of values of T for c's collectives, or
// nil when c's job has one representation (nothing to convert).
func mixConv[T any](c *Comm, t *typeInfo) hetConv {
	if c.p.reprs == nil {
		return nil
	}
	return convOf[T](t)
}

// hetFix converts b, which came from rank src of c (of the remote group,
// on an intercommunicator), with conv if src's byte order differs.
func (c *Comm) hetFix(b []byte, src int, conv hetConv) ([]byte, error) {
	if conv == nil || len(b) == 0 || !c.swapFrom(src) {
		return b, nil
	}
	return conv(b)
}

// hetFixParts converts parts[j], from rank j of c, in place.
func (c *Comm) hetFixParts(parts [][]byte, conv hetConv) error {
	for j, b := range parts {
		var err error
		if parts[j], err = c.hetFix(b, j, conv); err != nil {
			return err
		}
	}
	return nil
}

// formConv returns the conversion of elements of dt as a collective moves
// them: packed (staged from a non-contiguous datatype) or as blocks at
// extent spacing.
func formConv(dt *Datatype, packed bool) hetConv {
	if !packed {
		return lowConvOf(dt)
	}
	return func(b []byte) ([]byte, error) {
		if dt.size > 0 {
			dt.t.SwapPacked(b, len(b)/dt.size)
		}
		return b, nil
	}
}

// interLocalReduce reduces b over the local group of the intercommunicator
// c at its leader (local rank 0), with messages of tag base: the group's
// algorithm, or the mixed form if its members differ in byte order.
func (c *Comm) interLocalReduce(cc *collCall, b []byte, f coll.Combine, commutative bool, base int, conv hetConv) ([]byte, error) {
	lc := c.inter.lc
	if conv == nil || !lc.mixed() {
		return coll.Reduce(lc.via(cc), b, f, commutative, 0, base)
	}
	parts, err := lc.hetGatherAt(b, 0, base, conv)
	if err != nil || lc.rank != 0 {
		return nil, err
	}
	return hetFold(parts, f)
}
