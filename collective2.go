package mpi

import (
	"github.com/mpigo/mpi/internal/coll"
)

// Typed reduce-scatter, local reduction and the typed non-blocking
// collectives.

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
		return hetReduceScatterT(c, name, v, lo, op) // hetv.go
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

// Ibcast starts a Bcast (MPI_Ibcast); the Future's Wait returns root's v.
func Ibcast[T any](c *Comm, v T, root int) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Ibcast", c, root, Undefined), &err)
	}
	return startFuture(c, "Ibcast", func(vc *Comm) (T, error) { return Bcast(vc, v, root) })
}

// Ireduce starts a Reduce (MPI_Ireduce).
func Ireduce[T any](c *Comm, v T, op Op[T], root int) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Ireduce", c, root, Undefined), &err)
	}
	return startFuture(c, "Ireduce", func(vc *Comm) (T, error) { return Reduce(vc, v, op, root) })
}

// Iallreduce starts an Allreduce (MPI_Iallreduce).
func Iallreduce[T any](c *Comm, v T, op Op[T]) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iallreduce", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Iallreduce", func(vc *Comm) (T, error) { return Allreduce(vc, v, op) })
}

// IreduceSlice starts a ReduceSlice (MPI_Ireduce with a count). v must not
// be modified until the Future completes.
func IreduceSlice[E any](c *Comm, v []E, op Op[E], root int) (_ *Future[[]E], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IreduceSlice", c, root, Undefined), &err)
	}
	return startFuture(c, "IreduceSlice", func(vc *Comm) ([]E, error) { return ReduceSlice(vc, v, op, root) })
}

// IallreduceSlice starts an AllreduceSlice (MPI_Iallreduce with a count).
// v must not be modified until the Future completes.
func IallreduceSlice[E any](c *Comm, v []E, op Op[E]) (_ *Future[[]E], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IallreduceSlice", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "IallreduceSlice", func(vc *Comm) ([]E, error) { return AllreduceSlice(vc, v, op) })
}

// IreduceScatterBlock starts a ReduceScatterBlock (MPI_Ireduce_scatter_block).
func IreduceScatterBlock[E any](c *Comm, v []E, op Op[E]) (_ *Future[[]E], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IreduceScatterBlock", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "IreduceScatterBlock", func(vc *Comm) ([]E, error) { return ReduceScatterBlock(vc, v, op) })
}

// IreduceScatter starts a ReduceScatter (MPI_Ireduce_scatter).
func IreduceScatter[E any](c *Comm, v []E, counts []int, op Op[E]) (_ *Future[[]E], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IreduceScatter", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "IreduceScatter", func(vc *Comm) ([]E, error) { return ReduceScatter(vc, v, counts, op) })
}

// Igather starts a Gather (MPI_Igather, MPI_Igatherv).
func Igather[T any](c *Comm, v T, root int) (_ *Future[[]T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Igather", c, root, Undefined), &err)
	}
	return startFuture(c, "Igather", func(vc *Comm) ([]T, error) { return Gather(vc, v, root) })
}

// Iallgather starts an Allgather (MPI_Iallgather, MPI_Iallgatherv).
func Iallgather[T any](c *Comm, v T) (_ *Future[[]T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iallgather", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Iallgather", func(vc *Comm) ([]T, error) { return Allgather(vc, v) })
}

// Iscatter starts a Scatter (MPI_Iscatter, MPI_Iscatterv).
func Iscatter[T any](c *Comm, vs []T, root int) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iscatter", c, root, Undefined), &err)
	}
	return startFuture(c, "Iscatter", func(vc *Comm) (T, error) { return Scatter(vc, vs, root) })
}

// Ialltoall starts an Alltoall (MPI_Ialltoall, MPI_Ialltoallv).
func Ialltoall[T any](c *Comm, vs []T) (_ *Future[[]T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Ialltoall", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Ialltoall", func(vc *Comm) ([]T, error) { return Alltoall(vc, vs) })
}

// Iscan starts a Scan (MPI_Iscan).
func Iscan[T any](c *Comm, v T, op Op[T]) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iscan", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Iscan", func(vc *Comm) (T, error) { return Scan(vc, v, op) })
}

// Iexscan starts an Exscan (MPI_Iexscan); rank 0's result is the zero
// value.
func Iexscan[T any](c *Comm, v T, op Op[T]) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iexscan", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Iexscan", func(vc *Comm) (T, error) {
		r, _, err := Exscan(vc, v, op)
		return r, err
	})
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
		return hetScanSliceT(c, v, op) // hetv.go
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

// BcastInto copies root's buf into buf on every rank (MPI_Bcast with a
// count): buf must hold plain elements and have the same length
// everywhere. Nothing is allocated; the algorithm is chosen by size.
func BcastInto[E any](c *Comm, buf []E, root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("BcastInto", c, root, Undefined), &err)
	}
	if err := c.checkRoot("BcastInto", root); err != nil {
		return err
	}
	t := typeOf[E]()
	if t.shape != shapePlain {
		return c.typeErr("BcastInto", loc{}, errNotPlain(t))
	}
	if c.mixed() {
		return hetBcastInto(c, buf, root) // hetcoll.go
	}
	cc := c.typedCall(t, len(buf))
	return cc.done("BcastInto", c.bcastFixed(cc, unsafeBytes(buf, t.size), root))
}

// AllgatherInto gathers every rank's v (plain elements, the same length
// everywhere) into out on every rank, rank i's at out[i·len(v):]
// (MPI_Allgather with a count). out must have len(v)·Size() elements.
func AllgatherInto[E any](c *Comm, v, out []E) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AllgatherInto", c, Undefined, Undefined), &err)
	}
	if err := c.intraOnly("AllgatherInto"); err != nil {
		return err
	}
	t := typeOf[E]()
	if t.shape != shapePlain {
		return c.typeErr("AllgatherInto", loc{}, errNotPlain(t))
	}
	p := len(c.group)
	if len(out) != p*len(v) {
		return c.fail("AllgatherInto", ErrCount, loc{}, "out has %d elements, want %d", len(out), p*len(v))
	}
	if c.mixed() {
		return hetAllgatherInto(c, v, out) // hetv.go
	}
	copy(out[c.rank*len(v):], v)
	b := unsafeBytes(out, t.size)
	offs := make([]int, p+1)
	for i := range offs {
		offs[i] = i * len(v) * t.size
	}
	cc := c.typedCall(t, len(v))
	return cc.done("AllgatherInto", coll.AllgathervBuf(cc, "", b, offs, c.collTag()))
}

// AlltoallInto sends block j of send (len(send)/Size() plain elements) to
// rank j and receives rank j's block into block j of recv (MPI_Alltoall
// with a count). send and recv must have the same length, a multiple of
// Size(), on every rank, and must not overlap.
func AlltoallInto[E any](c *Comm, send, recv []E) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AlltoallInto", c, Undefined, Undefined), &err)
	}
	if err := c.intraOnly("AlltoallInto"); err != nil {
		return err
	}
	t := typeOf[E]()
	if t.shape != shapePlain {
		return c.typeErr("AlltoallInto", loc{}, errNotPlain(t))
	}
	p := len(c.group)
	if len(send) != len(recv) || len(send)%p != 0 {
		return c.fail("AlltoallInto", ErrCount, loc{}, "send has %d elements and recv %d, for %d ranks", len(send), len(recv), p)
	}
	if c.mixed() {
		return hetAlltoallInto(c, send, recv) // hetv.go
	}
	blk := len(send) / p * t.size
	cc := c.typedCall(t, len(send))
	return cc.done("AlltoallInto", coll.AlltoallBuf(cc, c.alltoallAlg(blk), unsafeBytes(send, t.size), unsafeBytes(recv, t.size), blk, c.collTag()))
}
