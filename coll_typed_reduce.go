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
	if err = c.enterColl("ReduceScatterBlock"); err != nil {
		return
	}
	defer c.exitColl()
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

// ReduceScatterBlockInto is ReduceScatterBlock that writes rank r's block
// into out, which must have len(v)/Size() elements. With a predefined
// operation on plain elements nothing is allocated.
func ReduceScatterBlockInto[E any](c *Comm, v, out []E, op Op[E]) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReduceScatterBlockInto", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("ReduceScatterBlockInto"); err != nil {
		return
	}
	defer c.exitColl()
	const name = "ReduceScatterBlockInto"
	if err := c.check(name); err != nil {
		return err // before c.mixed reads c
	}
	p := c.Size()
	if p > 0 && len(v)%p != 0 {
		return c.fail(name, ErrCount, loc{}, "%d elements do not split into %d equal blocks", len(v), p)
	}
	blk := len(v) / max(p, 1)
	if len(out) != blk {
		return c.fail(name, ErrCount, loc{}, "out has %d elements, a block has %d", len(out), blk)
	}
	t := typeOf[E]()
	if op.vec == nil || t.shape != shapePlain || c.mixed() || c.IsInter() {
		counts := make([]int, p)
		for i := range counts {
			counts[i] = blk
		}
		r, err := reduceScatterT(c, name, v, counts, op)
		if err == nil {
			copy(out, r)
		}
		return err
	}
	if err := checkOp(c, name, op); err != nil {
		return err
	}
	return reduceScatterVecInto(c, name, t, v, out, func(i int) int { return i * blk }, op)
}

// reduceScatterVecInto is the reduce-scatter of plain elements with a
// predefined op: block r (elements [lo(r), lo(r+1))) into out on rank r.
// The algorithm halves the whole vector in place, in a pooled copy of it.
// ReduceScatter's, ReduceScatterBlock's and ReduceScatterBlockInto's road.
func reduceScatterVecInto[E any](c *Comm, name string, t *typeInfo, v, out []E, lo func(int) int, op Op[E]) error {
	p := len(c.group)
	vb := unsafeBytes(v, t.size)
	own := getScratch(len(vb))
	defer putScratch(own)
	b := (*own)[:len(vb)]
	copy(b, vb)
	var offsBuf [65]int
	offs := offsBuf[:0]
	if p+1 > len(offsBuf) {
		offs = make([]int, 0, p+1)
	}
	for i := range p + 1 {
		offs = append(offs, lo(i)*t.size)
	}
	sp := getScratch(len(vb))
	defer putScratch(sp)
	cc := c.typedCall(t, len(v))
	err := coll.ReduceScatterVec(cc, b, (*sp)[:len(vb)], offs, vecOf(t, op), c.collTag())
	if err = cc.done(name, err); err != nil {
		return err
	}
	r := c.rank
	copy(unsafeBytes(out, t.size), b[offs[r]:offs[r+1]])
	return nil
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
	if err = c.enterColl("ReduceScatter"); err != nil {
		return
	}
	defer c.exitColl()
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
	t := typeOf[E]()
	if op.vec != nil && t.shape == shapePlain {
		out := make([]E, lo[r+1]-lo[r])
		if err := reduceScatterVecInto(c, name, t, v, out, func(i int) int { return lo[i] }, op); err != nil {
			return nil, err
		}
		return out, nil
	}
	tag := c.collTag()
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

// ScanSliceInto is ScanSlice that writes the result into out, which must
// have the length of v (it may be v itself, but must not otherwise overlap
// it). With a predefined operation on plain elements nothing is
// allocated.
func ScanSliceInto[E any](c *Comm, v, out []E, op Op[E]) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ScanSliceInto", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("ScanSliceInto"); err != nil {
		return
	}
	defer c.exitColl()
	const name = "ScanSliceInto"
	if len(out) != len(v) {
		return c.fail(name, ErrCount, loc{}, "out has %d elements, v has %d", len(out), len(v))
	}
	if err := checkOp(c, name, op); err != nil {
		return err
	}
	t := typeOf[E]()
	if op.vec == nil || t.shape != shapePlain || c.mixed() {
		r, err := scanSliceT(c, name, v, op)
		if err == nil {
			copy(out, r)
		}
		return err
	}
	return scanVecInto(c, name, t, v, out, op)
}

// scanVecInto is the prefix reduction of plain elements with a
// predefined op, into out (as long as v; it may be v): ScanSlice's and
// ScanSliceInto's road.
func scanVecInto[E any](c *Comm, name string, t *typeInfo, v, out []E, op Op[E]) error {
	copy(out, v)
	b := unsafeBytes(out, t.size)
	sp := getScratch(2 * len(b))
	defer putScratch(sp)
	cc := c.typedCall(t, len(v))
	_, err := coll.ScanVec(cc, b, (*sp)[:2*len(b)], vecOf(t, op), true, c.collTag())
	return cc.done(name, err)
}

// ScanSlice returns on rank r the elementwise inclusive prefix reduction
// of the slices of ranks 0..r, in rank order (MPI_Scan with a count). All
// slices must have the same length.
func ScanSlice[E any](c *Comm, v []E, op Op[E]) (_ []E, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ScanSlice", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("ScanSlice"); err != nil {
		return
	}
	defer c.exitColl()
	return scanSliceT(c, "ScanSlice", v, op)
}

// scanSliceT is ScanSlice for the call named name.
func scanSliceT[E any](c *Comm, name string, v []E, op Op[E]) ([]E, error) {
	if err := checkOp(c, name, op); err != nil {
		return nil, err
	}
	if c.mixed() {
		return hetScanSliceT(c, v, op) // hetero_collv.go
	}
	if t := typeOf[E](); op.vec != nil && t.shape == shapePlain {
		res := make([]E, len(v))
		if err := scanVecInto(c, name, t, v, res, op); err != nil {
			return nil, err
		}
		return res, nil
	}
	ts := typeOf[[]E]()
	b, err := ownBytes(ts, &v)
	if err != nil {
		return nil, c.typeErr(name, loc{}, err)
	}
	cc := sliceCall[E](c, len(v))
	res, err := coll.Scan(cc, b, sliceCombine(cc, op), op.commutative, c.collTag())
	if err := cc.done(name, err); err != nil {
		return nil, err
	}
	var r []E
	if err := fromBytes(ts, res, &r); err != nil {
		return nil, c.typeErr(name, loc{}, err)
	}
	return r, nil
}
