package mpi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi/internal/datatype"
)

// Collectives with datatypes that are not contiguous.
//
// The collective algorithms (internal/coll) move contiguous bytes. A
// contiguous datatype (one run of bytes covering its extent, as every
// predefined one is) is handed to them as the caller's memory, untouched.
// Any other datatype is staged at the low-level API boundary: the send
// side is packed through its type map into a contiguous buffer (the packed
// form, count·Size() bytes, the same bytes a point-to-point send of it puts
// on the wire), the algorithm runs over packed bytes, and the receive side
// is unpacked from a contiguous buffer into the caller's memory through its
// own type map. Senders and receivers may thus use different datatypes
// with the same type signature, as in MPI. Counts and displacements in
// elements step by the datatype's extent; Alltoallw's displacements are
// bytes. Reductions run on the packed elements (see packedType).

// dspan is count elements of dt in buf, the first starting at byte org.
type dspan struct {
	buf   []byte
	org   int
	count int
	dt    *Datatype
}

// pack copies the packed form of the elements into dst (count·size bytes).
func (s *dspan) pack(dst []byte) { s.dt.t.PackFrom(dst, s.buf, int64(s.org), 0) }

// unpack copies the packed form src into the elements.
func (s *dspan) unpack(src []byte) { s.dt.t.UnpackFrom(src, s.buf, int64(s.org), 0) }

// spanAt reports why count elements of d whose first starts at byte org
// do not fit a buffer of n bytes, or "" if they do.
func (d *Datatype) spanAt(org, count, n int) string {
	lo, hi := d.t.Span(count)
	if lo == hi {
		return ""
	}
	lo, hi = lo+int64(org), hi+int64(org)
	if lo < 0 {
		return fmt.Sprintf("%d elements of %s at byte %d start %d bytes before the buffer", count, d.name, org, -lo)
	}
	if hi > int64(n) {
		return fmt.Sprintf("%d elements of %s at byte %d need %d bytes, the buffer has %d", count, d.name, org, hi, n)
	}
	return ""
}

// collBuf is checkBuf for the collectives: it returns the contiguous bytes
// of count elements of dt in buf. For a contiguous datatype they are buf's
// own bytes and sp is nil; otherwise they are a staging buffer of the
// packed elements (packed from buf if pack is set, zero otherwise), and sp
// is where to unpack them if the collective writes them.
func (c *Comm) collBuf(op string, buf []byte, count int, dt *Datatype, pack bool) (b []byte, sp *dspan, err error) {
	if isBottom(buf) {
		return nil, nil, c.fail(op, ErrBuffer, loc{}, "collectives do not take Bottom: pass the buffer")
	}
	if dt != nil && dt.padded && c.typeProblem(dt) == "" && count >= 0 && dt.block() > 0 {
		// Whole elements, padding included (pair types, DatatypeOf's
		// structs): the padding is never read, so no staging. The
		// product is checked: a wrapped one would slice the buffer wrong.
		n, ok := countBytes(count, dt.block())
		if !ok {
			return nil, nil, c.fail(op, ErrCount, loc{}, "%d elements of %s (%d bytes each) overflow an int", count, dt.name, dt.block())
		}
		if n <= len(buf) {
			return buf[:n], nil, nil
		}
		return nil, nil, c.fail(op, ErrBuffer, loc{}, "%d elements of %s need %d bytes, the buffer has %d", count, dt.name, n, len(buf))
	}
	m, err := c.checkBuf(op, loc{}, buf, count, dt)
	if err != nil {
		return nil, nil, err
	}
	if m.lay == nil {
		return m.b, nil, nil
	}
	sp = &dspan{buf: buf, count: count, dt: dt}
	b = make([]byte, count*dt.size)
	if pack {
		sp.pack(b)
	}
	return b, sp, nil
}

// vStage stages the blocks of a v-collective's buffer whose datatype is
// not contiguous: block i (blocks[i] in the caller's buffer) is
// tmp[lo[i]:hi[i]], the blocks packed one after another in rank order.
type vStage struct {
	blocks []dspan
	tmp    []byte
	lo, hi []int
}

func (s *vStage) pack(i int)   { s.blocks[i].pack(s.tmp[s.lo[i]:s.hi[i]]) }
func (s *vStage) unpack(i int) { s.blocks[i].unpack(s.tmp[s.lo[i]:s.hi[i]]) }

// checkV validates the counts and displacements (in elements of dt; nil:
// the blocks one after another in rank order) of a v-collective against
// buf. It returns the contiguous buffer the algorithm works on and the
// byte ranges of the blocks in it: buf itself for a contiguous dt (st
// nil), else the staging buffer st.tmp, whose blocks the caller packs
// from buf (st.pack) or unpacks into it (st.unpack). The ranges of a
// contiguous dt are made in scratch when it has room for them (a blocking
// call's array on its stack); nil makes them on the heap.
func (c *Comm) checkV(name, what string, buf []byte, counts, displs []int, dt *Datatype, scratch []int) (b []byte, lo, hi []int, st *vStage, err error) {
	p := len(c.group)
	if isBottom(buf) {
		return nil, nil, nil, nil, c.argErr(name, ErrBuffer, "collectives do not take Bottom: pass the buffer")
	}
	if dt == nil {
		return nil, nil, nil, nil, c.argErr(name, ErrType, "nil %s datatype", what)
	}
	if s := c.typeProblem(dt); s != "" {
		return nil, nil, nil, nil, c.argErr(name, ErrType, "%s", s)
	}
	if len(counts) != p || (displs != nil && len(displs) != p) {
		return nil, nil, nil, nil, c.argErr(name, ErrCount, "%s: %d counts and %d displacements for %d ranks", what, len(counts), len(displs), p)
	}
	for i, n := range counts {
		if n < 0 || (displs != nil && displs[i] < 0) {
			return nil, nil, nil, nil, c.argErr(name, ErrCount, "%s: negative count or displacement for rank %d", what, i)
		}
	}
	if b := dt.block(); b > 0 {
		var bad int
		if lo, hi, bad = blockRanges(counts, displs, b, scratch); bad >= 0 {
			return nil, nil, nil, nil, c.argErr(name, ErrCount, "%s: the block of rank %d (%d elements of %s) lies beyond any buffer", what, bad, counts[bad], dt.name)
		}
		for i := range hi {
			if hi[i] > len(buf) {
				return nil, nil, nil, nil, c.argErr(name, ErrBuffer, "%s block %d ends at byte %d, the buffer has %d", what, i, hi[i], len(buf))
			}
		}
		return buf, lo, hi, nil, nil
	}
	ext := int(dt.t.Extent())
	st = &vStage{blocks: make([]dspan, p), lo: make([]int, p), hi: make([]int, p)}
	org, off := 0, 0
	for i, n := range counts {
		if displs != nil {
			org = displs[i] * ext
		}
		if s := dt.spanAt(org, n, len(buf)); s != "" {
			return nil, nil, nil, nil, c.argErr(name, ErrBuffer, "%s block %d: %s", what, i, s)
		}
		st.blocks[i] = dspan{buf: buf, org: org, count: n, dt: dt}
		st.lo[i], st.hi[i] = off, off+n*dt.size
		org += n * ext
		off = st.hi[i]
	}
	st.tmp = make([]byte, off)
	return st.tmp, st.lo, st.hi, st, nil
}

// packedType returns the stand-in on which the reductions run for the
// non-contiguous datatype d: d's elements packed, a contiguous datatype of
// d's size. The predefined operations apply to it element by element
// through the kernels of d's basic type (kernel), so a vector of Float64
// sums like Float64s, and a datatype mixing basic types has none (ErrOp).
// A user operation gets d itself and its elements unpacked into d's
// layout (ReduceOp.ordered).
func (d *Datatype) packedType() *Datatype {
	t, err := datatype.NewContiguous(d.size, datatype.NewBasic(datatype.BasicByte))
	if err != nil { // d.size fits an int, so this cannot fail
		t = d.t
	}
	return &Datatype{name: d.name, size: d.size, sig: d.sig, t: t, derived: true, committed: true, packedOf: d}
}

// predefinedWithOps lists the predefined datatypes that have reduction
// kernels: a derived datatype's elements are reduced with the kernels of
// the one among them it is made of. The index of one travels in RMA
// requests, so new ones go at the end. The C pair types (MPI_2INT and
// the like, through the standard ABI) have MINLOC and MAXLOC, in
// collectives and in accumulates (MPICH's rma/acc_loc). The numbers Go
// has none of (ctypes.go) have the kernels the standard ABI library
// registers (internal/cnum), none in a Go program.
var predefinedWithOps = []*Datatype{Bool, Int8, Int16, Int32, Int64, Int, Uint8, Uint16, Uint32, Uint64, Uint, Float32, Float64, Complex64, Complex128, Float32Loc, Float64Loc, Int32Loc, Int64Loc, IntLoc, Byte,
	CFloatInt, CDoubleInt, CLongInt, C2Int, CShortInt,
	CLongDouble, CLongDoubleComplex, CLongDoubleInt, Float16, Float128, Int128, Complex32, Complex256}

// elemType returns the predefined datatype every element of d is made of,
// or nil if d mixes them: the one with d's signature (a derived datatype
// of one predefined datatype carries its signature; this finds the pair
// types), else the one of d's single basic kind.
func elemType(d *Datatype) *Datatype {
	all := predefinedWithOps
	if d.sig != 0 {
		for _, e := range all {
			if e.sig == d.sig && d.size%e.size == 0 {
				return e
			}
		}
	}
	k := d.t.Uniform().Canon()
	if k == 0 {
		return nil
	}
	for _, e := range all {
		if e.t.Size == int64(k.Size()) && e.t.Uniform().Canon() == k {
			return e
		}
	}
	return nil
}

// kernel returns the predefined operation name's kernel on d: d's own for
// a predefined datatype; for a contiguous derived datatype or the packed
// stand-in of a non-contiguous one, that of the predefined datatype its
// elements are made of. nil if there is none.
func (d *Datatype) kernel(name string) func(inout, in []byte) {
	if k := d.opKernel(name); k != nil || !d.derived {
		return k
	}
	return d.derivedKernel(name)
}

// derivedKernel is kernel for a derived datatype.
func (d *Datatype) derivedKernel(name string) func(inout, in []byte) {
	src := d
	if d.packedOf != nil {
		src = d.packedOf
	} else if !d.t.Contiguous() {
		return nil
	}
	if e := elemType(src); e != nil {
		k := e.opKernel(name)
		if b := e.block(); k != nil && b > 0 && b != e.size {
			return unpaddedKernel(k, e)
		}
		return k
	}
	return nil
}

// unpaddedKernel runs the kernel k of a padded datatype e (a pair type,
// whose kernel reads Go's layout with its padding) on packed elements of
// e: it lays the operands out as Go values, combines them there and packs
// the result back.
func unpaddedKernel(k func(inout, in []byte), e *Datatype) func(inout, in []byte) {
	return func(inout, in []byte) {
		n := len(inout) / e.size
		a, b := make([]byte, n*e.block()), make([]byte, n*e.block())
		e.t.UnpackAt(inout, a, 0)
		e.t.UnpackAt(in[:len(inout)], b, 0)
		k(a, b)
		e.t.PackAt(inout, a, 0)
	}
}

// userOnLayout applies the user function f to the packed elements in and
// inout of d: it unpacks both into d's layout, calls f there and packs the
// result back into inout, so that f sees its datatype's memory as MPI
// promises.
func userOnLayout(f func(in, inout []byte, count int, dt *Datatype), d *Datatype, in, inout []byte) {
	if d.size == 0 {
		f(nil, nil, 0, d)
		return
	}
	n := len(inout) / d.size
	lo, hi := d.t.Span(n)
	// The function may touch whole extents (a C struct assignment copies
	// the padding too), so the copies span n extents from the lower
	// bound, as the caller's memory did, with element 0 aligned to 16
	// bytes (C's long double and SSE code need it).
	if ext := d.t.Extent(); ext > 0 {
		lo = min(lo, d.t.LB)
		hi = max(hi, d.t.LB+int64(n)*ext)
	}
	org := -min(lo, 0)
	a, b := alignedBytes(hi+org, org), alignedBytes(hi+org, org)
	d.t.UnpackFrom(in[:n*d.size], a, org, 0)
	d.t.UnpackFrom(inout[:n*d.size], b, org, 0)
	f(a[org:], b[org:], n, d)
	d.t.PackFrom(inout[:n*d.size], b, org, 0)
}

// alignedBytes returns n zeroed bytes whose byte at offset org is
// aligned to 16 bytes.
func alignedBytes(n, org int64) []byte {
	buf := make([]byte, n+15)
	off := (16 - int64(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))+uintptr(org))%16) % 16
	return buf[off : off+n : off+n]
}

// stageReduction stages a reduction whose datatype dt is not contiguous
// and returns what the reduction then runs on: the packed stand-in
// datatype, the packed input (sendCount elements of sendbuf; InPlace stays
// InPlace, the input then coming from recvbuf), the packed result buffer
// (recvCount elements; nil if recvCount < 0, for ranks that get no
// result) and where to unpack the result. sendCount < 0: this rank sends
// nothing.
func (c *Comm) stageReduction(name string, sendbuf []byte, sendCount int, recvbuf []byte, recvCount int, dt *Datatype) (pdt *Datatype, sb, rb []byte, rsp *dspan, err error) {
	if s := c.typeProblem(dt); s != "" {
		return nil, nil, nil, nil, c.argErr(name, ErrType, "%s", s)
	}
	pdt = dt.packedType()
	if recvCount >= 0 && isInPlace(sendbuf) {
		// recvbuf holds the input (sendCount elements) and gets the result
		// in its first recvCount elements.
		if rb, _, err = c.collBuf(name, recvbuf, max(sendCount, recvCount), dt, true); err != nil {
			return nil, nil, nil, nil, err
		}
		return pdt, InPlace, rb, &dspan{buf: recvbuf, count: recvCount, dt: dt}, nil
	}
	if sendCount >= 0 {
		if sb, _, err = c.collBuf(name, sendbuf, sendCount, dt, true); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	if recvCount >= 0 {
		if rb, rsp, err = c.collBuf(name, recvbuf, recvCount, dt, false); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	return pdt, sb, rb, rsp, nil
}

// unpackResult unpacks the first rsp.count elements of the staged result
// rb into the caller's buffer.
func (s *dspan) unpackResult(rb []byte) { s.unpack(rb[:s.count*s.dt.size]) }
