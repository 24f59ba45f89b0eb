package mpi

import (
	"errors"
	"math/bits"
	"strconv"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi/internal/coll"
)

// This file is the typed collective layer. Values become bytes as in the
// point-to-point layer; the algorithms in internal/coll move them over the
// communicator's private collective context.

func (c *Comm) checkRoot(op string, root int) error {
	if err := c.intraOnly(op); err != nil {
		return err
	}
	if root < 0 || root >= len(c.group) {
		return c.fail(op, ErrRoot, loc{}, "root %d is not a rank of %s (size %d)", root, c.Name(), len(c.group))
	}
	return nil
}

func (c *Comm) collErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*Error); ok {
		return c.handle(err)
	}
	var ce *classErr
	if errors.As(err, &ce) { // the algorithm found an error of a class
		return c.fail(op, ce.class, loc{}, "%s", ce.msg)
	}
	var inner *Error
	if errors.As(err, &inner) { // a point-to-point step failed: keep its class
		e := c.errorf(op, inner.Class, loc{}, "").(*Error)
		e.Cause = err
		return c.handle(e)
	}
	return c.fail(op, ErrOther, loc{}, "%v", err)
}

func checkOp[T any](c *Comm, op string, o Op[T]) error {
	if err := c.intraOnly(op); err != nil {
		return err
	}
	if !o.valid() {
		return c.fail(op, ErrOp, loc{}, "zero Op: make one with NewOp or use a predefined one such as Sum")
	}
	return nil
}

// ownBytes returns the bytes of v in memory that belongs to the caller.
func ownBytes[T any](t *typeInfo, v *T) ([]byte, error) {
	b, err := viewBytes(t, v, nil)
	if err != nil {
		return nil, err
	}
	if t.shape == shapePlainSlice || t.shape == shapeString {
		b = append([]byte(nil), b...)
	}
	return b, nil
}

// valueCombine folds whole values with op.fn.
// With a call, it does nothing once the call has seen a type mismatch
// (coll_call.go).
func valueCombine[T any](cc *collCall, t *typeInfo, op Op[T]) coll.Combine {
	return func(acc, in []byte, accFirst bool) ([]byte, error) {
		if cc != nil && cc.bad {
			return acc, nil
		}
		var a, b T
		if err := fromBytes(t, acc, &a); err != nil {
			return nil, err
		}
		if err := fromBytes(t, in, &b); err != nil {
			return nil, err
		}
		var r T
		if accFirst {
			r = op.fn(a, b)
		} else {
			r = op.fn(b, a)
		}
		return ownBytes(t, &r)
	}
}

// alignedView returns b as []E, copying into aligned memory if b is not
// aligned for E, and the bytes backing the view.
func alignedView[E any](t *typeInfo, b []byte) ([]E, []byte) {
	return alignedViewN[E](t, b, len(b)/t.size)
}

// alignedViewN is alignedView for a b known to hold n elements. It does
// no division: in an 8-byte reduction, the four divisions of two views
// per combine were a measurable part of the operation.
func alignedViewN[E any](t *typeInfo, b []byte, n int) ([]E, []byte) {
	var s []E
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))&uintptr(t.align-1) != 0 { // align is a power of two
		nb := make([]E, n)
		copy(unsafeBytes(nb, t.size), b)
		return nb, unsafeBytes(nb, t.size)
	}
	if len(b) == 0 {
		return s, b
	}
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(b))), n), b
}

func unsafeBytes[E any](s []E, size int) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*size)
}

// sliceCombine folds slices elementwise with op.
func sliceCombine[E any](cc *collCall, op Op[E]) coll.Combine {
	t := typeOf[E]()
	if t.shape != shapePlain {
		ts := typeOf[[]E]()
		return func(acc, in []byte, accFirst bool) ([]byte, error) {
			if cc != nil && cc.bad {
				return acc, nil
			}
			var a, b []E
			if err := fromBytes(ts, acc, &a); err != nil {
				return nil, err
			}
			if err := fromBytes(ts, in, &b); err != nil {
				return nil, err
			}
			if len(a) != len(b) {
				return nil, errLen(len(a), len(b))
			}
			op.apply(a, b, accFirst)
			return ownBytes(ts, &a)
		}
	}
	return func(acc, in []byte, accFirst bool) ([]byte, error) {
		if cc != nil && cc.bad {
			return acc, nil
		}
		if len(acc) != len(in) {
			return nil, errLen(len(acc)/t.size, len(in)/t.size)
		}
		a, ab := alignedView[E](t, acc)
		b, _ := alignedView[E](t, in)
		op.apply(a, b, accFirst)
		return ab, nil
	}
}

type lenError struct{ a, b int }

func (e lenError) Error() string {
	return "ranks passed slices of different lengths (" + strconv.Itoa(e.a) + " and " + strconv.Itoa(e.b) + ")"
}

func errLen(a, b int) error { return lenError{a, b} }

// Barrier returns only when every rank of c has called it (MPI_Barrier).
func Barrier(c *Comm) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Barrier", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Barrier"); err != nil {
		return
	}
	defer c.exitColl()
	return barrierOf(c)
}

// barrierOf is Barrier without the profiler hook, for the package's own use.
func barrierOf(c *Comm) error {
	if err := c.check("Barrier"); err != nil {
		return err
	}
	if c.inter != nil {
		return c.interBarrier()
	}
	return c.collErr("Barrier", c.barrier())
}

// Bcast returns root's v on every rank of c (MPI_Bcast). Non-root ranks'
// v is ignored.
//
// On an intercommunicator the root passes Root, the other members of its
// group ProcNull, and the other group the root's rank; the other group
// gets v.
func Bcast[T any](c *Comm, v T, root int) (_ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Bcast", c, root, Undefined), &err)
	}
	if err = c.enterColl("Bcast"); err != nil {
		return
	}
	defer c.exitColl()
	var zero T
	if c.IsInter() {
		return interBcastT(c, v, root)
	}
	if err := c.checkRoot("Bcast", root); err != nil {
		return zero, err
	}
	if c.mixed() {
		return hetBcastT(c, v, root) // hetero_coll.go
	}
	t := typeOf[T]()
	if inCall(t) &&
		coll.Select(coll.CollBcast, coll.Situation{Ranks: len(c.group), Bytes: t.size, Fixed: true}) == coll.AlgBinomial {
		return bcastValue(c, t, v, root)
	}
	var b []byte
	if c.rank == root {
		var err error
		if b, err = viewBytes(t, &v, nil); err != nil {
			return zero, c.typeErr("Bcast", loc{}, err)
		}
	}
	cc := c.typedCall(t, -1).atRoot(root)
	got, err := coll.BcastVarAlg(cc, "", b, root, c.collTag())
	if err := cc.done("Bcast", err); err != nil {
		return zero, err
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

// inCall reports whether a value of type t goes through a call's own
// buffer (collCall.val): plain, of up to 64 bytes. The typed collectives
// of one such value (bcastValue, gatherValue, scatterValue,
// allreduceValue) then need no encoding and allocate nothing of their
// own.
func inCall(t *typeInfo) bool {
	return t.shape == shapePlain && t.size <= int(unsafe.Sizeof(collCall{}.val))
}

// bcastValue is Bcast of a plain value of up to 64 bytes: every rank
// knows its size, so the value goes by itself through the call's own
// buffer, with nothing allocated (the value's encoded form, its length
// and the receivers' copies were 3 allocations a call). The road depends
// on T alone, so ranks that pass one T take one road. It is the binomial
// tree the general road takes for a short value (when the selection
// table says binomial, which Bcast checks), one message an edge, so ranks
// that pass different types exchange the same messages whichever road
// each took, and learn of it from the signatures they carry (ErrType).
func bcastValue[T any](c *Comm, t *typeInfo, v T, root int) (T, error) {
	cc := c.typedCall(t, -1).atRoot(root)
	b := cc.valBytes(t.size)
	if c.rank == root {
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&v)), t.size))
	}
	err := coll.BcastAlg(cc, coll.AlgBinomial, b, root, c.collTag())
	r := *(*T)(unsafe.Pointer(&cc.val))
	if err = cc.done("Bcast", err); err != nil {
		var zero T
		return zero, err
	}
	return r, nil
}

// reduceBytes runs a reduction of byte values to root, or to all if root
// < 0. It reports whether this rank holds a result.
// It ends the call cc.
func (c *Comm) reduceBytes(cc *collCall, opname string, b []byte, f coll.Combine, commutative bool, root int) ([]byte, bool, error) {
	var res []byte
	var err error
	if c.meetsVectors(root, 0) {
		// Where vector reductions meet in memory, this road meets too:
		// signatures compared with ranks that took the other road, and
		// the values combined there.
		res, err = c.meetCombine(cc, b, f, root)
		if err := cc.done(opname, err); err != nil {
			return nil, false, err
		}
		return res, root < 0 || c.rank == root, nil
	}
	if root >= 0 {
		res, err = coll.Reduce(cc, b, f, commutative, root, c.collTag())
	} else {
		res, err = coll.Allreduce(cc, b, f, commutative, c.collTag())
	}
	if err := cc.done(opname, err); err != nil {
		return nil, false, err
	}
	return res, root < 0 || c.rank == root, nil
}

// checkReduce validates a reduction's op and root (root < 0: to all).
func checkReduce[T any](c *Comm, opname string, op Op[T], root int) error {
	if err := checkOp(c, opname, op); err != nil {
		return err
	}
	if root >= 0 {
		return c.checkRoot(opname, root)
	}
	return nil
}

// reduceT runs a reduction of whole values to root (root < 0: to all).
func reduceT[T any](c *Comm, opname string, v T, op Op[T], root int) (T, error) {
	var zero T
	if err := checkReduce(c, opname, op, root); err != nil {
		return zero, err
	}
	if c.mixed() {
		return hetReduceT(c, opname, v, op, root) // hetero_coll.go
	}
	t := typeOf[T]()
	if root < 0 && op.vec != nil && t.size > 0 && inCall(t) && t.size <= len(collCall{}.small) {
		// A plain value and a predefined operation: the road of vectors,
		// with a vector of one (goroutine ranks then meet in memory),
		// whose signature names T, not []T.
		return allreduceValue(c, opname, t, op, v)
	}
	b, err := ownBytes(t, &v)
	if err != nil {
		return zero, c.typeErr(opname, loc{}, err)
	}
	cc := c.typedCall(t, -1).atRoot(root)
	res, mine, err := c.reduceBytes(cc, opname, b, valueCombine(cc, t, op), op.commutative, root)
	if err != nil || !mine {
		return zero, err
	}
	var r T
	if err := fromBytes(t, res, &r); err != nil {
		return zero, c.typeErr(opname, loc{}, err)
	}
	return r, nil
}

// Reduce combines every rank's v with op and returns the result at root
// (MPI_Reduce); other ranks get the zero value, which means nothing there
// (c.Rank() == root tells which rank holds the result; rank 0 of Exscan
// is the same). Values are combined in rank order, so op need not be
// commutative.
//
// On an intercommunicator (root as for Bcast) the root gets the reduction
// of the other group's values.
func Reduce[T any](c *Comm, v T, op Op[T], root int) (_ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Reduce", c, root, Undefined), &err)
	}
	if err = c.enterColl("Reduce"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return interReduceOp(c, "Reduce", v, op, root, false)
	}
	return reduceT(c, "Reduce", v, op, root)
}

// Allreduce combines every rank's v with op and returns the result on
// every rank (MPI_Allreduce).
// On an intercommunicator each group gets the reduction of the other
// group's values.
func Allreduce[T any](c *Comm, v T, op Op[T]) (_ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Allreduce", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Allreduce"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return interReduceOp(c, "Allreduce", v, op, 0, true)
	}
	return reduceT(c, "Allreduce", v, op, -1)
}

// scratchPools hold receive buffers for in-place reductions, by
// power-of-two size class.
var scratchPools [40]sync.Pool

func getScratch(n int) *[]byte {
	c := bits.Len(uint(max(n-1, 0)))
	if p, _ := scratchPools[c].Get().(*[]byte); p != nil {
		return p
	}
	b := make([]byte, 1<<c)
	return &b
}

func putScratch(p *[]byte) { scratchPools[bits.Len(uint(cap(*p)-1))].Put(p) }

// allreduceFast runs a predefined elementwise operation over plain elements
// in place in out: no encoding, no per-element call, and no allocation but
// a pooled receive buffer. The algorithm (recursive doubling, Rabenseifner
// or ring) is chosen by size.
//
// src, if not nil, holds this rank's contribution (the bytes of as many
// elements as out has); nil means that out holds it.
//
// count is what the call's type signature counts (typedCall): len(out)
// for a slice, -1 for a single value (Allreduce of a T).
//
// It returns the call's error, an *Error.
func allreduceFast[E any](c *Comm, opname string, t *typeInfo, op Op[E], src []byte, out []E, count int) error {
	b := unsafeBytes(out, t.size)
	cc := c.typedCall(t, count)
	if len(b) <= len(cc.small) {
		// A short vector's receive buffer is the call's own.
		return cc.done(opname, c.allreduceVec(cc, src, b, cc.small[:len(b)], t.size, vecOf(t, op)))
	}
	sp := getScratch(len(b))
	err := cc.done(opname, c.allreduceVec(cc, src, b, (*sp)[:len(b)], t.size, vecOf(t, op)))
	putScratch(sp)
	return err
}

// allreduceValue is allreduceFast for the single plain value v (t.size
// bytes, at most collCall.val's), through the call's own buffer: a
// vector of one made of the caller's variable would escape to the heap
// (meetings keep the output in a slot other ranks read), one allocation
// per call.
func allreduceValue[T any](c *Comm, opname string, t *typeInfo, op Op[T], v T) (T, error) {
	cc := c.typedCall(t, -1)
	b := cc.valBytes(t.size)
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&v)), t.size))
	err := c.allreduceVec(cc, nil, b, cc.small[:t.size], t.size, vecOf(t, op))
	r := *(*T)(unsafe.Pointer(&cc.val))
	if err = cc.done(opname, err); err != nil {
		var zero T
		return zero, err
	}
	return r, nil
}

// vecOf turns a predefined op's slice kernel into a byte kernel.
func vecOf[E any](t *typeInfo, op Op[E]) coll.VecOp {
	return func(inout, in []byte) {
		n := len(inout) / t.size
		// Both aligned (as good as always): the slices are views of the
		// bytes, made here rather than by alignedViewN, whose two calls
		// cost more than an 8-byte reduction's kernel.
		pa, pb := unsafe.Pointer(unsafe.SliceData(inout)), unsafe.Pointer(unsafe.SliceData(in))
		if n > 0 && (uintptr(pa)|uintptr(pb))&uintptr(t.align-1) == 0 {
			op.vec(unsafe.Slice((*E)(pa), n), unsafe.Slice((*E)(pb), n))
			return
		}
		x, xb := alignedViewN[E](t, inout, n)
		y, _ := alignedViewN[E](t, in, n)
		op.vec(x, y)
		if len(xb) > 0 && &xb[0] != &inout[0] {
			copy(inout, xb)
		}
	}
}

// reduceSliceT runs an elementwise reduction (root < 0: to all).
func reduceSliceT[E any](c *Comm, opname string, v []E, op Op[E], root int) ([]E, error) {
	if err := checkReduce(c, opname, op, root); err != nil {
		return nil, err
	}
	if c.mixed() {
		return hetReduceSliceT(c, opname, v, op, root) // hetero_coll.go
	}
	if op.vec != nil && typeOf[E]().shape == shapePlain {
		if root < 0 {
			res := make([]E, len(v))
			copy(res, v)
			if err := allreduceFast(c, opname, typeOf[E](), op, nil, res, len(res)); err != nil {
				return nil, err
			}
			return res, nil
		}
		var res []E // the root's result; elsewhere a pooled copy is combined
		if c.rank == root {
			res = make([]E, len(v))
		}
		if err := reduceVecInto(c, opname, typeOf[E](), v, res, op, root); err != nil || c.rank != root {
			return nil, err
		}
		return res, nil
	}
	ts := typeOf[[]E]()
	b, err := ownBytes(ts, &v)
	if err != nil {
		return nil, c.typeErr(opname, loc{}, err)
	}
	cc := sliceCall[E](c, len(v))
	res, mine, err := c.reduceBytes(cc, opname, b, sliceCombine(cc, op), op.commutative, root)
	if err != nil || !mine {
		return nil, err
	}
	var r []E
	if err := fromBytes(ts, res, &r); err != nil {
		return nil, c.typeErr(opname, loc{}, err)
	}
	return r, nil
}

// ReduceSlice combines the slices of every rank elementwise with op and
// returns the result at root (MPI_Reduce with a count); other ranks get
// nil. All slices must have the same length.
func ReduceSlice[E any](c *Comm, v []E, op Op[E], root int) (_ []E, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReduceSlice", c, root, Undefined), &err)
	}
	if err = c.enterColl("ReduceSlice"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return interReduceSliceOp(c, "ReduceSlice", v, op, root, false)
	}
	return reduceSliceT(c, "ReduceSlice", v, op, root)
}

// AllreduceSlice combines the slices of every rank elementwise with op and
// returns the result on every rank (MPI_Allreduce with a count).
func AllreduceSlice[E any](c *Comm, v []E, op Op[E]) (_ []E, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AllreduceSlice", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("AllreduceSlice"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return interReduceSliceOp(c, "AllreduceSlice", v, op, 0, true)
	}
	return reduceSliceT(c, "AllreduceSlice", v, op, -1)
}

// AllreduceSliceInto is AllreduceSlice that writes the result into out,
// which must have the length of v. out may be v itself (in place), but
// must not otherwise overlap it.
func AllreduceSliceInto[E any](c *Comm, v, out []E, op Op[E]) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AllreduceSliceInto", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("AllreduceSliceInto"); err != nil {
		return
	}
	defer c.exitColl()
	if len(out) != len(v) {
		return c.fail("AllreduceSliceInto", ErrCount, loc{}, "out has %d elements, v has %d", len(out), len(v))
	}
	if err := checkOp(c, "AllreduceSliceInto", op); err != nil {
		return err
	}
	if t := typeOf[E](); op.vec != nil && t.shape == shapePlain && !c.mixed() {
		return allreduceFast(c, "AllreduceSliceInto", t, op, unsafeBytes(v, t.size), out, len(out))
	}
	r, err := reduceSliceT(c, "AllreduceSliceInto", v, op, -1)
	if err != nil {
		return err
	}
	copy(out, r)
	return nil
}

// ReduceSliceInto is ReduceSlice that writes the result into out at root,
// where out must have the length of v (it may be v itself, but must not
// otherwise overlap it); other ranks leave out alone (nil will do). With a
// predefined operation on plain elements nothing is allocated.
func ReduceSliceInto[E any](c *Comm, v, out []E, op Op[E], root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReduceSliceInto", c, root, Undefined), &err)
	}
	if err = c.enterColl("ReduceSliceInto"); err != nil {
		return
	}
	defer c.exitColl()
	const name = "ReduceSliceInto"
	if c.IsInter() {
		r, err := interReduceSliceOp(c, name, v, op, root, false)
		if err == nil && root == Root {
			if len(out) != len(r) {
				return c.fail(name, ErrCount, loc{}, "out has %d elements, the result %d", len(out), len(r))
			}
			copy(out, r)
		}
		return err
	}
	if err := checkReduce(c, name, op, root); err != nil {
		return err
	}
	if c.rank == root && len(out) != len(v) {
		return c.fail(name, ErrCount, loc{}, "out has %d elements, v has %d", len(out), len(v))
	}
	t := typeOf[E]()
	if op.vec == nil || t.shape != shapePlain || c.mixed() {
		r, err := reduceSliceT(c, name, v, op, root)
		if err == nil && c.rank == root {
			copy(out, r)
		}
		return err
	}
	return reduceVecInto(c, name, t, v, out, op, root)
}

// reduceVecInto is the reduction of plain elements with a predefined op
// to root, into out there (as long as v; it may be v); out is not touched
// elsewhere. The algorithm combines in place at every rank that forwards
// a partial result: the root's out, a pooled copy elsewhere.
// ReduceSlice's and ReduceSliceInto's road.
func reduceVecInto[E any](c *Comm, name string, t *typeInfo, v, out []E, op Op[E], root int) error {
	vb := unsafeBytes(v, t.size)
	if n := len(vb); n <= len(collCall{}.small) {
		// A short vector: the call's own buffers, as allreduceFast's,
		// instead of two pooled ones (val, 8-byte aligned, holds a
		// rank's copy of its contribution outside the root).
		cc := c.typedCall(t, len(v)).atRoot(root)
		b := unsafeBytes(out, t.size)
		if c.rank != root {
			b = cc.valBytes(n)
		}
		copy(b, vb)
		return cc.done(name, c.reduceVec(cc, b, cc.small[:n], t.size, vecOf(t, op), root))
	}
	var b []byte
	if c.rank == root {
		b = unsafeBytes(out, t.size)
	} else {
		own := getScratch(len(vb))
		defer putScratch(own)
		b = (*own)[:len(vb)]
	}
	copy(b, vb)
	sp := getScratch(len(vb))
	defer putScratch(sp)
	cc := c.typedCall(t, len(v)).atRoot(root)
	return cc.done(name, c.reduceVec(cc, b, (*sp)[:len(vb)], t.size, vecOf(t, op), root))
}

// Scan returns, on rank r, v(0) op v(1) op ... op v(r): the inclusive
// prefix reduction in rank order (MPI_Scan).
func Scan[T any](c *Comm, v T, op Op[T]) (_ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Scan", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Scan"); err != nil {
		return
	}
	defer c.exitColl()
	var zero T
	if err := checkOp(c, "Scan", op); err != nil {
		return zero, err
	}
	if c.mixed() {
		r, _, err := hetScanT(c, "Scan", v, op, true) // hetero_coll.go
		return r, err
	}
	t := typeOf[T]()
	b, err := ownBytes(t, &v)
	if err != nil {
		return zero, c.typeErr("Scan", loc{}, err)
	}
	cc := c.typedCall(t, -1)
	res, err := coll.Scan(cc, b, valueCombine(cc, t, op), op.commutative, c.collTag())
	if err := cc.done("Scan", err); err != nil {
		return zero, err
	}
	var r T
	if err := fromBytes(t, res, &r); err != nil {
		return zero, c.typeErr("Scan", loc{}, err)
	}
	return r, nil
}

// Exscan returns, on rank r > 0, v(0) op ... op v(r-1): the exclusive
// prefix reduction (MPI_Exscan). Rank 0 has no prefix and gets the zero
// value, which means nothing there, as on the ranks other than root of
// Reduce (c.Rank() == 0 tells; Iexscan's Wait does the same).
func Exscan[T any](c *Comm, v T, op Op[T]) (_ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Exscan", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Exscan"); err != nil {
		return
	}
	defer c.exitColl()
	res, _, err := exscanT(c, v, op)
	return res, err
}

// exscanT is Exscan, with ok false on rank 0 (whose result is undefined).
func exscanT[T any](c *Comm, v T, op Op[T]) (res T, ok bool, err error) {
	var zero T
	if err := checkOp(c, "Exscan", op); err != nil {
		return zero, false, err
	}
	if c.mixed() {
		return hetScanT(c, "Exscan", v, op, false) // hetero_coll.go
	}
	t := typeOf[T]()
	b, err := ownBytes(t, &v)
	if err != nil {
		return zero, false, c.typeErr("Exscan", loc{}, err)
	}
	cc := c.typedCall(t, -1)
	out, err := coll.Exscan(cc, b, valueCombine(cc, t, op), op.commutative, c.collTag())
	if err := cc.done("Exscan", err); err != nil {
		return zero, false, err
	}
	if c.rank == 0 {
		return zero, false, nil
	}
	var r T
	if err := fromBytes(t, out, &r); err != nil {
		return zero, false, c.typeErr("Exscan", loc{}, err)
	}
	return r, true, nil
}

func decodeAll[T any](c *Comm, op string, t *typeInfo, parts [][]byte) ([]T, error) {
	out := make([]T, len(parts))
	for i, p := range parts {
		if err := fromBytes(t, p, &out[i]); err != nil {
			return nil, c.typeErr(op, loc{}, err)
		}
	}
	return out, nil
}

// Gather returns every rank's v, in rank order, at root (MPI_Gather);
// other ranks get nil. Values may differ in size from rank to rank (as with
// MPI_Gatherv).
//
// On an intercommunicator (root as for Bcast) the root gets the other
// group's values.
func Gather[T any](c *Comm, v T, root int) (_ []T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Gather", c, root, Undefined), &err)
	}
	if err = c.enterColl("Gather"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return interGatherT(c, v, root)
	}
	if err := c.checkRoot("Gather", root); err != nil {
		return nil, err
	}
	if c.mixed() {
		return hetGatherT(c, "Gather", v, root, false) // hetero_coll.go
	}
	t := typeOf[T]()
	if inCall(t) {
		return gatherValue(c, t, v, root)
	}
	b, err := viewBytes(t, &v, nil)
	if err != nil {
		return nil, c.typeErr("Gather", loc{}, err)
	}
	cc := c.typedCall(t, -1).atRoot(root)
	parts, err := coll.Gather(cc, b, root, c.collTag())
	if err := cc.done("Gather", err); err != nil {
		return nil, err
	}
	if c.rank != root {
		return nil, nil
	}
	return decodeAll[T](c, "Gather", t, parts)
}

// gatherValue is Gather of a plain value of up to 64 bytes: every
// block's length is known, so the blocks go without headers straight
// into the root's result (coll.GatherFixed), and only the result is
// allocated. It is the same binomial tree as the general road's, one
// message an edge, so ranks that pass different types exchange the same
// messages whichever road each took and learn of it from their
// signatures (ErrType).
func gatherValue[T any](c *Comm, t *typeInfo, v T, root int) ([]T, error) {
	cc := c.typedCall(t, -1).atRoot(root)
	b := cc.valBytes(t.size)
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&v)), t.size))
	var res []T
	var out []byte
	if c.rank == root {
		res = make([]T, len(c.group))
		out = unsafeBytes(res, t.size)
	}
	if err := cc.done("Gather", coll.GatherFixed(cc, b, out, root, c.collTag())); err != nil {
		return nil, err
	}
	return res, nil
}

// scatterValue is Scatter of plain values of up to 64 bytes (vs is read
// at root only): every block's length is known, so root sends slices of
// vs itself down Scatter's binomial tree without headers
// (coll.ScatterFixed), and each rank's value arrives in the call's own
// buffer: nothing is allocated. One message an edge, as on the general
// road, so ranks that pass different types learn of it from the
// signatures (ErrType).
func scatterValue[T any](c *Comm, t *typeInfo, vs []T, root int) (T, error) {
	cc := c.typedCall(t, -1).atRoot(root)
	b := cc.valBytes(t.size)
	var in []byte
	if c.rank == root {
		in = unsafeBytes(vs, t.size)
	}
	err := coll.ScatterFixed(cc, in, b, root, c.collTag())
	r := *(*T)(unsafe.Pointer(&cc.val))
	if err = cc.done("Scatter", err); err != nil {
		var zero T
		return zero, err
	}
	return r, nil
}

// Allgather returns every rank's v, in rank order, on every rank
// (MPI_Allgather, and MPI_Allgatherv when sizes differ).
//
// On an intercommunicator each group gets the other group's values.
func Allgather[T any](c *Comm, v T) (_ []T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Allgather", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Allgather"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return interAllgatherT(c, v)
	}
	if err := c.check("Allgather"); err != nil {
		return nil, err
	}
	if c.mixed() {
		return hetGatherT(c, "Allgather", v, 0, true) // hetero_coll.go
	}
	t := typeOf[T]()
	in := c.inProcess()
	if in && t.shape == shapePlain {
		if out, done, err := allgatherPlain(c, t, v); done {
			return out, err
		}
	}
	b, err := viewBytes(t, &v, nil)
	if err != nil {
		return nil, c.typeErr("Allgather", loc{}, err)
	}
	cc := c.typedCall(t, -1)
	if in && t.shape != shapePlain {
		// Among goroutine ranks that publish, every call counts as a
		// meeting: an encoded value publishes that it goes by messages,
		// so that a rank passing a plain one does too (allgatherPlain).
		c.allgatherInProcess(cc, nil, nil, true)
	}
	parts, err := coll.AllgatherSel(cc, b, c.collTag())
	if err := cc.done("Allgather", err); err != nil {
		return nil, err
	}
	return decodeAll[T](c, "Allgather", t, parts)
}

// allgatherPlain is Allgather of a plain value among goroutine ranks that
// meet in memory: by publication when every rank passes a value of the
// same type of at most meetInline bytes (allgatherInProcess). It reports
// whether it did the call; if not, the ranks go by messages, and this
// rank's meeting is counted already.
func allgatherPlain[T any](c *Comm, t *typeInfo, v T) ([]T, bool, error) {
	cc := c.typedCall(t, -1)
	out := make([]T, len(c.group))
	out[c.rank] = v
	ob := unsafeBytes(out, t.size)
	done, err := c.allgatherInProcess(cc, ob[c.rank*t.size:(c.rank+1)*t.size], ob, false)
	if err := cc.done("Allgather", err); !done || err != nil {
		return nil, done || err != nil, err
	}
	return out, true, nil
}

// Scatter sends vs[i] from root to rank i and returns each rank's value
// (MPI_Scatter, MPI_Scatterv). vs is read only at root, where it must have
// one value per rank.
//
// On an intercommunicator (root as for Bcast) the root's vs has one value
// per member of the other group.
func Scatter[T any](c *Comm, vs []T, root int) (_ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Scatter", c, root, Undefined), &err)
	}
	if err = c.enterColl("Scatter"); err != nil {
		return
	}
	defer c.exitColl()
	var zero T
	if c.IsInter() {
		return interScatterT(c, vs, root)
	}
	if err := c.checkRoot("Scatter", root); err != nil {
		return zero, err
	}
	t := typeOf[T]()
	var parts [][]byte
	if c.rank == root {
		if len(vs) != len(c.group) {
			return zero, c.fail("Scatter", ErrCount, loc{}, "root has %d values for %d ranks", len(vs), len(c.group))
		}
		var err error
		if c.mixed() {
			return hetScatterT(c, vs, root) // hetero_coll.go
		}
		if inCall(t) {
			return scatterValue(c, t, vs, root)
		}
		if parts, err = valueParts(c, "Scatter", t, vs); err != nil {
			return zero, err
		}
	} else if c.mixed() {
		return hetScatterT(c, vs, root)
	} else if inCall(t) {
		return scatterValue[T](c, t, nil, root)
	}
	cc := c.typedCall(t, -1).atRoot(root)
	got, err := coll.Scatter(cc, parts, root, c.collTag())
	if err := cc.done("Scatter", err); err != nil {
		return zero, err
	}
	var r T
	if err := fromBytes(t, got, &r); err != nil {
		return zero, c.typeErr("Scatter", loc{}, err)
	}
	return r, nil
}

// Alltoall sends vs[j] to rank j and returns the values every rank sent
// to this one, in rank order (MPI_Alltoall, MPI_Alltoallv). vs must have
// one value per rank.
//
// On an intercommunicator vs has one value per member of the other group,
// and the result one value from each of them.
func Alltoall[T any](c *Comm, vs []T) (_ []T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Alltoall", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Alltoall"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return interAlltoallT(c, vs)
	}
	if err := c.check("Alltoall"); err != nil {
		return nil, err
	}
	if len(vs) != len(c.group) {
		return nil, c.fail("Alltoall", ErrCount, loc{}, "%d values for %d ranks", len(vs), len(c.group))
	}
	if c.mixed() {
		return hetAlltoallT(c, vs) // hetero_coll.go
	}
	t := typeOf[T]()
	parts, err := valueParts(c, "Alltoall", t, vs)
	if err != nil {
		return nil, err
	}
	cc := c.typedCall(t, -1)
	got, err := coll.Alltoall(cc, parts, c.collTag())
	if err := cc.done("Alltoall", err); err != nil {
		return nil, err
	}
	return decodeAll[T](c, "Alltoall", t, got)
}

// valueParts returns the bytes of each value of vs (encoded where T is
// not plain), for the collectives that send one value per rank.
func valueParts[T any](c *Comm, op string, t *typeInfo, vs []T) ([][]byte, error) {
	parts := make([][]byte, len(vs))
	for i := range vs {
		b, err := viewBytes(t, &vs[i], nil)
		if err != nil {
			return nil, c.typeErr(op, loc{}, err)
		}
		parts[i] = b
	}
	return parts, nil
}
