package mpi_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"testing"

	"github.com/mpigo/mpi"
)

// Conformance tests for the low-level (buffer + datatype) collectives, the
// new typed ones and the non-blocking forms, modelled on MPICH's coll
// tests (allred, bcasttest, alltoallv, redscat, scantst, exscan,
// nonblocking, op_commutative). They run for every size in collSizes over
// every transport in the matrix.

func f64s(n int, f func(i int) float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}

// matmulOp is a non-commutative, associative low-level op on 2x2 int64
// matrices (4 Int64 elements each): inout = in × inout.
var matmulOp = mpi.NewReduceOp(func(in, inout []byte, count int, dt *mpi.Datatype) {
	a, b := bytesI64(in), bytesI64(inout)
	for i := 0; i+4 <= count; i += 4 {
		x, y := a[i:i+4], b[i:i+4]
		y[0], y[1], y[2], y[3] = x[0]*y[0]+x[1]*y[2], x[0]*y[1]+x[1]*y[3], x[2]*y[0]+x[3]*y[2], x[2]*y[1]+x[3]*y[3]
	}
}, false)

func bytesI64(b []byte) []int64 { return unsafeI64(b) }

func mat(r int) []int64 {
	if r%2 == 1 {
		return []int64{0, 1, 1, 0}
	}
	return []int64{1, int64(r), 0, 1}
}

func matProd(lo, hi int) []int64 {
	acc := []int64{1, 0, 0, 1}
	for r := lo; r < hi; r++ {
		b := mat(r)
		a := acc
		acc = []int64{a[0]*b[0] + a[1]*b[2], a[0]*b[1] + a[1]*b[3], a[2]*b[0] + a[3]*b[2], a[2]*b[1] + a[3]*b[3]}
	}
	return acc
}

func TestLowReductions(t *testing.T) {
	forSizes(t, func(c *mpi.Comm) error {
		n, me := c.Size(), c.Rank()
		// allred: sums over sizes that hit every allreduce algorithm.
		for _, count := range []int{1, 3, 5000, 131072} {
			in := f64s(count, func(i int) float64 { return float64(me + i) })
			out := make([]float64, count)
			if err := c.Allreduce(mpi.AsBytes(in), mpi.AsBytes(out), count, mpi.Float64, mpi.OpSum); err != nil {
				return err
			}
			for i, v := range out {
				if want := float64(n*(n-1)/2 + n*i); v != want {
					return check(c, false, "Allreduce count %d: [%d] = %v, want %v", count, i, v, want)
				}
			}
			// In place, with Max.
			copy(out, in)
			if err := c.Allreduce(mpi.InPlace, mpi.AsBytes(out), count, mpi.Float64, mpi.OpMax); err != nil {
				return err
			}
			if out[count-1] != float64(n-1+count-1) {
				return check(c, false, "Allreduce in place max: %v", out[count-1])
			}
		}
		// MinLoc on the pair type.
		pair := []mpi.ValueLoc[float64]{{Value: float64((me + 1) % n), Loc: me}}
		res := make([]mpi.ValueLoc[float64], 1)
		if err := c.Allreduce(mpi.AsBytes(pair), mpi.AsBytes(res), 1, mpi.Float64Loc, mpi.OpMinLoc); err != nil {
			return err
		}
		if res[0] != (mpi.ValueLoc[float64]{Value: 0, Loc: n - 1}) {
			return check(c, false, "MinLoc: %+v", res[0])
		}
		// Logical and bitwise ops.
		bs, bo := []bool{me == 0}, []bool{false}
		if err := c.Allreduce(mpi.AsBytes(bs), mpi.AsBytes(bo), 1, mpi.Bool, mpi.OpLor); err != nil || !bo[0] {
			return check(c, false, "Lor: %v %v", bo, err)
		}
		u, uo := []uint32{1 << me}, []uint32{0}
		if err := c.Allreduce(mpi.AsBytes(u), mpi.AsBytes(uo), 1, mpi.Uint32, mpi.OpBor); err != nil || uo[0] != 1<<n-1 {
			return check(c, false, "Bor: %b %v", uo[0], err)
		}
		// op_commutative: a non-commutative user op goes in rank order.
		m, mo := mat(me), make([]int64, 4)
		if err := c.Allreduce(mpi.AsBytes(m), mpi.AsBytes(mo), 4, mpi.Int64, matmulOp); err != nil {
			return err
		}
		if !slices.Equal(mo, matProd(0, n)) {
			return check(c, false, "Allreduce matmul %v, want %v", mo, matProd(0, n))
		}
		for _, root := range []int{0, n / 2, n - 1} {
			mo := make([]int64, 4)
			if err := c.Reduce(mpi.AsBytes(m), mpi.AsBytes(mo), 4, mpi.Int64, matmulOp, root); err != nil {
				return err
			}
			if me == root && !slices.Equal(mo, matProd(0, n)) {
				return check(c, false, "Reduce matmul root %d: %v", root, mo)
			}
			x := []int32{int32(me)}
			xo := []int32{int32(me)}
			sb := mpi.AsBytes(x)
			if me == root {
				sb = mpi.InPlace
			}
			if err := c.Reduce(sb, mpi.AsBytes(xo), 1, mpi.Int32, mpi.OpSum, root); err != nil {
				return err
			}
			if me == root && xo[0] != int32(n*(n-1)/2) {
				return check(c, false, "Reduce in place: %d", xo[0])
			}
		}
		// scantst / exscan.
		sv, so := []int64{int64(me + 1)}, []int64{-1}
		if err := c.Scan(mpi.AsBytes(sv), mpi.AsBytes(so), 1, mpi.Int64, mpi.OpSum); err != nil || so[0] != int64((me+1)*(me+2)/2) {
			return check(c, false, "Scan: %d %v", so[0], err)
		}
		so[0] = -1
		if err := c.Exscan(mpi.AsBytes(sv), mpi.AsBytes(so), 1, mpi.Int64, mpi.OpSum); err != nil || (me > 0 && so[0] != int64(me*(me+1)/2)) || (me == 0 && so[0] != -1) {
			return check(c, false, "Exscan: %d %v", so[0], err)
		}
		if err := c.Scan(mpi.AsBytes(m), mpi.AsBytes(mo), 4, mpi.Int64, matmulOp); err != nil || !slices.Equal(mo, matProd(0, me+1)) {
			return check(c, false, "Scan matmul: %v %v", mo, err)
		}
		// redscat: block and varied counts, commutative and not.
		for _, op := range []*mpi.ReduceOp{mpi.OpSum, matmulOp} {
			counts := make([]int, n)
			total := 0
			for i := range counts {
				counts[i] = 4 * ((i % 3) + 1)
				if op == mpi.OpSum {
					counts[i] = i % 3 // some zero
				}
				total += counts[i]
			}
			in := make([]int64, total)
			for i := 0; i < total; i++ {
				in[i] = int64(me*1000 + i)
			}
			if op == matmulOp {
				for i := 0; i < total; i += 4 {
					copy(in[i:], mat(me))
				}
			}
			out := make([]int64, counts[me])
			if err := c.ReduceScatter(mpi.AsBytes(in), mpi.AsBytes(out), counts, mpi.Int64, op); err != nil {
				return err
			}
			start := 0
			for i := 0; i < me; i++ {
				start += counts[i]
			}
			for j := range out {
				want := int64(1000*n*(n-1)/2 + n*(start+j))
				if op == matmulOp {
					want = matProd(0, n)[j%4]
				}
				if out[j] != want {
					return check(c, false, "ReduceScatter %s [%d] = %d, want %d", op.Name(), j, out[j], want)
				}
			}
		}
		blk := 3
		in := make([]int32, blk*n)
		for i := range in {
			in[i] = int32(i + me)
		}
		if err := c.ReduceScatterBlock(mpi.InPlace, mpi.AsBytes(in), blk, mpi.Int32, mpi.OpSum); err != nil {
			return err
		}
		for j := 0; j < blk; j++ {
			if want := int32(n*(me*blk+j) + n*(n-1)/2); in[j] != want {
				return check(c, false, "ReduceScatterBlock in place [%d] = %d, want %d", j, in[j], want)
			}
		}
		return nil
	})
}

func TestLowMovement(t *testing.T) {
	forSizes(t, func(c *mpi.Comm) error {
		n, me := c.Size(), c.Rank()
		// bcasttest: every root, sizes for both algorithms.
		for root := 0; root < n; root++ {
			for _, count := range []int{0, 1, 100_000} {
				buf := make([]float64, count)
				if me == root {
					for i := range buf {
						buf[i] = float64(root*7 + i)
					}
				}
				if err := c.Bcast(mpi.AsBytes(buf), count, mpi.Float64, root); err != nil {
					return err
				}
				for i, v := range buf {
					if v != float64(root*7+i) {
						return check(c, false, "Bcast root %d count %d: [%d] = %v", root, count, i, v)
					}
				}
			}
		}
		root := n / 2
		// Gather / Scatter with fixed blocks, and in place at root.
		mine := []int32{int32(me), int32(me * 10)}
		all := make([]int32, 2*n)
		if err := c.Gather(mpi.AsBytes(mine), 2, mpi.Int32, mpi.AsBytes(all), 2, mpi.Int32, root); err != nil {
			return err
		}
		if me == root {
			for i := range n {
				if all[2*i] != int32(i) || all[2*i+1] != int32(10*i) {
					return check(c, false, "Gather: %v", all)
				}
			}
		}
		got := make([]int32, 2)
		if err := c.Scatter(mpi.AsBytes(all), 2, mpi.Int32, mpi.AsBytes(got), 2, mpi.Int32, root); err != nil {
			return err
		}
		if !slices.Equal(got, mine) {
			return check(c, false, "Scatter: %v", got)
		}
		// Gatherv / Scatterv: rank i has i+1 elements, placed in reverse order.
		counts, displs := make([]int, n), make([]int, n)
		off := 0
		for i := n - 1; i >= 0; i-- {
			counts[i], displs[i] = i+1, off
			off += i + 1
		}
		vin := make([]int64, me+1)
		for i := range vin {
			vin[i] = int64(me*100 + i)
		}
		vall := make([]int64, off)
		if err := c.Gatherv(mpi.AsBytes(vin), me+1, mpi.Int64, mpi.AsBytes(vall), counts, displs, mpi.Int64, root); err != nil {
			return err
		}
		check1 := func(what string, buf []int64) error {
			for i := range n {
				for j := 0; j <= i; j++ {
					if buf[displs[i]+j] != int64(i*100+j) {
						return check(c, false, "%s: %v", what, buf)
					}
				}
			}
			return nil
		}
		if me == root {
			if err := check1("Gatherv", vall); err != nil {
				return err
			}
		}
		vout := make([]int64, me+1)
		if err := c.Scatterv(mpi.AsBytes(vall), counts, displs, mpi.Int64, mpi.AsBytes(vout), me+1, mpi.Int64, root); err != nil {
			return err
		}
		if !slices.Equal(vout, vin) {
			return check(c, false, "Scatterv: %v", vout)
		}
		// Allgatherv (reverse placement) and Allgather in place, including long blocks.
		vall2 := make([]int64, off)
		if err := c.Allgatherv(mpi.AsBytes(vin), me+1, mpi.Int64, mpi.AsBytes(vall2), counts, displs, mpi.Int64); err != nil {
			return err
		}
		if err := check1("Allgatherv", vall2); err != nil {
			return err
		}
		for _, blk := range []int{1, 20_000} {
			ag := make([]float64, blk*n)
			for i := 0; i < blk; i++ {
				ag[me*blk+i] = float64(me + i)
			}
			if err := c.Allgather(mpi.InPlace, 0, nil, mpi.AsBytes(ag), blk, mpi.Float64); err != nil {
				return err
			}
			for r := range n {
				if ag[r*blk] != float64(r) || ag[r*blk+blk-1] != float64(r+blk-1) {
					return check(c, false, "Allgather blk %d from %d: %v", blk, r, ag[r*blk])
				}
			}
		}
		// Alltoall for the three algorithms' sizes.
		for _, blk := range []int{1, 100, 5000} {
			send := make([]int32, blk*n)
			for j := range n {
				for i := 0; i < blk; i++ {
					send[j*blk+i] = int32(me*1_000_000 + j*1000 + i%1000)
				}
			}
			recv := make([]int32, blk*n)
			if err := c.Alltoall(mpi.AsBytes(send), blk, mpi.Int32, mpi.AsBytes(recv), blk, mpi.Int32); err != nil {
				return err
			}
			for j := range n {
				for i := 0; i < blk; i++ {
					if recv[j*blk+i] != int32(j*1_000_000+me*1000+i%1000) {
						return check(c, false, "Alltoall blk %d: from %d [%d] = %d", blk, j, i, recv[j*blk+i])
					}
				}
			}
		}
		// alltoallv: rank i sends j+1 elements to rank j; Alltoallw with byte displacements.
		sc, sd, rc, rd := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
		so, ro := 0, 0
		for j := range n {
			sc[j], sd[j], so = j+1, so, so+j+1
			rc[j], rd[j], ro = me+1, ro, ro+me+1
		}
		sbuf := make([]int16, so)
		for j := range n {
			for k := 0; k <= j; k++ {
				sbuf[sd[j]+k] = int16(me*100 + j)
			}
		}
		rbuf := make([]int16, ro)
		if err := c.Alltoallv(mpi.AsBytes(sbuf), sc, sd, mpi.Int16, mpi.AsBytes(rbuf), rc, rd, mpi.Int16); err != nil {
			return err
		}
		for j := range n {
			for k := 0; k <= me; k++ {
				if rbuf[rd[j]+k] != int16(j*100+me) {
					return check(c, false, "Alltoallv from %d: %v", j, rbuf)
				}
			}
		}
		st, rt := make([]*mpi.Datatype, n), make([]*mpi.Datatype, n)
		sdb, rdb := make([]int, n), make([]int, n)
		for j := range n {
			st[j], rt[j], sdb[j], rdb[j] = mpi.Int16, mpi.Int16, 2*sd[j], 2*rd[j]
		}
		clear(rbuf)
		if err := c.Alltoallw(mpi.AsBytes(sbuf), sc, sdb, st, mpi.AsBytes(rbuf), rc, rdb, rt); err != nil {
			return err
		}
		if rbuf[rd[n-1]] != int16((n-1)*100+me) {
			return check(c, false, "Alltoallw: %v", rbuf)
		}
		return c.Barrier()
	})
}

// TestNonblocking starts several collectives on one communicator, and on
// two, before waiting for any (MPICH nonblocking, nonblocking2).
func TestNonblocking(t *testing.T) {
	forSizes(t, func(c *mpi.Comm) error {
		n, me := c.Size(), c.Rank()
		d, err := c.Dup()
		if err != nil {
			return err
		}
		big := f64s(50_000, func(i int) float64 { return float64(i + me) })
		bigOut := make([]float64, len(big))
		bc := make([]int64, 10)
		if me == 0 {
			for i := range bc {
				bc[i] = int64(i * 3)
			}
		}
		a2a := make([]int32, n)
		for j := range a2a {
			a2a[j] = int32(me*100 + j)
		}
		a2aOut := make([]int32, n)
		var reqs []mpi.Waiter
		add := func(r *mpi.Request, err error) error {
			if err == nil {
				reqs = append(reqs, r)
			}
			return err
		}
		if err := add(c.Ibarrier()); err != nil {
			return err
		}
		if err := add(c.Iallreduce(mpi.AsBytes(big), mpi.AsBytes(bigOut), len(big), mpi.Float64, mpi.OpSum)); err != nil {
			return err
		}
		if err := add(d.Ibcast(mpi.AsBytes(bc), len(bc), mpi.Int64, 0)); err != nil {
			return err
		}
		if err := add(c.Ialltoall(mpi.AsBytes(a2a), 1, mpi.Int32, mpi.AsBytes(a2aOut), 1, mpi.Int32)); err != nil {
			return err
		}
		f1, err := mpi.Iallreduce(c, fmt.Sprint(me, ";"), mpi.NewOp(func(a, b string) string { return a + b }, false))
		if err != nil {
			return err
		}
		f2, err := mpi.Iallgather(d, strings.Repeat("x", me))
		if err != nil {
			return err
		}
		f3, err := mpi.Iscan(c, me, mpi.Sum[int]())
		if err != nil {
			return err
		}
		f4, err := mpi.IreduceScatterBlock(c, f64s(2*n, func(i int) float64 { return float64(i) }), mpi.Sum[float64]())
		if err != nil {
			return err
		}
		reqs = append(reqs, f1, f2, f3, f4)
		if err := mpi.WaitAll(reqs...); err != nil {
			return err
		}
		for i := range bigOut {
			if bigOut[i] != float64(n*i+n*(n-1)/2) {
				return check(c, false, "Iallreduce [%d] = %v", i, bigOut[i])
			}
		}
		if bc[9] != 27 {
			return check(c, false, "Ibcast: %v", bc)
		}
		for j := range n {
			if a2aOut[j] != int32(j*100+me) {
				return check(c, false, "Ialltoall: %v", a2aOut)
			}
		}
		want := ""
		for r := range n {
			want += fmt.Sprint(r, ";")
		}
		s, err := f1.Wait()
		if err != nil || s != want {
			return check(c, false, "Iallreduce concat: %q %v", s, err)
		}
		ss, err := f2.Wait()
		if err != nil || len(ss) != n || ss[n-1] != strings.Repeat("x", n-1) {
			return check(c, false, "Iallgather: %q %v", ss, err)
		}
		if v, err := f3.Wait(); err != nil || v != me*(me+1)/2 {
			return check(c, false, "Iscan: %d %v", v, err)
		}
		if v, err := f4.Wait(); err != nil || !slices.Equal(v, []float64{float64(2 * me * n), float64((2*me + 1) * n)}) {
			return check(c, false, "IreduceScatterBlock: %v %v", v, err)
		}
		// Overlap: a test loop while an Ibcast of a long buffer progresses.
		long := make([]byte, 1<<20)
		if me == n-1 {
			for i := range long {
				long[i] = byte(i)
			}
		}
		r, err := c.Ibcast(long, len(long), mpi.Byte, n-1)
		if err != nil {
			return err
		}
		if err := pollUntil("Ibcast of a long buffer", func() (bool, error) {
			done, _, err := r.Test()
			return done, err
		}); err != nil {
			return err
		}
		if long[12345] != byte(12345%256) {
			return check(c, false, "Ibcast long: %d", long[12345])
		}
		return d.Free()
	})
}

func TestTypedReduceScatterLoc(t *testing.T) {
	forSizes(t, func(c *mpi.Comm) error {
		n, me := c.Size(), c.Rank()
		v := make([]int, 3*n)
		for i := range v {
			v[i] = i * (me + 1)
		}
		got, err := mpi.ReduceScatterBlock(c, v, mpi.Sum[int]())
		if err != nil {
			return err
		}
		for j, x := range got {
			if want := (3*me + j) * n * (n + 1) / 2; x != want {
				return check(c, false, "ReduceScatterBlock [%d] = %d, want %d", j, x, want)
			}
		}
		// Non-plain elements, a user op in rank order, uneven counts.
		counts := make([]int, n)
		total := 0
		for i := range counts {
			counts[i] = i % 2
			total += counts[i]
		}
		ss := make([]string, total)
		for i := range ss {
			ss[i] = fmt.Sprint(me)
		}
		cat := mpi.NewOp(func(a, b string) string { return a + b }, false)
		gs, err := mpi.ReduceScatter(c, ss, counts, cat)
		if err != nil {
			return err
		}
		want := ""
		for r := range n {
			want += fmt.Sprint(r)
		}
		if len(gs) != counts[me] || (len(gs) == 1 && gs[0] != want) {
			return check(c, false, "ReduceScatter strings: %q", gs)
		}
		// MinLoc / MaxLoc, typed.
		mn, err := mpi.Allreduce(c, mpi.ValueLoc[float64]{Value: float64((me + 1) % n), Loc: me}, mpi.MinLoc[float64]())
		if err != nil || mn.Loc != n-1 {
			return check(c, false, "MinLoc: %+v %v", mn, err)
		}
		mx, err := mpi.AllreduceSlice(c, []mpi.ValueLoc[int]{{Value: 7, Loc: me}, {Value: me, Loc: me}}, mpi.MaxLoc[int]())
		if err != nil || mx[0] != (mpi.ValueLoc[int]{Value: 7, Loc: 0}) || mx[1] != (mpi.ValueLoc[int]{Value: n - 1, Loc: n - 1}) {
			return check(c, false, "MaxLoc: %+v %v", mx, err)
		}
		// A long predefined-op reduction over the typed fast path.
		big := make([]float32, 70_000)
		for i := range big {
			big[i] = float32(i % 100)
		}
		sum, err := mpi.AllreduceSlice(c, big, mpi.Sum[float32]())
		if err != nil || sum[99] != float32(99*n) {
			return check(c, false, "AllreduceSlice long: %v %v", sum[99], err)
		}
		// Growing results, objects of different sizes, large object graphs.
		parts, err := mpi.Allgather(c, strings.Repeat("y", 40_000*me))
		if err != nil {
			return err
		}
		for r, p := range parts {
			if len(p) != 40_000*r {
				return check(c, false, "Allgather of %d bytes from %d: got %d", 40_000*r, r, len(p))
			}
		}
		var graph map[string][]string
		if me == 0 {
			graph = map[string][]string{}
			for i := range 3000 {
				graph[fmt.Sprint("k", i)] = []string{strings.Repeat("v", i%50)}
			}
		}
		g, err := mpi.Bcast(c, graph, 0)
		if err != nil || len(g) != 3000 || len(g["k49"][0]) != 49 {
			return check(c, false, "Bcast graph: %d %v", len(g), err)
		}
		sc, err := mpi.ScanSlice(c, []int{me, 1}, mpi.Sum[int]())
		if err != nil || !slices.Equal(sc, []int{me * (me + 1) / 2, me + 1}) {
			return check(c, false, "ScanSlice: %v %v", sc, err)
		}
		// The Into forms.
		bi := []float64{0, 0}
		if me == n-1 {
			bi = []float64{1.5, 2.5}
		}
		if err := mpi.BcastInto(c, bi, n-1); err != nil || bi[1] != 2.5 {
			return check(c, false, "BcastInto: %v %v", bi, err)
		}
		agi := make([]int32, 2*n)
		if err := mpi.AllgatherInto(c, []int32{int32(me), -int32(me)}, agi); err != nil || agi[2*(n-1)+1] != -int32(n-1) {
			return check(c, false, "AllgatherInto: %v %v", agi, err)
		}
		a2s, a2r := make([]uint16, 3*n), make([]uint16, 3*n)
		for i := range a2s {
			a2s[i] = uint16(me*100 + i/3)
		}
		if err := mpi.AlltoallInto(c, a2s, a2r); err != nil {
			return err
		}
		for j := range n {
			if a2r[3*j+2] != uint16(j*100+me) {
				return check(c, false, "AlltoallInto: %v", a2r)
			}
		}
		if err := mpi.BcastInto(c, []string{"x"}, 0); !errors.Is(err, mpi.ErrType) {
			return check(c, false, "BcastInto of strings: %v", err)
		}
		l := []int{1, 2, 3}
		if err := mpi.ReduceLocalSlice([]int{10, 20, 30}, l, mpi.Sum[int]()); err != nil || !reflect.DeepEqual(l, []int{11, 22, 33}) {
			return check(c, false, "ReduceLocalSlice: %v %v", l, err)
		}
		return nil
	})
}

// TestCollectivesIgnoreUserTraffic: a wildcard receive posted before
// collectives never matches their messages (private context).
func TestCollectivesIgnoreUserTraffic(t *testing.T) {
	forSizes(t, func(c *mpi.Comm) error {
		n, me := c.Size(), c.Rank()
		p, err := mpi.Irecv[int](c, mpi.AnySource, mpi.AnyTag)
		if err != nil {
			return err
		}
		buf := make([]float64, 1000)
		if err := c.Allreduce(mpi.InPlace, mpi.AsBytes(buf), len(buf), mpi.Float64, mpi.OpSum); err != nil {
			return err
		}
		if _, err := mpi.Allgather(c, me); err != nil {
			return err
		}
		// Nobody sends a user message before this barrier is complete.
		if ok, _, _, _ := p.Test(); ok {
			return check(c, false, "a user wildcard receive matched collective traffic")
		}
		r, err := c.Ibarrier()
		if err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		if err := mpi.Send(c, 42+me, (me+1)%n, 7); err != nil {
			return err
		}
		v, st, err := p.Wait()
		if err != nil || v != 42+(me-1+n)%n || st.Tag != 7 {
			return check(c, false, "user message: %d tag %d %v", v, st.Tag, err)
		}
		return nil
	})
}

func TestCollectiveArgErrors(t *testing.T) {
	if err := mpi.Run(3, func(c *mpi.Comm) error {
		buf := make([]byte, 64)
		cases := []struct {
			name  string
			err   error
			class error
		}{
			{"land on Float64", c.Allreduce(buf, buf, 2, mpi.Float64, mpi.OpLand), mpi.ErrOp},
			{"nil op", c.Allreduce(buf, buf, 2, mpi.Float64, nil), mpi.ErrOp},
			{"bad root", c.Bcast(buf, 1, mpi.Byte, 3), mpi.ErrRoot},
			{"short buffer", c.Allreduce(buf, buf, 100, mpi.Float64, mpi.OpSum), mpi.ErrBuffer},
			{"counts", c.ReduceScatter(buf, buf, []int{1}, mpi.Int32, mpi.OpSum), mpi.ErrCount},
			{"typed counts", func() error { _, err := mpi.ReduceScatterBlock(c, []int{1, 2}, mpi.Sum[int]()); return err }(), mpi.ErrCount},
		}
		for _, tc := range cases {
			var e *mpi.Error
			if !errors.Is(tc.err, tc.class) || !errors.As(tc.err, &e) || e.Comm == "" {
				return fmt.Errorf("%s: got %v, want an *Error of class %v", tc.name, tc.err, tc.class)
			}
		}
		// A non-blocking collective reports its argument errors at Wait, naming itself.
		r, err := c.Iallreduce(buf, buf, 2, mpi.Float64, mpi.OpLand)
		if err != nil {
			return err
		}
		if _, err := r.Wait(); !errors.Is(err, mpi.ErrOp) || !strings.Contains(err.Error(), "Iallreduce") {
			return fmt.Errorf("Iallreduce with a bad op: %v", err)
		}
		if err := mpi.ReduceLocal(buf, buf, 2, mpi.Float64, mpi.OpBxor); !errors.Is(err, mpi.ErrOp) {
			return fmt.Errorf("ReduceLocal bxor on Float64: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCollectivesAllocateNothing: the fixed-size paths allocate nothing per
// call, for every allreduce algorithm's size range, for the Allreduce
// of a single value and for the Into forms of the other reductions
// and for AllgatherInto, and AlltoallInto of tiny blocks, the Bcast of
// a single value and the Scatter of plain values (counted
// process-wide over 50 calls on both goroutine ranks).
func TestCollectivesAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	// A collection empties the sync.Pools, and their refill would be
	// counted to whichever call came next: no collection while counting.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, n := range []int{1, 1024, 65536} {
		var allocs [15]float64
		err := mpi.Run(2, func(c *mpi.Comm) error {
			v, out := make([]float64, n), make([]float64, n)
			all, all2 := make([]float64, 2*n), make([]float64, 2*n) // a block per rank
			sum := mpi.Sum[float64]()
			calls := []func(){
				func() { mpi.AllreduceSliceInto(c, v, out, sum) },
				func() { c.Allreduce(mpi.AsBytes(v), mpi.AsBytes(out), n, mpi.Float64, mpi.OpSum) },
				func() { c.Allreduce(mpi.InPlace, mpi.AsBytes(out), n, mpi.Float64, mpi.OpMax) },
				func() {
					// A barrier keeps rank 0 from running ahead and piling up
					// unexpected messages, whose buffers the engine allocates.
					c.Reduce(mpi.AsBytes(v), mpi.AsBytes(out), n, mpi.Float64, mpi.OpSum, 1)
					c.Barrier()
				},
				func() {
					// The residual of an iteration: one value. Its own
					// variable once escaped to the heap (allreduceValue).
					x, _ := mpi.Allreduce(c, v[n-1]+1, sum)
					out[0] = x
				},
				func() {
					mpi.ReduceSliceInto(c, v, out, sum, 1)
					c.Barrier()
				},
				func() { mpi.ScanSliceInto(c, v, out, sum) },
				func() { mpi.ReduceScatterBlockInto(c, v[:n&^1], out[:n/2], sum) }, // 2 blocks
				func() { mpi.AllgatherInto(c, v, all) },
				// The low-level forms of ported programs: fixed-block
				// trees, block ranges on the stack.
				func() { c.Allgather(mpi.AsBytes(v), n, mpi.Float64, mpi.AsBytes(all), n, mpi.Float64) },
				func() {
					c.Gather(mpi.AsBytes(v), n, mpi.Float64, mpi.AsBytes(all), n, mpi.Float64, 1)
					c.Barrier()
				},
				func() {
					c.Scatter(mpi.AsBytes(all), n, mpi.Float64, mpi.AsBytes(out), n, mpi.Float64, 0)
					c.Barrier()
				},
			}
			if n == 1 {
				// Tiny blocks go pairwise between 2 ranks; the scattered
				// exchange of middle sizes allocates its requests.
				calls = append(calls, func() { mpi.AlltoallInto(c, all, all2) },
					func() {
						// A plain value knows its size: no encoding, no
						// length (bcastValue).
						x, _ := mpi.Bcast(c, v[0]+1, 0)
						out[0] = x
					},
					func() {
						// And Scatter of plain values (scatterValue).
						x, _ := mpi.Scatter(c, all, 0)
						out[0] = x
					})
			}
			var ms runtime.MemStats
			for i, f := range calls {
				f() // warm the pools
				// The fewest of five batches of 100: the runtime allocates
				// now and then on its own (about 30 objects when it starts
				// a thread, which a loaded machine or an emulator makes it
				// do in batch after batch of 50 calls), while a per-call
				// allocation shows in every batch.
				allocs[i] = math.Inf(1)
				for range 5 {
					if err := c.Barrier(); err != nil {
						return err
					}
					var before uint64
					if c.Rank() == 0 {
						runtime.ReadMemStats(&ms)
						before = ms.Mallocs
					}
					if err := c.Barrier(); err != nil {
						return err
					}
					for range 100 {
						f()
					}
					if err := c.Barrier(); err != nil {
						return err
					}
					if c.Rank() == 0 {
						runtime.ReadMemStats(&ms)
						allocs[i] = min(allocs[i], float64(ms.Mallocs-before)/100)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range allocs {
			// Pools refill now and then (more often under -race, where
			// sync.Pool drops items on purpose): allow well under one
			// allocation per call, which a per-call allocation would exceed.
			if a >= 0.5 {
				t.Errorf("%d float64s, call %d: %v allocations per call", n, i, a)
			}
		}
	}
}

// TestLowReductionOpTypes: a predefined operation on a derived datatype
// applies to its basic elements when they are all of one predefined type
// (a strided vector of Float64 sums like Float64s); on a datatype that
// mixes basic types, or on one whose elements it is not defined for, it is
// ErrOp, as in MPI, whether the datatype is contiguous or not.
func TestLowReductionOpTypes(t *testing.T) {
	err := mpi.Run(2, func(c *mpi.Comm) error {
		mixed, err := committed(mpi.NewStruct([]int{1, 1}, []int{0, 8}, []*mpi.Datatype{mpi.Int32, mpi.Float64}))
		if err != nil {
			return err
		}
		vec, err := committed(mpi.NewVector(2, 1, 2, mpi.Float64))
		if err != nil {
			return err
		}
		pair, err := committed(mpi.NewContiguous(2, mpi.Float64))
		if err != nil {
			return err
		}
		buf := make([]byte, 64)
		for _, tc := range []struct {
			what string
			dt   *mpi.Datatype
			op   *mpi.ReduceOp
		}{{"sum of a struct of Int32 and Float64", mixed, mpi.OpSum}, {"land of a vector of Float64", vec, mpi.OpLand}, {"bxor of a contiguous Float64 pair", pair, mpi.OpBxor}} {
			if err := c.Allreduce(buf, make([]byte, 64), 1, tc.dt, tc.op); !errors.Is(err, mpi.ErrOp) {
				return fmt.Errorf("Allreduce, %s: %v, want ErrOp", tc.what, err)
			}
			if err := c.Reduce(buf, make([]byte, 64), 1, tc.dt, tc.op, 0); !errors.Is(err, mpi.ErrOp) {
				return fmt.Errorf("Reduce, %s: %v, want ErrOp", tc.what, err)
			}
		}
		// Both ranks called both reductions with the same error: nothing is
		// left in flight. A contiguous derived type of Float64 sums.
		in := []float64{float64(c.Rank() + 1), 10}
		out := make([]float64, 2)
		if err := c.Allreduce(mpi.AsBytes(in), mpi.AsBytes(out), 1, pair, mpi.OpSum); err != nil {
			return err
		}
		return check(c, out[0] == 3 && out[1] == 20, "Allreduce of a contiguous Float64 pair: %v", out)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGatherScatterFixed: the low-level Gather and Scatter, whose blocks
// all have one length, go by the tree without block headers: in place at
// the root too, for 1 to 5 ranks and every root, over every transport;
// and a rank whose count disagrees with the root's makes an error, not a
// hang or wrong data: at the root for Gather, at that rank for Scatter,
// where the root's and the rank's data depend on it. With Packed, which
// every signature matches, the length alone tells.
func TestGatherScatterFixed(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) {
			matrix(t, n, func(c *mpi.Comm) error {
				me := c.Rank()
				for root := range n {
					all := make([]int32, 3*n)
					mine := []int32{int32(me), int32(10 * me), int32(root)}
					send := mpi.AsBytes(mine)
					if me == root {
						copy(all[3*root:], mine)
						send = mpi.InPlace
					}
					if err := c.Gather(send, 3, mpi.Int32, mpi.AsBytes(all), 3, mpi.Int32, root); err != nil {
						return fmt.Errorf("rank %d: Gather in place at %d: %v", me, root, err)
					}
					if me == root {
						for i := range n {
							if all[3*i] != int32(i) || all[3*i+1] != int32(10*i) || all[3*i+2] != int32(root) {
								return fmt.Errorf("Gather in place at %d: %v", root, all)
							}
						}
					}
					got := make([]int32, 3)
					recv := mpi.AsBytes(got)
					if me == root {
						recv = mpi.InPlace
					}
					for i := range all {
						all[i] += 1000
					}
					if err := c.Scatter(mpi.AsBytes(all), 3, mpi.Int32, recv, 3, mpi.Int32, root); err != nil {
						return fmt.Errorf("rank %d: Scatter in place at %d: %v", me, root, err)
					}
					if me != root {
						if got[0] != int32(me)+1000 || got[2] != int32(root)+1000 {
							return fmt.Errorf("rank %d: Scatter in place at %d gave %v", me, root, got)
						}
					}
				}
				if n == 1 {
					return nil
				}
				// Rank n-1 disagrees about the count, in elements of a type
				// and in bytes of Packed.
				for _, dt := range []*mpi.Datatype{mpi.Int32, mpi.Packed} {
					k, size := 2, 4
					if dt == mpi.Packed {
						k, size = 8, 1
					}
					mk := k
					if me == n-1 {
						mk = k + size // one element more
						if dt == mpi.Packed {
							mk = k + 4
						}
					}
					buf := make([]byte, mk*size)
					all := make([]byte, n*k*size)
					err := c.Gather(buf, mk, dt, all, k, dt, 0)
					if me == 0 && err == nil {
						return fmt.Errorf("Gather of %s with rank %d's count disagreeing: no error at the root", dt, n-1)
					}
					if err := c.Barrier(); err != nil {
						return err
					}
					err = c.Scatter(all, k, dt, buf, mk, dt, 0)
					if me == n-1 && err == nil {
						return fmt.Errorf("Scatter of %s with rank %d's count disagreeing: no error there", dt, me)
					}
					if err := c.Barrier(); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}
