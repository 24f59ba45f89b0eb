package coll_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Regression (issue 14): Alltoallw moves each block through its
// datatype's layout, not as counts[i]·size contiguous bytes: a
// vector(2,1,2,Int32) over {10,11,12,13} arrives as [10 12].
func TestAlltoallwLayouts(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		p, r := c.Size(), c.Rank()
		vec := mustType(mpi.NewVector(2, 1, 2, mpi.Int32))
		_, ext := vec.Extent()
		send := make([]int32, 4*p)
		for j := range p {
			for k := range 4 {
				send[4*j+k] = int32(100*r + 10*j + k)
			}
		}
		recv := make([]int32, 2*p)
		sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
		st, rt := make([]*mpi.Datatype, p), make([]*mpi.Datatype, p)
		for j := range p {
			sc[j], sd[j], st[j] = 1, 16*j, vec // elements 0 and 2 of block j
			rc[j], rd[j], rt[j] = 2, 8*j, mpi.Int32
		}
		_ = ext
		if err := c.Alltoallw(mpi.AsBytes(send), sc, sd, st, mpi.AsBytes(recv), rc, rd, rt); err != nil {
			return err
		}
		for j := range p {
			want0, want1 := int32(100*j+10*r), int32(100*j+10*r+2)
			if recv[2*j] != want0 || recv[2*j+1] != want1 {
				return fmt.Errorf("rank %d: block from %d is %v, want [%d %d]", r, j, recv[2*j:2*j+2], want0, want1)
			}
		}
		// The non-blocking form does the same.
		clear(recv)
		req, err := c.Ialltoallw(mpi.AsBytes(send), sc, sd, st, mpi.AsBytes(recv), rc, rd, rt)
		if err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		if recv[2*((r+1)%p)+1] != int32(100*((r+1)%p)+10*r+2) {
			return fmt.Errorf("rank %d: Ialltoallw: %v", r, recv)
		}
		return nil
	})
}

// Regression (issue 14): typed collectives check the type across ranks
// and name both Go types, instead of returning garbage.
func TestTypedMismatch(t *testing.T) {
	type a struct{ X, Y int32 }
	type b struct{ F float32 }
	type b2 struct{ F, G float32 }
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		var errs conformance.Errs
		// Allreduce of int on one rank and float64 on the others.
		var err error
		if c.Rank() == 1 {
			_, err = mpi.Allreduce(c, 1, mpi.Sum[int]())
		} else {
			_, err = mpi.Allreduce(c, 1.0, mpi.Sum[float64]())
		}
		errs.Addf(c, errors.Is(err, mpi.ErrType) && strings.Contains(err.Error(), "int") && strings.Contains(err.Error(), "float64"), "Allreduce int/float64: %v", err)
		// Bcast of float64 received as int.
		if c.Rank() == 0 {
			_, err = mpi.Bcast(c, 2.5, 0)
			errs.Addf(c, err == nil, "Bcast root: %v", err)
		} else {
			_, err = mpi.Bcast(c, 0, 0)
			errs.Addf(c, errors.Is(err, mpi.ErrType), "Bcast float64 as int: %v", err)
		}
		// Gather of one struct into another of the same size.
		if c.Rank() == 0 {
			_, err = mpi.Gather(c, a{1, 2}, 0)
			errs.Addf(c, errors.Is(err, mpi.ErrType) && strings.Contains(err.Error(), "coll_test.b2"), "Gather struct: %v", err)
		} else {
			_, err = mpi.Gather(c, b2{1, 2}, 0)
			errs.Addf(c, err == nil || errors.Is(err, mpi.ErrType), "Gather sender: %v", err)
		}
		_ = b{}
		// AllreduceSlice of different lengths says which ranks passed
		// which lengths, in user terms.
		_, err = mpi.AllreduceSlice(c, make([]float64, odd(c, 4, 3)), mpi.Sum[float64]())
		errs.Addf(c, errors.Is(err, mpi.ErrCount) && strings.Contains(err.Error(), "elements") && !strings.Contains(err.Error(), "coll:"), "AllreduceSlice lengths: %v", err)
		// The communicator still works.
		s, err := mpi.Allreduce(c, 1, mpi.Sum[int]())
		errs.Addf(c, err == nil && s == c.Size(), "after: %d %v", s, err)
		return errs.Err()
	})
}

// Every predefined reduction gives the right answer on every collective
// that reduces (MPICH coll/allred, reduce, scantst, redscat).
func TestReductions(t *testing.T) {
	conformance.Run(t, 4, func(c *mpi.Comm) error {
		var errs conformance.Errs
		r, p := c.Rank(), c.Size()
		v := []int64{int64(r + 1), int64(-r), 3}
		type tc struct {
			name string
			op   mpi.Op[int64]
			want func(n int) []int64 // over ranks 0..n-1
		}
		cases := []tc{
			{"Sum", mpi.Sum[int64](), func(n int) []int64 { return []int64{int64(n * (n + 1) / 2), int64(-n * (n - 1) / 2), int64(3 * n)} }},
			{"Max", mpi.Max[int64](), func(n int) []int64 { return []int64{int64(n), 0, 3} }},
			{"Min", mpi.Min[int64](), func(n int) []int64 { return []int64{1, int64(-(n - 1)), 3} }},
			{"Band", mpi.Band[int64](), func(n int) []int64 {
				x, y := int64(-1), int64(-1)
				for i := range n {
					x &= int64(i + 1)
					y &= int64(-i)
				}
				return []int64{x, y, 3}
			}},
			{"Land", mpi.Land[int64](), func(n int) []int64 {
				if n == 1 { // one operand: the value itself, as in MPICH
					return []int64{1, 0, 3}
				}
				return []int64{1, 0, 1}
			}},
		}
		for _, k := range cases {
			got, err := mpi.AllreduceSlice(c, v, k.op)
			want := k.want(p)
			errs.Addf(c, err == nil && fmt.Sprint(got) == fmt.Sprint(want), "Allreduce %s: %v %v, want %v", k.name, got, err, want)
			got, err = mpi.ScanSlice(c, v, k.op)
			want = k.want(r + 1)
			errs.Addf(c, err == nil && fmt.Sprint(got) == fmt.Sprint(want), "Scan %s: %v %v, want %v", k.name, got, err, want)
		}
		// Low-level Reduce, ReduceScatterBlock and Exscan with Sum.
		out := make([]int64, 3)
		err := c.Reduce(mpi.AsBytes(v), mpi.AsBytes(out), 3, mpi.Int64, mpi.OpSum, p-1)
		errs.Addf(c, err == nil && (r != p-1 || out[2] == int64(3*p)), "Reduce: %v %v", out, err)
		in := make([]int64, p)
		for i := range in {
			in[i] = int64(i * r)
		}
		blk := make([]int64, 1)
		err = c.ReduceScatterBlock(mpi.AsBytes(in), mpi.AsBytes(blk), 1, mpi.Int64, mpi.OpSum)
		errs.Addf(c, err == nil && blk[0] == int64(r*p*(p-1)/2), "ReduceScatterBlock: %v %v", blk, err)
		ex := []int64{-7}
		err = c.Exscan(mpi.AsBytes([]int64{int64(r)}), mpi.AsBytes(ex), 1, mpi.Int64, mpi.OpSum)
		errs.Addf(c, err == nil && (r == 0 && ex[0] == -7 || r > 0 && ex[0] == int64(r*(r-1)/2)), "Exscan: %v %v", ex, err)
		// MinLoc over pairs.
		pl, err := mpi.Allreduce(c, mpi.ValueLoc[float64]{Value: float64((r + 2) % p), Loc: r}, mpi.MinLoc[float64]())
		errs.Addf(c, err == nil && pl.Value == 0 && pl.Loc == p-2, "MinLoc: %+v %v", pl, err)
		return errs.Err()
	})
}

// Collectives take non-contiguous datatypes on both sides (MPICH
// coll/bcast with vectors, gather with strided receive types).
func TestNoncontiguous(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		var errs conformance.Errs
		r, p := c.Rank(), c.Size()
		vec := mustType(mpi.NewVector(3, 1, 2, mpi.Float64))
		buf := make([]float64, 5)
		if r == 1 {
			buf = []float64{1, -1, 2, -1, 3}
		}
		err := c.Bcast(mpi.AsBytes(buf), 1, vec, 1)
		errs.Addf(c, err == nil && buf[0] == 1 && buf[2] == 2 && buf[4] == 3 && (r == 1 || buf[1] == 0), "vector Bcast: %v %v", buf, err)
		// Gather one float64 from each rank into every other slot.
		stride := mustType(mpi.NewResized(mpi.Float64, 0, 16))
		recv := make([]float64, 2*p)
		err = c.Gather(mpi.AsBytes([]float64{float64(r + 1)}), 1, mpi.Float64, mpi.AsBytes(recv), 1, stride, 0)
		if r == 0 {
			errs.Addf(c, err == nil && recv[0] == 1 && recv[2] == 2 && recv[4] == 3 && recv[1] == 0, "strided Gather: %v %v", recv, err)
		}
		// Allreduce over a vector sums the vector's elements only.
		data := []float64{1, 100, 1, 100, 1}
		out := make([]float64, 5)
		err = c.Allreduce(mpi.AsBytes(data), mpi.AsBytes(out), 1, vec, mpi.OpSum)
		errs.Addf(c, err == nil && out[0] == float64(p) && out[4] == float64(p) && out[1] == 0, "vector Allreduce: %v %v", out, err)
		return errs.Err()
	})
}

// Non-blocking collectives of every kind complete with the blocking
// ones' results, several at once (MPICH coll/nonblocking*).
func TestNonblocking(t *testing.T) {
	conformance.Run(t, 4, func(c *mpi.Comm) error {
		r, p := c.Rank(), c.Size()
		fb, err := mpi.Ibcast(c, r*10, 2)
		if err != nil {
			return err
		}
		fa, err := mpi.Iallreduce(c, r, mpi.Sum[int]())
		if err != nil {
			return err
		}
		fg, err := mpi.Iallgather(c, r)
		if err != nil {
			return err
		}
		rb, err := c.Ibarrier()
		if err != nil {
			return err
		}
		if err := mpi.WaitAll(fb, fa, fg, rb); err != nil {
			return err
		}
		b, _ := fb.Wait()
		a, _ := fa.Wait()
		g, _ := fg.Wait()
		if b != 20 || a != p*(p-1)/2 || len(g) != p || g[p-1] != p-1 {
			return fmt.Errorf("rank %d: %d %d %v", r, b, a, g)
		}
		return nil
	})
}

// A non-blocking collective pending on one rank while the others make a
// blocking one first does not take that one's messages: each rank in turn
// starts an Iallreduce before a Barrier and a Bcast that the others make
// before starting theirs (MPICH and Open MPI number the two kinds apart;
// mpi4py's test_ulfm testIAgree does this through its MPI_Comm_iagree
// fallback, and hung here before). Neighbourhood and buffer forms too.
func TestNonblockingBesideBlocking(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		r, p := c.Rank(), c.Size()
		for root := range p {
			var fa *mpi.Future[int]
			var err error
			if r == root {
				if fa, err = mpi.Iallreduce(c, r+1, mpi.Prod[int]()); err != nil {
					return err
				}
			}
			if err := mpi.Barrier(c); err != nil {
				return err
			}
			b, err := mpi.Bcast(c, 7*r, root)
			if err != nil {
				return err
			}
			if b != 7*root {
				return fmt.Errorf("rank %d, round %d: Bcast gave %d, want %d", r, root, b, 7*root)
			}
			if r != root {
				if fa, err = mpi.Iallreduce(c, r+1, mpi.Prod[int]()); err != nil {
					return err
				}
			}
			got, err := fa.Wait()
			if err != nil {
				return err
			}
			want := 1
			for k := 1; k <= p; k++ {
				want *= k
			}
			if got != want {
				return fmt.Errorf("rank %d, round %d: Iallreduce gave %d, want %d", r, root, got, want)
			}
		}
		// The byte-buffer form against a blocking Allreduce.
		send, brecv := mpi.AsBytes([]int32{int32(r)}), make([]int32, 1)
		var req *mpi.Request
		var err error
		if r == 0 {
			if req, err = c.Ibarrier(); err != nil {
				return err
			}
		}
		if err := c.Allreduce(send, mpi.AsBytes(brecv), 1, mpi.Int32, mpi.OpSum); err != nil {
			return err
		}
		if r != 0 {
			if req, err = c.Ibarrier(); err != nil {
				return err
			}
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		if int(brecv[0]) != p*(p-1)/2 {
			return fmt.Errorf("rank %d: Allreduce beside Ibarrier gave %d", r, brecv[0])
		}
		return nil
	})
}

// Zero-length contributions are valid everywhere.
func TestZeroCounts(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		var errs conformance.Errs
		errs.Add(c.Bcast(nil, 0, mpi.Int32, 0))
		errs.Add(c.Allreduce(nil, nil, 0, mpi.Float64, mpi.OpSum))
		errs.Add(c.Allgather(nil, 0, mpi.Int32, nil, 0, mpi.Int32))
		errs.Add(c.Alltoall(nil, 0, mpi.Int32, nil, 0, mpi.Int32))
		v, err := mpi.AllreduceSlice(c, []int{}, mpi.Sum[int]())
		errs.Addf(c, err == nil && len(v) == 0, "empty AllreduceSlice: %v %v", v, err)
		return errs.Err()
	})
}
