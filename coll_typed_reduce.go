package mpi

import (
	"github.com/mpigo/mpi/internal/coll"
)

// The typed reductions beside Reduce and Allreduce (coll_typed.go):
// reduce-scatter, the prefix reduction of slices and the local reduction.

// ReduceScatterBlock combines the slices of every rank elementwise with op
// and returns block r of the result on rank r: elements
// [r·len(v)/p, (r+1)·len(v)/p) (MPI_Reduce_scatter_block). len(v) must be
// the same on every rank and a multiple of the number of ranks.
func ReduceScatterBlock[E any](c *Comm, v []E, op Op[E]) (_ []E, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReduceScatterBlock", c, Undefined, Undefined), &err)
	}
	p := c.Size()
	if p > 0 && len(v)%p != 0 {
		return nil, c.fail("ReduceScatterBlock", ErrCount, loc{}, "%d elements do not split into %d equal blocks", len(v), p)
	}
	counts := make([]int, p)
	for i := range counts {
		counts[i] = len(v) / max(p, 1)
	}
	return reduceScatterT(c, "ReduceScatterBlock", v, counts, op)
}

// ReduceScatter combines the slices of every rank elementwise with op and
// returns on rank r the r-th block of the result, blocks having counts[i]
// elements in rank order (MPI_Reduce_scatter). Σ counts must be len(v).
// Predefined operations on plain elements use recursive halving; other
// operations are reduced in rank order and scattered.
func ReduceScatter[E any](c *Comm, v []E, counts []int, op Op[E]) (_ []E, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReduceScatter", c, Undefined, Undefined), &err)
	}
	return reduceScatterT(c, "ReduceScatter", v, counts, op)
}

func reduceScatterT[E any](c *Comm, name string, v []E, counts []int, op Op[E]) ([]E, error) {
	if err := checkOp(c, name, op); err != nil {
		return nil, err
	}
	p, r := len(c.group), c.rank
	if len(counts) != p {
		return nil, c.fail(name, ErrCount, loc{}, "%d counts for %d ranks", len(counts), p)
	}
	total, bad, ok := sumCounts(counts)
	if !ok {
		return nil, c.fail(name, ErrCount, loc{}, "count %d for rank %d is negative or makes the sum overflow", counts[bad], bad)
	}
	if total != len(v) {
		return nil, c.fail(name, ErrCount, loc{}, "counts add up to %d, the slice has %d elements", total, len(v))
	}
	lo := make([]int, p+1)
	for i, n := range counts {
		lo[i+1] = lo[i] + n
	}
	if c.mixed() {
		return hetReduceScatterT(c, name, v, lo, op) // hetero_collv.go
	}
	tag := c.collTag()
	t := typeOf[E]()
	if op.vec != nil && t.shape == shapePlain {
		buf := make([]E, len(v))
		copy(buf, v)
		b := unsafeBytes(buf, t.size)
		offs := make([]int, p+1)
		for i := range offs {
			offs[i] = lo[i] * t.size
		}
		sp := getScratch(len(b))
		defer putScratch(sp)
		cc := c.typedCall(t, len(v))
		err := coll.ReduceScatterVec(cc, b, (*sp)[:len(b)], offs, vecOf(t, op), tag)
		if err := cc.done(name, err); err != nil {
			return nil, err
		}
		return buf[lo[r]:lo[r+1]:lo[r+1]], nil
	}
	ts := typeOf[[]E]()
	b, err := ownBytes(ts, &v)
	if err != nil {
		return nil, c.typeErr(name, loc{}, err)
	}
	cc := sliceCall[E](c, len(v))
	res, err := coll.Reduce(cc, b, sliceCombine(cc, op), op.commutative, 0, tag)
	if err := cc.done(name, err); err != nil {
		return nil, err
	}
	var parts [][]byte
	if r == 0 {
		var all []E
		if err := fromBytes(ts, res, &all); err != nil {
			return nil, c.typeErr(name, loc{}, err)
		}
		parts = make([][]byte, p)
		for i := range p {
			blk := all[lo[i]:lo[i+1]]
			if parts[i], err = ownBytes(ts, &blk); err != nil {
				return nil, c.typeErr(name, loc{}, err)
			}
		}
	}
	got, err := coll.Scatter(c.coll(), parts, 0, tag+2)
	if err != nil {
		return nil, c.collErr(name, err)
	}
	var out []E
	if err := fromBytes(ts, got, &out); err != nil {
		return nil, c.typeErr(name, loc{}, err)
	}
	return out, nil
}

// ReduceLocalSlice sets inout[i] = in[i] op inout[i] for every element,
// with no communication (MPI_Reduce_local); in holds the operand of the
// lower ranks. The slices must have the same length.
func ReduceLocalSlice[E any](in, inout []E, op Op[E]) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReduceLocalSlice", nil, Undefined, Undefined), &err)
	}
	if !op.valid() {
		return (*Comm)(nil).errorf("ReduceLocalSlice", ErrOp, loc{}, "zero Op")
	}
	if len(in) != len(inout) {
		return (*Comm)(nil).errorf("ReduceLocalSlice", ErrCount, loc{}, "slices of %d and %d elements", len(in), len(inout))
	}
	op.apply(inout, in, false)
	return nil
}

// ScanSlice returns on rank r the elementwise inclusive prefix reduction
// of the slices of ranks 0..r, in rank order (MPI_Scan with a count). All
// slices must have the same length.
func ScanSlice[E any](c *Comm, v []E, op Op[E]) (_ []E, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ScanSlice", c, Undefined, Undefined), &err)
	}
	if err := checkOp(c, "ScanSlice", op); err != nil {
		return nil, err
	}
	if c.mixed() {
		return hetScanSliceT(c, v, op) // hetero_collv.go
	}
	if t := typeOf[E](); op.vec != nil && t.shape == shapePlain {
		res := make([]E, len(v))
		copy(res, v)
		b := unsafeBytes(res, t.size)
		sp := getScratch(2 * len(b))
		defer putScratch(sp)
		cc := c.typedCall(t, len(v))
		_, err := coll.ScanVec(cc, b, (*sp)[:2*len(b)], vecOf(t, op), true, c.collTag())
		if err := cc.done("ScanSlice", err); err != nil {
			return nil, err
		}
		return res, nil
	}
	ts := typeOf[[]E]()
	b, err := ownBytes(ts, &v)
	if err != nil {
		return nil, c.typeErr("ScanSlice", loc{}, err)
	}
	cc := sliceCall[E](c, len(v))
	res, err := coll.Scan(cc, b, sliceCombine(cc, op), op.commutative, c.collTag())
	if err := cc.done("ScanSlice", err); err != nil {
		return nil, err
	}
	var r []E
	if err := fromBytes(ts, res, &r); err != nil {
		return nil, c.typeErr("ScanSlice", loc{}, err)
	}
	return r, nil
}
