package mpi_test

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"testing"

	"github.com/mpigo/mpi"
)

// Conformance tests for the low-level collectives with derived datatypes
// that are not contiguous: strided (vector), reordering (indexed with
// blocks out of order) and resized (an extent other than the data's), on
// the sending side, the receiving side or both. Every block is checked
// element by element, and memory a datatype skips must be left as it was.

// committed commits a freshly built datatype.
func committed(dt *mpi.Datatype, err error) (*mpi.Datatype, error) {
	if err != nil {
		return nil, err
	}
	return dt, dt.Commit()
}

func i32Bytes(v []int32) []byte { return mpi.AsBytes(v) }

// TestAlltoallwNoncontig: Alltoallw and Ialltoallw move each block
// through its datatype's type map, with displacements in bytes: a
// NewVector(2, 1, 2, Int32) over {10, 11, 12, 13} sends 10 and 12.
func TestAlltoallwNoncontig(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) {
			matrix(t, n, func(c *mpi.Comm) error {
				vec, err := committed(mpi.NewVector(2, 1, 2, mpi.Int32))
				if err != nil {
					return err
				}
				p, me := c.Size(), c.Rank()
				for _, nonblocking := range []bool{false, true} {
					// Block j of the send buffer: {10, 11, 12, 13} + 100·me + 1000·j,
					// at byte displacement 16·j; one vec element goes to rank j.
					send := make([]int32, 4*p)
					sc, sd, st := make([]int, p), make([]int, p), make([]*mpi.Datatype, p)
					rc, rd, rt := make([]int, p), make([]int, p), make([]*mpi.Datatype, p)
					for j := range p {
						for k := range 4 {
							send[4*j+k] = int32(10 + k + 100*me + 1000*j)
						}
						sc[j], sd[j], st[j] = 1, 16*j, vec
						rc[j], rd[j], rt[j] = 2, 8*j, mpi.Int32
					}
					recv := make([]int32, 2*p)
					if nonblocking {
						r, err := c.Ialltoallw(i32Bytes(send), sc, sd, st, i32Bytes(recv), rc, rd, rt)
						if err != nil {
							return err
						}
						if _, err := r.Wait(); err != nil {
							return err
						}
					} else if err := c.Alltoallw(i32Bytes(send), sc, sd, st, i32Bytes(recv), rc, rd, rt); err != nil {
						return err
					}
					for j := range p {
						want := []int32{int32(10 + 100*j + 1000*me), int32(12 + 100*j + 1000*me)}
						if got := recv[2*j : 2*j+2]; !slices.Equal(got, want) {
							return check(c, false, "nonblocking=%v: block from rank %d = %v, want %v", nonblocking, j, got, want)
						}
					}

					// The other way round: contiguous pairs sent, received through
					// the vector into a buffer whose odd elements must stay -1.
					pairs := make([]int32, 2*p)
					for j := range p {
						pairs[2*j], pairs[2*j+1] = int32(me+10*j), int32(-(me + 10*j))
						sc[j], sd[j], st[j] = 2, 8*j, mpi.Int32
						rc[j], rd[j], rt[j] = 1, 16*j, vec
					}
					got := make([]int32, 4*p)
					for i := range got {
						got[i] = -1
					}
					if nonblocking {
						r, err := c.Ialltoallw(i32Bytes(pairs), sc, sd, st, i32Bytes(got), rc, rd, rt)
						if err != nil {
							return err
						}
						if _, err := r.Wait(); err != nil {
							return err
						}
					} else if err := c.Alltoallw(i32Bytes(pairs), sc, sd, st, i32Bytes(got), rc, rd, rt); err != nil {
						return err
					}
					for j := range p {
						want := []int32{int32(j + 10*me), -1, int32(-(j + 10*me)), -1}
						if g := got[4*j : 4*j+4]; !slices.Equal(g, want) {
							return check(c, false, "nonblocking=%v: vector receive from rank %d = %v, want %v", nonblocking, j, g, want)
						}
					}
				}
				return nil
			})
		})
	}
}

// ltype is a datatype of Int32 elements with its layout spelled out
// independently of the library: one element's data are the int32s at
// idx (in type-map order, relative to the element's start), and
// consecutive elements start ext int32s apart.
type ltype struct {
	name string
	dt   *mpi.Datatype
	idx  []int
	ext  int
}

func (t ltype) per() int { return len(t.idx) }

// put writes vals (count·per values, in packed order) into the count
// elements of t starting at int32 org of buf.
func (t ltype) put(buf []int32, org, count int, vals []int32) {
	k := 0
	for e := range count {
		for _, i := range t.idx {
			buf[org+e*t.ext+i] = vals[k]
			k++
		}
	}
}

// get reads the count elements of t starting at int32 org of buf, in
// packed order.
func (t ltype) get(buf []int32, org, count int) []int32 {
	var out []int32
	for e := range count {
		for _, i := range t.idx {
			out = append(out, buf[org+e*t.ext+i])
		}
	}
	return out
}

// size returns the int32s count elements of t need from their start.
func (t ltype) size(count int) int {
	if count == 0 {
		return 0
	}
	return (count-1)*t.ext + slices.Max(t.idx) + 1
}

// layoutTypes returns the datatypes the tests run over: Int32 itself
// (contiguous), a strided vector, an indexed type that reorders its
// elements, a vector resized to a longer extent, and Int32 resized to
// leave a hole after each element.
func layoutTypes() ([]ltype, error) {
	vec, err := committed(mpi.NewVector(2, 1, 2, mpi.Int32))
	if err != nil {
		return nil, err
	}
	rev, err := committed(mpi.NewIndexed([]int{1, 1, 1}, []int{2, 0, 1}, mpi.Int32))
	if err != nil {
		return nil, err
	}
	v0, err := mpi.NewVector(2, 1, 2, mpi.Int32)
	if err != nil {
		return nil, err
	}
	wide, err := committed(mpi.NewResized(v0, 0, 16))
	if err != nil {
		return nil, err
	}
	padded, err := committed(mpi.NewResized(mpi.Int32, 0, 8))
	if err != nil {
		return nil, err
	}
	return []ltype{
		{"int32", mpi.Int32, []int{0}, 1},
		{"vector", vec, []int{0, 2}, 3},
		{"reorder", rev, []int{2, 0, 1}, 3},
		{"resized-vector", wide, []int{0, 2}, 4},
		{"padded", padded, []int{0}, 2},
	}, nil
}

// typePairs returns the (send, receive) datatype pairs to test: each type
// with itself, and each derived type against contiguous Int32 both ways.
func typePairs(ts []ltype) [][2]ltype {
	var ps [][2]ltype
	for _, t := range ts {
		ps = append(ps, [2]ltype{t, t})
		if t.name != "int32" {
			ps = append(ps, [2]ltype{t, ts[0]}, [2]ltype{ts[0], t})
		}
	}
	return ps
}

// sentinel returns n int32s of -1: memory a datatype skips must keep it.
func sentinel(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = -1
	}
	return s
}

// vals returns m distinct values for block blk of rank r.
func vals(r, blk, m int) []int32 {
	v := make([]int32, m)
	for i := range v {
		v[i] = int32(r*10000 + blk*100 + i + 1)
	}
	return v
}

// both runs a collective blocking and, if nb, through its non-blocking
// form.
func both(nb bool, blocking func() error, start func() (*mpi.Request, error)) error {
	if !nb {
		return blocking()
	}
	r, err := start()
	if err != nil {
		return err
	}
	_, err = r.Wait()
	return err
}

// blockM is the number of int32s in one block of the movement tests.
const blockM = 6

// noncontigMovement runs every data-movement collective with send type S
// and receive type R (blocking, or non-blocking if nb) and checks each
// receive buffer entirely: the blocks in place, the holes untouched.
func noncontigMovement(c *mpi.Comm, S, R ltype, nb bool) error {
	p, me := c.Size(), c.Rank()
	cs, cr := blockM/S.per(), blockM/R.per()
	b := func(v []int32) []byte { return i32Bytes(v) }
	fail := func(what string, got, want []int32) error {
		if slices.Equal(got, want) {
			return nil
		}
		return check(c, false, "%s, send %s, recv %s, nonblocking %v: got %v, want %v", what, S.name, R.name, nb, got, want)
	}
	// Reversed block order with a one-element gap, in elements of t.
	revDispls := func(count int) []int {
		d := make([]int, p)
		for i := range d {
			d[i] = (p - 1 - i) * (count + 1)
		}
		return d
	}

	// Bcast: the root's buffer is laid out by S, the others' by R.
	for root := range p {
		t, count := R, cr
		if me == root {
			t, count = S, cs
		}
		buf := sentinel(t.size(count))
		if me == root {
			t.put(buf, 0, count, vals(root, 0, blockM))
		}
		want := sentinel(len(buf))
		t.put(want, 0, count, vals(root, 0, blockM))
		if err := both(nb, func() error { return c.Bcast(b(buf), count, t.dt, root) },
			func() (*mpi.Request, error) { return c.Ibcast(b(buf), count, t.dt, root) }); err != nil {
			return err
		}
		if err := fail(fmt.Sprint("Bcast root ", root), buf, want); err != nil {
			return err
		}
	}

	send := sentinel(S.size(cs))
	S.put(send, 0, cs, vals(me, 0, blockM))
	root := p - 1

	// Gather and Gatherv (blocks reversed, with gaps), and Gather in place.
	for _, v := range []bool{false, true} {
		var displs []int
		orgs := make([]int, p)
		for i := range orgs {
			orgs[i] = i * cr * R.ext
		}
		if v {
			displs = revDispls(cr)
			for i := range orgs {
				orgs[i] = displs[i] * R.ext
			}
		}
		n := slices.Max(orgs) + R.size(cr)
		recv, want := sentinel(n), sentinel(n)
		for i := range p {
			R.put(want, orgs[i], cr, vals(i, 0, blockM))
		}
		counts := fill(p, cr)
		if err := both(nb, func() error {
			if v {
				return c.Gatherv(b(send), cs, S.dt, b(recv), counts, displs, R.dt, root)
			}
			return c.Gather(b(send), cs, S.dt, b(recv), cr, R.dt, root)
		}, func() (*mpi.Request, error) {
			if v {
				return c.Igatherv(b(send), cs, S.dt, b(recv), counts, displs, R.dt, root)
			}
			return c.Igather(b(send), cs, S.dt, b(recv), cr, R.dt, root)
		}); err != nil {
			return err
		}
		if me == root {
			if err := fail(fmt.Sprint("Gather v=", v), recv, want); err != nil {
				return err
			}
		}
		// In place: the root's block is already in recvbuf.
		recv = sentinel(n)
		if me == root {
			R.put(recv, orgs[root], cr, vals(root, 0, blockM))
		}
		sb := b(send)
		if me == root {
			sb = mpi.InPlace
		}
		if err := c.Gatherv(sb, cs, S.dt, b(recv), counts, displs, R.dt, root); err != nil {
			return err
		}
		if me == root {
			if err := fail(fmt.Sprint("Gather in place v=", v), recv, want); err != nil {
				return err
			}
		}
	}

	// Scatter and Scatterv: the root's blocks laid out by S.
	for _, v := range []bool{false, true} {
		var displs []int
		orgs := make([]int, p)
		for i := range orgs {
			orgs[i] = i * cs * S.ext
		}
		if v {
			displs = revDispls(cs)
			for i := range orgs {
				orgs[i] = displs[i] * S.ext
			}
		}
		all := sentinel(slices.Max(orgs) + S.size(cs))
		for i := range p {
			S.put(all, orgs[i], cs, vals(i, 1, blockM))
		}
		recv, want := sentinel(R.size(cr)), sentinel(R.size(cr))
		R.put(want, 0, cr, vals(me, 1, blockM))
		counts := fill(p, cs)
		if err := both(nb, func() error {
			if v {
				return c.Scatterv(b(all), counts, displs, S.dt, b(recv), cr, R.dt, root)
			}
			return c.Scatter(b(all), cs, S.dt, b(recv), cr, R.dt, root)
		}, func() (*mpi.Request, error) {
			if v {
				return c.Iscatterv(b(all), counts, displs, S.dt, b(recv), cr, R.dt, root)
			}
			return c.Iscatter(b(all), cs, S.dt, b(recv), cr, R.dt, root)
		}); err != nil {
			return err
		}
		if err := fail(fmt.Sprint("Scatter v=", v), recv, want); err != nil {
			return err
		}
	}

	// Allgather and Allgatherv, and both in place.
	for _, v := range []bool{false, true} {
		for _, inPlace := range []bool{false, true} {
			var displs []int
			orgs := make([]int, p)
			for i := range orgs {
				orgs[i] = i * cr * R.ext
			}
			if v {
				displs = revDispls(cr)
				for i := range orgs {
					orgs[i] = displs[i] * R.ext
				}
			}
			n := slices.Max(orgs) + R.size(cr)
			recv, want := sentinel(n), sentinel(n)
			for i := range p {
				R.put(want, orgs[i], cr, vals(i, 0, blockM))
			}
			sb := b(send)
			if inPlace {
				sb = mpi.InPlace
				R.put(recv, orgs[me], cr, vals(me, 0, blockM))
			}
			counts := fill(p, cr)
			if err := both(nb, func() error {
				if v {
					return c.Allgatherv(sb, cs, S.dt, b(recv), counts, displs, R.dt)
				}
				return c.Allgather(sb, cs, S.dt, b(recv), cr, R.dt)
			}, func() (*mpi.Request, error) {
				if v {
					return c.Iallgatherv(sb, cs, S.dt, b(recv), counts, displs, R.dt)
				}
				return c.Iallgather(sb, cs, S.dt, b(recv), cr, R.dt)
			}); err != nil {
				return err
			}
			if err := fail(fmt.Sprintf("Allgather v=%v in place=%v", v, inPlace), recv, want); err != nil {
				return err
			}
		}
	}

	// Alltoall and Alltoallv (reversed blocks on both sides), and Alltoall
	// in place (recvbuf, laid out by R, holds the blocks to send).
	for _, v := range []bool{false, true} {
		var sd, rd []int
		sorg, rorg := make([]int, p), make([]int, p)
		for i := range p {
			sorg[i], rorg[i] = i*cs*S.ext, i*cr*R.ext
		}
		if v {
			sd, rd = revDispls(cs), revDispls(cr)
			for i := range p {
				sorg[i], rorg[i] = sd[i]*S.ext, rd[i]*R.ext
			}
		}
		sbuf := sentinel(slices.Max(sorg) + S.size(cs))
		n := slices.Max(rorg) + R.size(cr)
		recv, want := sentinel(n), sentinel(n)
		for j := range p {
			S.put(sbuf, sorg[j], cs, vals(me, j, blockM))
			R.put(want, rorg[j], cr, vals(j, me, blockM))
		}
		if err := both(nb, func() error {
			if v {
				return c.Alltoallv(b(sbuf), fill(p, cs), sd, S.dt, b(recv), fill(p, cr), rd, R.dt)
			}
			return c.Alltoall(b(sbuf), cs, S.dt, b(recv), cr, R.dt)
		}, func() (*mpi.Request, error) {
			if v {
				return c.Ialltoallv(b(sbuf), fill(p, cs), sd, S.dt, b(recv), fill(p, cr), rd, R.dt)
			}
			return c.Ialltoall(b(sbuf), cs, S.dt, b(recv), cr, R.dt)
		}); err != nil {
			return err
		}
		if err := fail(fmt.Sprint("Alltoall v=", v), recv, want); err != nil {
			return err
		}
		if !v {
			recv = sentinel(n)
			for j := range p {
				R.put(recv, rorg[j], cr, vals(me, j, blockM))
			}
			if err := c.Alltoall(mpi.InPlace, 0, nil, b(recv), cr, R.dt); err != nil {
				return err
			}
			if err := fail("Alltoall in place", recv, want); err != nil {
				return err
			}
		}
	}

	// Alltoallw: the datatype alternates per peer on both sides, the
	// blocks lie in reversed order at byte displacements with gaps.
	sendT := func(j int) ltype {
		if j%2 == 0 {
			return S
		}
		return R
	}
	recvT := func(j int) ltype {
		if j%2 == 0 {
			return R
		}
		return S
	}
	sc, sdb, sts := make([]int, p), make([]int, p), make([]*mpi.Datatype, p)
	rc, rdb, rts := make([]int, p), make([]int, p), make([]*mpi.Datatype, p)
	soff, roff := 0, 0
	for j := p - 1; j >= 0; j-- {
		st, rt := sendT(j), recvT(j)
		sc[j], sdb[j], sts[j] = blockM/st.per(), 4*soff, st.dt
		rc[j], rdb[j], rts[j] = blockM/rt.per(), 4*roff, rt.dt
		soff += st.size(sc[j]) + 1
		roff += rt.size(rc[j]) + 1
	}
	sbuf := sentinel(soff)
	recv, want := sentinel(roff), sentinel(roff)
	for j := range p {
		sendT(j).put(sbuf, sdb[j]/4, sc[j], vals(me, j, blockM))
		recvT(j).put(want, rdb[j]/4, rc[j], vals(j, me, blockM))
	}
	if err := both(nb, func() error { return c.Alltoallw(b(sbuf), sc, sdb, sts, b(recv), rc, rdb, rts) },
		func() (*mpi.Request, error) { return c.Ialltoallw(b(sbuf), sc, sdb, sts, b(recv), rc, rdb, rts) }); err != nil {
		return err
	}
	if err := fail("Alltoallw", recv, want); err != nil {
		return err
	}
	// Alltoallw in place.
	recv = sentinel(roff)
	for j := range p {
		recvT(j).put(recv, rdb[j]/4, rc[j], vals(me, j, blockM))
	}
	if err := c.Alltoallw(mpi.InPlace, nil, nil, nil, b(recv), rc, rdb, rts); err != nil {
		return err
	}
	return fail("Alltoallw in place", recv, want)
}

func fill(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestNoncontigMovement runs every data-movement collective, blocking and
// non-blocking, over every pair of layout types and every transport.
func TestNoncontigMovement(t *testing.T) {
	ts, err := layoutTypes()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 4} {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) {
			matrix(t, n, func(c *mpi.Comm) error {
				for _, pr := range typePairs(ts) {
					for _, nb := range []bool{false, true} {
						if err := noncontigMovement(c, pr[0], pr[1], nb); err != nil {
							return err
						}
					}
				}
				return nil
			})
		})
	}
}

// redM is the number of int32s per rank in the reduction tests: a
// multiple of every type's element (1, 2, 3) and of 4 (a 2x2 matrix).
const redM = 12

// sumOver returns the elementwise sum of vals(r, blk, m) over ranks lo..hi-1.
func sumOver(lo, hi, blk, m int) []int32 {
	s := make([]int32, m)
	for r := lo; r < hi; r++ {
		for i, v := range vals(r, blk, m) {
			s[i] += v
		}
	}
	return s
}

// mat32 is rank r's g-th 2x2 matrix in the non-commutative tests.
func mat32(r, g int) []int32 {
	if (r+g)%2 == 1 {
		return []int32{0, 1, 1, 0}
	}
	return []int32{1, int32(r + g), 0, 1}
}

func mul32(x, y []int32) []int32 {
	return []int32{x[0]*y[0] + x[1]*y[2], x[0]*y[1] + x[1]*y[3], x[2]*y[0] + x[3]*y[2], x[2]*y[1] + x[3]*y[3]}
}

// mats returns rank r's matrices, redM/4 of them, flattened; matProd32
// the products of ranks lo..hi-1's, in rank order.
func mats(r int) []int32 {
	var s []int32
	for g := range redM / 4 {
		s = append(s, mat32(r, g)...)
	}
	return s
}

func matProd32(lo, hi int) []int32 {
	var s []int32
	for g := range redM / 4 {
		acc := []int32{1, 0, 0, 1}
		for r := lo; r < hi; r++ {
			acc = mul32(acc, mat32(r, g))
		}
		s = append(s, acc...)
	}
	return s
}

// layoutOps returns user operations on elements of t that read and write
// their buffers through t's layout (so they fail if given packed data):
// an elementwise sum, and the product of 2x2 matrices taken four values
// at a time in type-map order (not commutative). bad is set if either is
// called with another datatype.
func layoutOps(t ltype, bad *atomic.Bool) (sum, matmul *mpi.ReduceOp) {
	sum = mpi.NewReduceOp(func(in, inout []byte, count int, dt *mpi.Datatype) {
		if dt != t.dt || len(inout) < 4*t.size(count) {
			bad.Store(true)
			return
		}
		a, b := unsafeI32(in), unsafeI32(inout)
		for e := range count {
			for _, i := range t.idx {
				b[e*t.ext+i] += a[e*t.ext+i]
			}
		}
	}, true)
	matmul = mpi.NewReduceOp(func(in, inout []byte, count int, dt *mpi.Datatype) {
		if dt != t.dt || len(inout) < 4*t.size(count) || count*t.per()%4 != 0 {
			bad.Store(true)
			return
		}
		x, y := t.get(unsafeI32(in), 0, count), t.get(unsafeI32(inout), 0, count)
		var out []int32
		for g := 0; g < len(x); g += 4 {
			out = append(out, mul32(x[g:g+4], y[g:g+4])...)
		}
		t.put(unsafeI32(inout), 0, count, out)
	}, false)
	return sum, matmul
}

// noncontigReductions runs every reduction with datatype T on both sides
// (blocking, or non-blocking if nb) with OpSum, a user sum and a
// non-commutative user product, and checks each receive buffer entirely.
func noncontigReductions(c *mpi.Comm, T ltype, nb bool) error {
	p, me := c.Size(), c.Rank()
	b := func(v []int32) []byte { return i32Bytes(v) }
	var bad atomic.Bool
	usum, umat := layoutOps(T, &bad)
	fail := func(what string, got, want []int32) error {
		if bad.Load() {
			return check(c, false, "%s, %s: a user op got a foreign datatype or a short buffer", what, T.name)
		}
		if slices.Equal(got, want) {
			return nil
		}
		return check(c, false, "%s, %s, nonblocking %v: got %v, want %v", what, T.name, nb, got, want)
	}
	laid := func(count int, v []int32) []int32 {
		buf := sentinel(T.size(count))
		if v != nil {
			T.put(buf, 0, count, v)
		}
		return buf
	}
	root := p - 1
	for _, tc := range []struct {
		name  string
		op    *mpi.ReduceOp
		m     int
		in    func(r int) []int32
		scan  func(lo, hi int) []int32 // the reduction of ranks lo..hi-1
		onlyC bool                     // commutative ops only (ReduceScatter)
	}{
		{"sum", mpi.OpSum, redM, func(r int) []int32 { return vals(r, 0, redM) }, func(lo, hi int) []int32 { return sumOver(lo, hi, 0, redM) }, false},
		{"long sum", mpi.OpSum, 2000 * redM, func(r int) []int32 { return vals(r, 0, 2000*redM) }, func(lo, hi int) []int32 { return sumOver(lo, hi, 0, 2000*redM) }, false},
		{"user sum", usum, redM, func(r int) []int32 { return vals(r, 0, redM) }, func(lo, hi int) []int32 { return sumOver(lo, hi, 0, redM) }, false},
		{"user matmul", umat, redM, mats, matProd32, false},
	} {
		count := tc.m / T.per()
		in := laid(count, tc.in(me))
		all := tc.scan(0, p)

		// Allreduce, and in place.
		out := laid(count, nil)
		if err := both(nb, func() error { return c.Allreduce(b(in), b(out), count, T.dt, tc.op) },
			func() (*mpi.Request, error) { return c.Iallreduce(b(in), b(out), count, T.dt, tc.op) }); err != nil {
			return err
		}
		if err := fail("Allreduce "+tc.name, out, laid(count, all)); err != nil {
			return err
		}
		out = laid(count, tc.in(me))
		if err := c.Allreduce(mpi.InPlace, b(out), count, T.dt, tc.op); err != nil {
			return err
		}
		if err := fail("Allreduce in place "+tc.name, out, laid(count, all)); err != nil {
			return err
		}
		if tc.m > redM {
			continue // the long vector is for the allreduce algorithms
		}

		// Reduce, and in place at the root.
		out = laid(count, nil)
		if err := both(nb, func() error { return c.Reduce(b(in), b(out), count, T.dt, tc.op, root) },
			func() (*mpi.Request, error) { return c.Ireduce(b(in), b(out), count, T.dt, tc.op, root) }); err != nil {
			return err
		}
		want := laid(count, nil)
		if me == root {
			want = laid(count, all)
		}
		if err := fail("Reduce "+tc.name, out, want); err != nil {
			return err
		}
		sb := b(in)
		if me == root {
			sb, out = mpi.InPlace, laid(count, tc.in(me))
		}
		if err := c.Reduce(sb, b(out), count, T.dt, tc.op, root); err != nil {
			return err
		}
		if me == root {
			if err := fail("Reduce in place "+tc.name, out, want); err != nil {
				return err
			}
		}

		// Scan and Exscan (rank 0's Exscan buffer untouched), and in place.
		for _, inclusive := range []bool{true, false} {
			for _, inPlace := range []bool{false, true} {
				out = laid(count, nil)
				sb := b(in)
				if inPlace {
					sb, out = mpi.InPlace, laid(count, tc.in(me))
				}
				want := laid(count, tc.scan(0, me+1))
				if !inclusive {
					want = laid(count, tc.scan(0, me))
					if me == 0 {
						want = slices.Clone(out)
					}
				}
				if err := both(nb, func() error {
					if inclusive {
						return c.Scan(sb, b(out), count, T.dt, tc.op)
					}
					return c.Exscan(sb, b(out), count, T.dt, tc.op)
				}, func() (*mpi.Request, error) {
					if inclusive {
						return c.Iscan(sb, b(out), count, T.dt, tc.op)
					}
					return c.Iexscan(sb, b(out), count, T.dt, tc.op)
				}); err != nil {
					return err
				}
				if err := fail(fmt.Sprintf("Scan inclusive=%v in place=%v %s", inclusive, inPlace, tc.name), out, want); err != nil {
					return err
				}
			}
		}
	}

	// ReduceScatterBlock and ReduceScatter (rank i gets 1 or 2 blocks),
	// and in place, with OpSum and the user sum.
	for _, op := range []*mpi.ReduceOp{mpi.OpSum, usum} {
		k := redM / T.per()
		for _, blockForm := range []bool{true, false} {
			counts := make([]int, p)
			offs := make([]int, p+1) // in int32s of the packed sequence
			for i := range p {
				counts[i] = k
				if !blockForm {
					counts[i] = k * (1 + i%2)
				}
				offs[i+1] = offs[i] + counts[i]*T.per()
			}
			total := offs[p] / T.per()
			sum := sumOver(0, p, 2, offs[p])
			for _, inPlace := range []bool{false, true} {
				in := laid(total, vals(me, 2, offs[p]))
				out := laid(counts[me], nil)
				want := laid(counts[me], sum[offs[me]:offs[me+1]])
				sb := b(in)
				if inPlace {
					sb, out = mpi.InPlace, in
					want = slices.Clone(in)
					T.put(want, 0, counts[me], sum[offs[me]:offs[me+1]])
				}
				if err := both(nb && !inPlace, func() error {
					if blockForm {
						return c.ReduceScatterBlock(sb, b(out), k, T.dt, op)
					}
					return c.ReduceScatter(sb, b(out), counts, T.dt, op)
				}, func() (*mpi.Request, error) {
					if blockForm {
						return c.IreduceScatterBlock(sb, b(out), k, T.dt, op)
					}
					return c.IreduceScatter(sb, b(out), counts, T.dt, op)
				}); err != nil {
					return err
				}
				if err := fail(fmt.Sprintf("ReduceScatter block=%v in place=%v %s", blockForm, inPlace, op.Name()), out, want); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// TestNoncontigReductions runs every reduction, blocking and non-blocking,
// over every layout type and every transport.
func TestNoncontigReductions(t *testing.T) {
	ts, err := layoutTypes()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 4} {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) {
			matrix(t, n, func(c *mpi.Comm) error {
				for _, lt := range ts {
					for _, nb := range []bool{false, true} {
						if err := noncontigReductions(c, lt, nb); err != nil {
							return err
						}
					}
				}
				return nil
			})
		})
	}
}

// noncontigInter runs the intercommunicator collectives with send type S
// and receive type R (blocking, or non-blocking if nb): data flows
// between the groups, values are labelled by world rank.
func noncontigInter(s *interSetup, S, R ltype, nb bool) error {
	ic, me := s.ic, s.world.Rank()
	q := ic.RemoteSize()
	cs, cr := blockM/S.per(), blockM/R.per()
	b := func(v []int32) []byte { return i32Bytes(v) }
	fail := func(what string, got, want []int32) error {
		if slices.Equal(got, want) {
			return nil
		}
		return check(s.world, false, "intercomm %s, send %s, recv %s, nonblocking %v: got %v, want %v", what, S.name, R.name, nb, got, want)
	}
	// The root is the last rank of group A; it passes Root, the rest of A
	// ProcNull, group B the root's rank in A.
	root, amRoot := s.a-1, s.inA && ic.Rank() == s.a-1
	if s.inA {
		root = mpi.ProcNull
		if amRoot {
			root = mpi.Root
		}
	}
	rootWorld := s.a - 1

	// Bcast from the root to group B.
	t, count := R, cr
	if s.inA {
		t, count = S, cs
	}
	buf := sentinel(t.size(count))
	if amRoot {
		t.put(buf, 0, count, vals(me, 0, blockM))
	}
	want := slices.Clone(buf)
	if !s.inA {
		t.put(want, 0, count, vals(rootWorld, 0, blockM))
	}
	if err := both(nb, func() error { return ic.Bcast(b(buf), count, t.dt, root) },
		func() (*mpi.Request, error) { return ic.Ibcast(b(buf), count, t.dt, root) }); err != nil {
		return err
	}
	if err := fail("Bcast", buf, want); err != nil {
		return err
	}

	// Gatherv at the root (B's blocks reversed with gaps), Scatter from it.
	send := sentinel(S.size(cs))
	S.put(send, 0, cs, vals(me, 0, blockM))
	displs := make([]int, q)
	for j := range displs {
		displs[j] = (q - 1 - j) * (cr + 1)
	}
	n := displs[0]*R.ext + R.size(cr)
	recv, want := sentinel(n), sentinel(n)
	if amRoot {
		for j := range q {
			R.put(want, displs[j]*R.ext, cr, vals(s.remoteWorld(j), 0, blockM))
		}
	}
	if err := both(nb, func() error { return ic.Gatherv(b(send), cs, S.dt, b(recv), fill(q, cr), displs, R.dt, root) },
		func() (*mpi.Request, error) {
			return ic.Igatherv(b(send), cs, S.dt, b(recv), fill(q, cr), displs, R.dt, root)
		}); err != nil {
		return err
	}
	if err := fail("Gatherv", recv, want); err != nil {
		return err
	}
	all := sentinel(S.size(q * cs))
	if amRoot {
		for j := range q {
			S.put(all, j*cs*S.ext, cs, vals(s.remoteWorld(j), 1, blockM))
		}
	}
	recv, want = sentinel(R.size(cr)), sentinel(R.size(cr))
	if !s.inA {
		R.put(want, 0, cr, vals(me, 1, blockM))
	}
	if err := both(nb, func() error { return ic.Scatter(b(all), cs, S.dt, b(recv), cr, R.dt, root) },
		func() (*mpi.Request, error) { return ic.Iscatter(b(all), cs, S.dt, b(recv), cr, R.dt, root) }); err != nil {
		return err
	}
	if err := fail("Scatter", recv, want); err != nil {
		return err
	}

	// Allgather: each group gets the other's blocks.
	n = R.size(q * cr)
	recv, want = sentinel(n), sentinel(n)
	for j := range q {
		R.put(want, j*cr*R.ext, cr, vals(s.remoteWorld(j), 0, blockM))
	}
	if err := both(nb, func() error { return ic.Allgather(b(send), cs, S.dt, b(recv), cr, R.dt) },
		func() (*mpi.Request, error) { return ic.Iallgather(b(send), cs, S.dt, b(recv), cr, R.dt) }); err != nil {
		return err
	}
	if err := fail("Allgather", recv, want); err != nil {
		return err
	}

	// Alltoall and Alltoallw with every remote rank.
	sbuf := sentinel(S.size(q * cs))
	recv, want = sentinel(n), sentinel(n)
	for j := range q {
		S.put(sbuf, j*cs*S.ext, cs, vals(me, s.remoteWorld(j), blockM))
		R.put(want, j*cr*R.ext, cr, vals(s.remoteWorld(j), me, blockM))
	}
	if err := both(nb, func() error { return ic.Alltoall(b(sbuf), cs, S.dt, b(recv), cr, R.dt) },
		func() (*mpi.Request, error) { return ic.Ialltoall(b(sbuf), cs, S.dt, b(recv), cr, R.dt) }); err != nil {
		return err
	}
	if err := fail("Alltoall", recv, want); err != nil {
		return err
	}
	recv = sentinel(n)
	sd, rd := make([]int, q), make([]int, q)
	for j := range q {
		sd[j], rd[j] = 4*j*cs*S.ext, 4*j*cr*R.ext
	}
	if err := both(nb, func() error {
		return ic.Alltoallw(b(sbuf), fill(q, cs), sd, sameDT(S.dt, q), b(recv), fill(q, cr), rd, sameDT(R.dt, q))
	}, func() (*mpi.Request, error) {
		return ic.Ialltoallw(b(sbuf), fill(q, cs), sd, sameDT(S.dt, q), b(recv), fill(q, cr), rd, sameDT(R.dt, q))
	}); err != nil {
		return err
	}
	if err := fail("Alltoallw", recv, want); err != nil {
		return err
	}

	// Reductions (one datatype, S, on both sides): Allreduce gives each
	// group the sum of the other's values, Reduce the root B's sum, and
	// ReduceScatterBlock block i of the other group's sum to local rank i.
	lo, hi := 0, s.a // the remote group's world ranks
	if s.inA {
		lo, hi = s.a, s.a+s.b
	}
	k := redM / S.per()
	in := sentinel(S.size(k))
	S.put(in, 0, k, vals(me, 0, redM))
	out, wantR := sentinel(len(in)), sentinel(len(in))
	S.put(wantR, 0, k, sumOver(lo, hi, 0, redM))
	if err := both(nb, func() error { return ic.Allreduce(b(in), b(out), k, S.dt, mpi.OpSum) },
		func() (*mpi.Request, error) { return ic.Iallreduce(b(in), b(out), k, S.dt, mpi.OpSum) }); err != nil {
		return err
	}
	if err := fail("Allreduce", out, wantR); err != nil {
		return err
	}
	out = sentinel(len(in))
	if err := both(nb, func() error { return ic.Reduce(b(in), b(out), k, S.dt, mpi.OpSum, root) },
		func() (*mpi.Request, error) { return ic.Ireduce(b(in), b(out), k, S.dt, mpi.OpSum, root) }); err != nil {
		return err
	}
	if !amRoot {
		wantR = sentinel(len(in))
	}
	if err := fail("Reduce", out, wantR); err != nil {
		return err
	}
	// 6 elements in all in both groups (of 2 and 3 ranks), as MPI requires.
	k = 6 / ic.Size()
	m := 6 * S.per()
	full := sentinel(S.size(6))
	S.put(full, 0, 6, vals(me, 3, m))
	out = sentinel(S.size(k))
	wantR = sentinel(S.size(k))
	S.put(wantR, 0, k, sumOver(lo, hi, 3, m)[ic.Rank()*k*S.per():(ic.Rank()+1)*k*S.per()])
	if err := both(nb, func() error { return ic.ReduceScatterBlock(b(full), b(out), k, S.dt, mpi.OpSum) },
		func() (*mpi.Request, error) { return ic.IreduceScatterBlock(b(full), b(out), k, S.dt, mpi.OpSum) }); err != nil {
		return err
	}
	return fail("ReduceScatterBlock", out, wantR)
}

func sameDT(dt *mpi.Datatype, n int) []*mpi.Datatype {
	s := make([]*mpi.Datatype, n)
	for i := range s {
		s[i] = dt
	}
	return s
}

// TestNoncontigIntercomm runs the intercommunicator collectives over the
// layout types, groups of 2 and 3, on every transport.
func TestNoncontigIntercomm(t *testing.T) {
	ts, err := layoutTypes()
	if err != nil {
		t.Fatal(err)
	}
	matrix(t, 5, func(world *mpi.Comm) error {
		s, err := makeInter(world, 2, true)
		if err != nil {
			return err
		}
		for _, pr := range typePairs(ts) {
			for _, nb := range []bool{false, true} {
				if err := noncontigInter(s, pr[0], pr[1], nb); err != nil {
					return err
				}
			}
		}
		return s.free()
	})
}

// TestNoncontigNeighborAlltoallw: the neighbourhood Alltoallw moves blocks
// through their datatypes too (each block is a message of its own), with
// the Alltoallw example's vector, on a periodic ring.
func TestNoncontigNeighborAlltoallw(t *testing.T) {
	matrix(t, 3, func(world *mpi.Comm) error {
		ring, err := world.CartCreate([]int{world.Size()}, []bool{true}, false)
		if err != nil {
			return err
		}
		vec, err := committed(mpi.NewVector(2, 1, 2, mpi.Int32))
		if err != nil {
			return err
		}
		me := ring.Rank()
		lower, upper := (me+ring.Size()-1)%ring.Size(), (me+1)%ring.Size()
		// Slot 0 is the lower neighbour, slot 1 the upper: block k at byte 16·k.
		send := []int32{10 + 100*int32(me), 11, 12 + 100*int32(me), 13, 20 + 100*int32(me), 21, 22 + 100*int32(me), 23}
		recv := sentinel(4)
		for _, nb := range []bool{false, true} {
			err := both(nb, func() error {
				return ring.NeighborAlltoallw(i32Bytes(send), []int{1, 1}, []int{0, 16}, []*mpi.Datatype{vec, vec},
					i32Bytes(recv), []int{2, 2}, []int{0, 8}, []*mpi.Datatype{mpi.Int32, mpi.Int32})
			}, func() (*mpi.Request, error) {
				return ring.IneighborAlltoallw(i32Bytes(send), []int{1, 1}, []int{0, 16}, []*mpi.Datatype{vec, vec},
					i32Bytes(recv), []int{2, 2}, []int{0, 8}, []*mpi.Datatype{mpi.Int32, mpi.Int32})
			})
			if err != nil {
				return err
			}
			// From the lower neighbour its upward block (slot 1), from the
			// upper one its downward block (slot 0).
			want := []int32{20 + 100*int32(lower), 22 + 100*int32(lower), 10 + 100*int32(upper), 12 + 100*int32(upper)}
			if !slices.Equal(recv, want) {
				return check(world, false, "NeighborAlltoallw nonblocking=%v: got %v, want %v", nb, recv, want)
			}
		}
		return ring.Free()
	})
}

// TestNoncontigNegativeLB: a datatype whose data lies below its start
// (an indexed type with a negative displacement) is placed by the
// displacements of Gatherv and Alltoallw, as long as the data stays
// inside the buffer; where it would not, the call fails with ErrBuffer.
func TestNoncontigNegativeLB(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		// Element: int32s at -1 and +1 relative to its start, extent 3.
		back, err := committed(mpi.NewIndexed([]int{1, 1}, []int{1, -1}, mpi.Int32))
		if err != nil {
			return err
		}
		lt := ltype{"back", back, []int{1, -1}, 3}
		p, me := c.Size(), c.Rank()
		send := []int32{int32(me*10 + 1), int32(me*10 + 2)}
		// Gatherv: block i at element displacement 1+i (3+3i int32s).
		recv := sentinel(3*p + 3)
		want := sentinel(len(recv))
		displs := make([]int, p)
		for i := range p {
			displs[i] = 1 + i
			lt.put(want, 3*displs[i], 1, []int32{int32(i*10 + 1), int32(i*10 + 2)})
		}
		if err := c.Gatherv(i32Bytes(send), 2, mpi.Int32, i32Bytes(recv), fill(p, 1), displs, back, 0); err != nil {
			return err
		}
		if me == 0 && !slices.Equal(recv, want) {
			return check(c, false, "Gatherv with a negative displacement: got %v, want %v", recv, want)
		}
		// Alltoallw with byte displacements 4+12j.
		sd, rd := make([]int, p), make([]int, p)
		sbuf, rbuf := sentinel(3*p+1), sentinel(2*p)
		for j := range p {
			sd[j], rd[j] = 4+12*j, 8*j
			lt.put(sbuf, 1+3*j, 1, []int32{int32(me*10 + j), int32(me*10 + j + 100)})
		}
		if err := c.Alltoallw(i32Bytes(sbuf), fill(p, 1), sd, sameDT(back, p), i32Bytes(rbuf), fill(p, 2), rd, sameDT(mpi.Int32, p)); err != nil {
			return err
		}
		for j := range p {
			if w := []int32{int32(j*10 + me), int32(j*10 + me + 100)}; !slices.Equal(rbuf[2*j:2*j+2], w) {
				return check(c, false, "Alltoallw with a negative displacement, from %d: got %v, want %v", j, rbuf[2*j:2*j+2], w)
			}
		}
		// At offset 0 the data would start before the buffer: every rank
		// refuses its own receive block 0 before communicating.
		err = c.Alltoallw(i32Bytes(sbuf), fill(p, 1), sd, sameDT(back, p), i32Bytes(rbuf), fill(p, 1), make([]int, p), sameDT(back, p))
		return check(c, errors.Is(err, mpi.ErrBuffer), "Alltoallw receiving at a negative offset: %v, want ErrBuffer", err)
	})
}

// TestNoncontigReduceLocal: ReduceLocal with a datatype with holes
// combines the elements' data and leaves the holes of inout alone; a
// mixed datatype with a predefined operation is ErrOp.
func TestNoncontigReduceLocal(t *testing.T) {
	ts, err := layoutTypes()
	if err != nil {
		t.Fatal(err)
	}
	for _, lt := range ts {
		var bad atomic.Bool
		usum, _ := layoutOps(lt, &bad)
		for _, op := range []*mpi.ReduceOp{mpi.OpSum, usum} {
			count := redM / lt.per()
			in, inout, want := sentinel(lt.size(count)), sentinel(lt.size(count)), sentinel(lt.size(count))
			lt.put(in, 0, count, vals(1, 0, redM))
			lt.put(inout, 0, count, vals(2, 0, redM))
			lt.put(want, 0, count, sumOver(1, 3, 0, redM))
			if err := mpi.ReduceLocal(i32Bytes(in), i32Bytes(inout), count, lt.dt, op); err != nil {
				t.Fatalf("%s %s: %v", lt.name, op.Name(), err)
			}
			if !slices.Equal(inout, want) || bad.Load() {
				t.Errorf("%s %s: got %v, want %v (user op misused: %v)", lt.name, op.Name(), inout, want, bad.Load())
			}
		}
	}
	mixed, err := committed(mpi.NewStruct([]int{1, 1}, []int{0, 8}, []*mpi.Datatype{mpi.Int32, mpi.Float64}))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if err := mpi.ReduceLocal(buf, buf, 1, mixed, mpi.OpSum); !errors.Is(err, mpi.ErrOp) {
		t.Errorf("ReduceLocal sum on a mixed struct: %v, want ErrOp", err)
	}
	vec := ts[1].dt
	if err := mpi.ReduceLocal(buf, buf, 3, vec, mpi.OpSum); !errors.Is(err, mpi.ErrBuffer) {
		t.Errorf("ReduceLocal beyond the buffer: %v, want ErrBuffer", err)
	}
}

// TestNoncontigMinLoc: MinLoc on a strided vector of the pair type
// Float64Loc reduces pair by pair, skipping the pairs between.
func TestNoncontigMinLoc(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		vec, err := committed(mpi.NewVector(2, 1, 2, mpi.Float64Loc))
		if err != nil {
			return err
		}
		me := c.Rank()
		type pair = mpi.ValueLoc[float64]
		in := []pair{{Value: float64(10 - me), Loc: me}, {Value: -1, Loc: -1}, {Value: float64(me), Loc: me}}
		out := []pair{{Value: 99, Loc: 99}, {Value: 99, Loc: 99}, {Value: 99, Loc: 99}}
		if err := c.Allreduce(mpi.AsBytes(in), mpi.AsBytes(out), 1, vec, mpi.OpMinLoc); err != nil {
			return err
		}
		p := c.Size()
		want := []pair{{Value: float64(10 - (p - 1)), Loc: p - 1}, {Value: 99, Loc: 99}, {Value: 0, Loc: 0}}
		return check(c, slices.Equal(out, want), "MinLoc over a vector of Float64Loc: got %v, want %v", out, want)
	})
}

// TestNoncontigArgErrors: a non-contiguous datatype whose elements leave
// the buffer, or one that is not committed, is refused with the right
// class and an *mpi.Error naming the call and communicator, never a panic.
// Every rank makes the same bad call, so none is left waiting.
func TestNoncontigArgErrors(t *testing.T) {
	for _, n := range []int{1, 2} {
		err := mpi.Run(n, func(c *mpi.Comm) error {
			vec, err := committed(mpi.NewVector(2, 1, 2, mpi.Int32)) // 12 bytes of span, 8 of data
			if err != nil {
				return err
			}
			loose, err := mpi.NewVector(2, 1, 2, mpi.Int32) // never committed
			if err != nil {
				return err
			}
			back, err := committed(mpi.NewIndexed([]int{1, 1}, []int{1, -1}, mpi.Int32))
			if err != nil {
				return err
			}
			p := c.Size()
			small, big := make([]byte, 8), make([]byte, 1024)
			cases := []struct {
				name  string
				err   error
				class error
			}{
				{"Bcast past the end", c.Bcast(small, 1, vec, 0), mpi.ErrBuffer},
				{"Bcast uncommitted", c.Bcast(big, 1, loose, 0), mpi.ErrType},
				{"Bcast below the start", c.Bcast(big, 1, back, 0), mpi.ErrBuffer},
				{"Allreduce past the end", c.Allreduce(big, small, 1, vec, mpi.OpSum), mpi.ErrBuffer},
				{"Allreduce uncommitted", c.Allreduce(big, big, 1, loose, mpi.OpSum), mpi.ErrType},
				{"Scan past the end", c.Scan(small, big, 1, vec, mpi.OpSum), mpi.ErrBuffer},
				{"ReduceScatterBlock past the end", c.ReduceScatterBlock(big, small, 1, vec, mpi.OpSum), mpi.ErrBuffer},
				{"Allgather past the end", c.Allgather(big, 2, mpi.Int32, small, 1, vec), mpi.ErrBuffer},
				{"Allgatherv below the start", c.Allgatherv(big, 2, mpi.Int32, big, fill(p, 1), make([]int, p), back), mpi.ErrBuffer},
				{"Alltoall past the end", c.Alltoall(small, 1, vec, big, 2, mpi.Int32), mpi.ErrBuffer},
				{"Alltoallv uncommitted", c.Alltoallv(big, fill(p, 1), make([]int, p), loose, big, fill(p, 2), make([]int, p), mpi.Int32), mpi.ErrType},
				{"Alltoallw past the end", c.Alltoallw(big, fill(p, 2), make([]int, p), sameDT(mpi.Int32, p), small, fill(p, 1), fill(p, 4), sameDT(vec, p)), mpi.ErrBuffer},
				{"Alltoallw uncommitted", c.Alltoallw(big, fill(p, 1), make([]int, p), sameDT(loose, p), big, fill(p, 2), make([]int, p), sameDT(mpi.Int32, p)), mpi.ErrType},
			}
			if n == 1 { // rooted calls whose only checks are at the root
				cases = append(cases, []struct {
					name  string
					err   error
					class error
				}{
					{"Gatherv past the end", c.Gatherv(big, 2, mpi.Int32, small, []int{1}, []int{1}, vec, 0), mpi.ErrBuffer},
					{"Scatterv below the start", c.Scatterv(big, []int{1}, []int{0}, back, big, 2, mpi.Int32, 0), mpi.ErrBuffer},
					{"Reduce past the end at the root", c.Reduce(big, small, 1, vec, mpi.OpSum, 0), mpi.ErrBuffer},
				}...)
			}
			for _, tc := range cases {
				var e *mpi.Error
				if !errors.Is(tc.err, tc.class) || !errors.As(tc.err, &e) || e.Comm == "" {
					return fmt.Errorf("%d ranks, %s: got %v, want an *Error of class %v", n, tc.name, tc.err, tc.class)
				}
			}
			return c.Barrier()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestNoncontigLong: long messages of a strided vector (past the eager
// limit and the 256 KiB rendezvous chunk) through Bcast, Allgather,
// Alltoall and Allreduce.
func TestNoncontigLong(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		ts, err := layoutTypes()
		if err != nil {
			return err
		}
		vec := ts[1] // 2 int32s per element, extent 3
		const count = 40000
		p, me := c.Size(), c.Rank()
		m := count * vec.per()
		buf := sentinel(vec.size(count))
		want := sentinel(len(buf))
		vec.put(want, 0, count, vals(0, 7, m))
		if me == 0 {
			vec.put(buf, 0, count, vals(0, 7, m))
		}
		if err := c.Bcast(i32Bytes(buf), count, vec.dt, 0); err != nil {
			return err
		}
		if !slices.Equal(buf, want) {
			return check(c, false, "long Bcast differs")
		}
		// Allgather: count vector elements from every rank, into Int32s.
		send := sentinel(vec.size(count))
		vec.put(send, 0, count, vals(me, 1, m))
		all := make([]int32, p*m)
		if err := c.Allgather(i32Bytes(send), count, vec.dt, i32Bytes(all), m, mpi.Int32); err != nil {
			return err
		}
		for r := range p {
			if !slices.Equal(all[r*m:(r+1)*m], vals(r, 1, m)) {
				return check(c, false, "long Allgather: block %d differs", r)
			}
		}
		// Alltoall: Int32 blocks in, vector blocks out.
		k := count / p
		blocks := make([]int32, 0, p*k*2)
		for j := range p {
			blocks = append(blocks, vals(me, j, 2*k)...)
		}
		recv := sentinel(vec.size(p * k))
		if err := c.Alltoall(i32Bytes(blocks), 2*k, mpi.Int32, i32Bytes(recv), k, vec.dt); err != nil {
			return err
		}
		wantA := sentinel(len(recv))
		for j := range p {
			vec.put(wantA, j*k*vec.ext, k, vals(j, me, 2*k))
		}
		if !slices.Equal(recv, wantA) {
			return check(c, false, "long Alltoall differs")
		}
		out := sentinel(len(send))
		if err := c.Allreduce(i32Bytes(send), i32Bytes(out), count, vec.dt, mpi.OpSum); err != nil {
			return err
		}
		wantR := sentinel(len(send))
		vec.put(wantR, 0, count, sumOver(0, p, 1, m))
		return check(c, slices.Equal(out, wantR), "long Allreduce differs")
	})
}
