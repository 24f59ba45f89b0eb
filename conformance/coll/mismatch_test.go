package coll_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Collective calls whose ranks disagree about the type signature (the
// sequence of basic types, or how many of them) are erroneous in MPI;
// mpigo reports them with ErrType (the types differ) or ErrCount (only
// the lengths do), naming what each side passed, and no rank hangs. Each
// case below is one collective in which one rank (the odd one) passes
// something else than the others. The ranks whose result depends on the
// odd rank's data must fail with the class; the others may fail with it
// too (they learn of the mismatch from a poisoned message) or succeed.

// mmCase is one mismatched collective call.
type mmCase struct {
	name  string
	class error
	must  func(c *mpi.Comm) bool // the ranks that must report the mismatch
	words []string               // what their error text must mention
	call  func(c *mpi.Comm) error
}

func all(*mpi.Comm) bool { return true }

func only(ranks ...int) func(*mpi.Comm) bool {
	return func(c *mpi.Comm) bool {
		for _, r := range ranks {
			if c.Rank() == r {
				return true
			}
		}
		return false
	}
}

// i32 returns a buffer of n int32 values and its bytes.
func i32(n int) []byte { return mpi.AsBytes(make([]int32, n)) }

// odd returns b if c's rank is 1, else a.
func odd[T any](c *mpi.Comm, a, b T) T {
	if c.Rank() == 1 {
		return b
	}
	return a
}

func mustType(dt *mpi.Datatype, err error) *mpi.Datatype {
	if err != nil {
		panic(err)
	}
	if err := dt.Commit(); err != nil {
		panic(err)
	}
	return dt
}

// lowCases are the low-level collectives (buffer, count, Datatype) on an
// intracommunicator of 3 or more ranks.
func lowCases() []mmCase {
	sum := mpi.OpSum
	return []mmCase{
		{"Bcast/type", mpi.ErrType, only(1), []string{"int32", "float32"}, func(c *mpi.Comm) error {
			return c.Bcast(i32(4), 4, odd(c, mpi.Int32, mpi.Float32), 0)
		}},
		{"Bcast/count", mpi.ErrCount, only(1), []string{"3 × int32", "4 × int32"}, func(c *mpi.Comm) error {
			return c.Bcast(i32(4), odd(c, 4, 3), mpi.Int32, 0)
		}},
		{"Ibcast/type", mpi.ErrType, only(1), []string{"int32", "float32"}, func(c *mpi.Comm) error {
			r, err := c.Ibcast(i32(4), 4, odd(c, mpi.Int32, mpi.Float32), 0)
			if err != nil {
				return err
			}
			_, err = r.Wait()
			return err
		}},
		{"Reduce/type", mpi.ErrType, only(0), []string{"int32", "float32"}, func(c *mpi.Comm) error {
			return c.Reduce(i32(2), i32(2), 2, odd(c, mpi.Int32, mpi.Float32), sum, 0)
		}},
		{"Reduce/count", mpi.ErrCount, only(0), []string{"2 × int32", "1 × int32"}, func(c *mpi.Comm) error {
			return c.Reduce(i32(2), i32(2), odd(c, 2, 1), mpi.Int32, sum, 0)
		}},
		{"Allreduce/type", mpi.ErrType, all, []string{"int32", "float32"}, func(c *mpi.Comm) error {
			return c.Allreduce(i32(2), i32(2), 2, odd(c, mpi.Int32, mpi.Float32), sum)
		}},
		{"Allreduce/count", mpi.ErrCount, all, []string{"int32"}, func(c *mpi.Comm) error {
			return c.Allreduce(i32(3), i32(3), odd(c, 3, 2), mpi.Int32, sum)
		}},
		{"Allreduce/noncommutative", mpi.ErrType, all, []string{"int32", "float32"}, func(c *mpi.Comm) error {
			op := mpi.NewReduceOp(func(in, inout []byte, count int, dt *mpi.Datatype) {}, false)
			return c.Allreduce(i32(2), i32(2), 2, odd(c, mpi.Int32, mpi.Float32), op)
		}},
		{"Iallreduce/count", mpi.ErrCount, all, []string{"int32"}, func(c *mpi.Comm) error {
			r, err := c.Iallreduce(i32(3), i32(3), odd(c, 3, 1), mpi.Int32, sum)
			if err != nil {
				return err
			}
			_, err = r.Wait()
			return err
		}},
		{"Gather/type", mpi.ErrType, only(0), []string{"int32", "float32"}, func(c *mpi.Comm) error {
			return c.Gather(i32(2), 2, odd(c, mpi.Int32, mpi.Float32), i32(2*c.Size()), 2, mpi.Int32, 0)
		}},
		{"Gather/count", mpi.ErrCount, only(0), []string{"1 × int32", "2 × int32"}, func(c *mpi.Comm) error {
			return c.Gather(i32(2), odd(c, 2, 1), mpi.Int32, i32(2*c.Size()), 2, mpi.Int32, 0)
		}},
		{"Gather/root's own blocks", mpi.ErrCount, only(0), []string{"2 × int32", "1 × int32"}, func(c *mpi.Comm) error {
			send := 2
			if c.Rank() == 0 {
				send = 1
			}
			return c.Gather(i32(2), send, mpi.Int32, i32(2*c.Size()), 2, mpi.Int32, 0)
		}},
		{"Gatherv/count", mpi.ErrCount, only(0), []string{"rank 1", "recvcounts[1]"}, func(c *mpi.Comm) error {
			counts, displs := make([]int, c.Size()), make([]int, c.Size())
			for i := range counts {
				counts[i], displs[i] = 2, 2*i
			}
			return c.Gatherv(i32(2), odd(c, 2, 1), mpi.Int32, i32(2*c.Size()), counts, displs, mpi.Int32, 0)
		}},
		{"Gatherv/type", mpi.ErrType, only(0), []string{"int32", "float64"}, func(c *mpi.Comm) error {
			counts, displs := make([]int, c.Size()), make([]int, c.Size())
			for i := range counts {
				counts[i], displs[i] = 2, 2*i
			}
			return c.Gatherv(i32(2), odd(c, 2, 1), odd(c, mpi.Int32, mpi.Float64), i32(2*c.Size()), counts, displs, mpi.Int32, 0)
		}},
		{"Scatter/count", mpi.ErrCount, only(1), []string{"int32"}, func(c *mpi.Comm) error {
			return c.Scatter(i32(2*c.Size()), 2, mpi.Int32, i32(3), odd(c, 2, 3), mpi.Int32, 0)
		}},
		{"Scatterv/type", mpi.ErrType, only(1), []string{"int32", "float32"}, func(c *mpi.Comm) error {
			counts, displs := make([]int, c.Size()), make([]int, c.Size())
			for i := range counts {
				counts[i], displs[i] = 2, 2*i
			}
			return c.Scatterv(i32(2*c.Size()), counts, displs, mpi.Int32, i32(2), 2, odd(c, mpi.Int32, mpi.Float32), 0)
		}},
		{"Scatterv/count", mpi.ErrCount, only(1), []string{"recvcount"}, func(c *mpi.Comm) error {
			counts, displs := make([]int, c.Size()), make([]int, c.Size())
			for i := range counts {
				counts[i], displs[i] = 2, 2*i
			}
			return c.Scatterv(i32(2*c.Size()), counts, displs, mpi.Int32, i32(3), odd(c, 2, 3), mpi.Int32, 0)
		}},
		{"Allgather/type", mpi.ErrType, all, []string{"int32", "float32"}, func(c *mpi.Comm) error {
			dt := odd(c, mpi.Int32, mpi.Float32)
			return c.Allgather(i32(1), 1, dt, i32(c.Size()), 1, dt)
		}},
		{"Allgather/own blocks", mpi.ErrCount, only(1), []string{"2 × int32", "1 × int32"}, func(c *mpi.Comm) error {
			return c.Allgather(i32(2), odd(c, 1, 2), mpi.Int32, i32(c.Size()), 1, mpi.Int32)
		}},
		{"Allgatherv/counts", mpi.ErrCount, all, []string{"int32"}, func(c *mpi.Comm) error {
			counts, displs := make([]int, c.Size()), make([]int, c.Size())
			for i := range counts {
				counts[i], displs[i] = 1, 2*i
			}
			counts[1] = odd(c, 1, 2)
			return c.Allgatherv(i32(2), counts[c.Rank()], mpi.Int32, i32(2*c.Size()), counts, displs, mpi.Int32)
		}},
		{"Alltoall/count", mpi.ErrCount, all, []string{"int32"}, func(c *mpi.Comm) error {
			n := odd(c, 1, 2)
			return c.Alltoall(i32(2*c.Size()), n, mpi.Int32, i32(2*c.Size()), n, mpi.Int32)
		}},
		{"Alltoall/own blocks", mpi.ErrType, only(1), []string{"int32", "float32"}, func(c *mpi.Comm) error {
			return c.Alltoall(i32(c.Size()), 1, odd(c, mpi.Int32, mpi.Float32), i32(c.Size()), 1, mpi.Int32)
		}},
		{"Alltoallv/count", mpi.ErrCount, only(2), []string{"rank 1", "2 × int32", "1 × int32"}, func(c *mpi.Comm) error {
			p := c.Size()
			sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
			for i := range p {
				sc[i], sd[i], rc[i], rd[i] = 1, 2*i, 1, 2*i
			}
			if c.Rank() == 1 {
				sc[2] = 2
			}
			return c.Alltoallv(i32(2*p), sc, sd, mpi.Int32, i32(2*p), rc, rd, mpi.Int32)
		}},
		{"Alltoallw/type", mpi.ErrType, only(2), []string{"rank 1", "int32", "float32"}, func(c *mpi.Comm) error {
			p := c.Size()
			sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
			st, rt := make([]*mpi.Datatype, p), make([]*mpi.Datatype, p)
			for i := range p {
				sc[i], sd[i], rc[i], rd[i], st[i], rt[i] = 1, 4*i, 1, 4*i, mpi.Int32, mpi.Int32
			}
			if c.Rank() == 1 {
				st[2] = mpi.Float32
			}
			return c.Alltoallw(i32(p), sc, sd, st, i32(p), rc, rd, rt)
		}},
		{"ReduceScatterBlock/count", mpi.ErrCount, all, []string{"int32"}, func(c *mpi.Comm) error {
			n := odd(c, 1, 2)
			return c.ReduceScatterBlock(i32(2*c.Size()), i32(2), n, mpi.Int32, sum)
		}},
		{"ReduceScatter/counts", mpi.ErrCount, all, []string{"different counts"}, func(c *mpi.Comm) error {
			counts := make([]int, c.Size())
			for i := range counts {
				counts[i] = 1
			}
			counts[0] = odd(c, 1, 2)
			return c.ReduceScatter(i32(2*c.Size()), i32(2), counts, mpi.Int32, sum)
		}},
		{"Scan/type", mpi.ErrType, func(c *mpi.Comm) bool { return c.Rank() >= 1 }, []string{"int32", "float32"}, func(c *mpi.Comm) error {
			return c.Scan(i32(2), i32(2), 2, odd(c, mpi.Int32, mpi.Float32), sum)
		}},
		{"Exscan/count", mpi.ErrCount, func(c *mpi.Comm) bool { return c.Rank() >= 1 }, []string{"int32"}, func(c *mpi.Comm) error {
			return c.Exscan(i32(2), i32(2), odd(c, 2, 1), mpi.Int32, sum)
		}},
		{"Bcast/struct order", mpi.ErrType, only(1), []string{"{int32,float64}", "{float64,int32}"}, func(c *mpi.Comm) error {
			a := mustType(mpi.NewStruct([]int{1, 1}, []int{0, 8}, []*mpi.Datatype{mpi.Int32, mpi.Float64}))
			b := mustType(mpi.NewStruct([]int{1, 1}, []int{0, 8}, []*mpi.Datatype{mpi.Float64, mpi.Int32}))
			return c.Bcast(make([]byte, 32), 2, odd(c, a, b), 0)
		}},
	}
}

// typedCases are typed collectives that have no check of their own in
// the root package's tests: Scan, Exscan, Alltoall and the Into forms.
func typedCases() []mmCase {
	return []mmCase{
		{"typed Scan", mpi.ErrType, func(c *mpi.Comm) bool { return c.Rank() >= 1 }, []string{"int", "float64"}, func(c *mpi.Comm) error {
			if c.Rank() == 1 {
				_, err := mpi.Scan(c, 1.5, mpi.Sum[float64]())
				return err
			}
			_, err := mpi.Scan(c, 1, mpi.Sum[int]())
			return err
		}},
		{"typed Alltoall", mpi.ErrType, all, []string{"int", "string"}, func(c *mpi.Comm) error {
			if c.Rank() == 1 {
				_, err := mpi.Alltoall(c, make([]string, c.Size()))
				return err
			}
			_, err := mpi.Alltoall(c, make([]int, c.Size()))
			return err
		}},
		{"AllreduceSliceInto", mpi.ErrCount, all, []string{"elements"}, func(c *mpi.Comm) error {
			v := make([]float64, odd(c, 4, 3))
			return mpi.AllreduceSliceInto(c, v, v, mpi.Sum[float64]())
		}},
	}
}

// interCases run on an intercommunicator whose groups are the even and
// the odd ranks of a world of 4; rank 1 of the world (local rank 0 of
// the odd group) is the odd one out. Low is the low group (even ranks).
func interCases() []mmCase {
	low := func(c *mpi.Comm) bool { return c.Rank() >= 0 && !isOddGroup(c) }
	root := func(c *mpi.Comm) int { // rank 0 of the even group is the root
		switch {
		case isOddGroup(c):
			return 0
		case c.Rank() == 0:
			return mpi.Root
		}
		return mpi.ProcNull
	}
	return []mmCase{
		{"inter Bcast", mpi.ErrType, func(c *mpi.Comm) bool { return isOddGroup(c) && c.Rank() == 0 }, []string{"int", "float64"}, func(c *mpi.Comm) error {
			if isOddGroup(c) && c.Rank() == 0 {
				_, err := mpi.Bcast(c, 0.0, root(c))
				return err
			}
			_, err := mpi.Bcast(c, 7, root(c))
			return err
		}},
		{"inter Allreduce", mpi.ErrType, low, []string{"int", "float64"}, func(c *mpi.Comm) error {
			if isOddGroup(c) && c.Rank() == 0 {
				_, err := mpi.Allreduce(c, 1.0, mpi.Sum[float64]())
				return err
			}
			_, err := mpi.Allreduce(c, 1, mpi.Sum[int]())
			return err
		}},
		{"inter AllreduceSlice", mpi.ErrCount, low, []string{"elements"}, func(c *mpi.Comm) error {
			n := 3
			if isOddGroup(c) && c.Rank() == 0 {
				n = 4
			}
			_, err := mpi.AllreduceSlice(c, make([]int, n), mpi.Sum[int]())
			return err
		}},
		{"inter Reduce", mpi.ErrType, func(c *mpi.Comm) bool { return root(c) == mpi.Root }, []string{"int", "float64"}, func(c *mpi.Comm) error {
			if isOddGroup(c) && c.Rank() == 0 {
				_, err := mpi.Reduce(c, 1.0, mpi.Sum[float64](), root(c))
				return err
			}
			_, err := mpi.Reduce(c, 1, mpi.Sum[int](), root(c))
			return err
		}},
		{"inter Gather", mpi.ErrType, func(c *mpi.Comm) bool { return root(c) == mpi.Root }, []string{"int32", "float32"}, func(c *mpi.Comm) error {
			if isOddGroup(c) && c.Rank() == 0 {
				_, err := mpi.Gather(c, float32(1), root(c))
				return err
			}
			_, err := mpi.Gather(c, int32(1), root(c))
			return err
		}},
		{"inter Scatter", mpi.ErrType, func(c *mpi.Comm) bool { return isOddGroup(c) }, []string{"int", "uint"}, func(c *mpi.Comm) error {
			if root(c) == mpi.Root {
				_, err := mpi.Scatter(c, make([]uint, c.RemoteSize()), root(c))
				return err
			}
			_, err := mpi.Scatter[int](c, nil, root(c))
			return err
		}},
		{"inter Allgather", mpi.ErrType, low, []string{"int", "string"}, func(c *mpi.Comm) error {
			if isOddGroup(c) && c.Rank() == 0 {
				_, err := mpi.Allgather(c, "x")
				return err
			}
			_, err := mpi.Allgather(c, 1)
			return err
		}},
		{"inter Alltoall", mpi.ErrType, func(c *mpi.Comm) bool { return !isOddGroup(c) }, []string{"int", "float64"}, func(c *mpi.Comm) error {
			if isOddGroup(c) && c.Rank() == 0 {
				_, err := mpi.Alltoall(c, make([]float64, c.RemoteSize()))
				return err
			}
			_, err := mpi.Alltoall(c, make([]int, c.RemoteSize()))
			return err
		}},
		{"inter low-level Bcast", mpi.ErrCount, func(c *mpi.Comm) bool { return isOddGroup(c) && c.Rank() == 0 }, []string{"3 × int32", "4 × int32"}, func(c *mpi.Comm) error {
			n := 4
			if isOddGroup(c) && c.Rank() == 0 {
				n = 3
			}
			return c.Bcast(i32(4), n, mpi.Int32, root(c))
		}},
		{"inter low-level Allreduce", mpi.ErrType, low, []string{"int32", "float32"}, func(c *mpi.Comm) error {
			dt := mpi.Int32
			if isOddGroup(c) && c.Rank() == 0 {
				dt = mpi.Float32
			}
			return c.Allreduce(i32(2), i32(2), 2, dt, mpi.OpSum)
		}},
		{"inter low-level Gather", mpi.ErrCount, func(c *mpi.Comm) bool { return root(c) == mpi.Root }, []string{"int32"}, func(c *mpi.Comm) error {
			n := 2
			if isOddGroup(c) && c.Rank() == 0 {
				n = 1
			}
			return c.Gather(i32(2), n, mpi.Int32, i32(2*c.RemoteSize()), 2, mpi.Int32, root(c))
		}},
		{"inter low-level Scatter", mpi.ErrCount, func(c *mpi.Comm) bool { return isOddGroup(c) && c.Rank() == 0 }, []string{"int32"}, func(c *mpi.Comm) error {
			n := 2
			if isOddGroup(c) && c.Rank() == 0 {
				n = 3
			}
			return c.Scatter(i32(2*c.RemoteSize()), 2, mpi.Int32, i32(3), n, mpi.Int32, root(c))
		}},
		{"inter low-level Alltoall", mpi.ErrCount, func(c *mpi.Comm) bool { return !isOddGroup(c) }, []string{"2 × int32", "1 × int32"}, func(c *mpi.Comm) error {
			n := 1
			if isOddGroup(c) && c.Rank() == 0 {
				n = 2
			}
			q := c.RemoteSize()
			return c.Alltoall(i32(2*q), n, mpi.Int32, i32(2*q), n, mpi.Int32)
		}},
		{"inter Alltoallw", mpi.ErrType, func(c *mpi.Comm) bool { return !isOddGroup(c) && c.Rank() == 0 }, []string{"int32", "float32"}, func(c *mpi.Comm) error {
			q := c.RemoteSize()
			sc, sd, rc, rd := make([]int, q), make([]int, q), make([]int, q), make([]int, q)
			st, rt := make([]*mpi.Datatype, q), make([]*mpi.Datatype, q)
			for i := range q {
				sc[i], sd[i], rc[i], rd[i], st[i], rt[i] = 1, 4*i, 1, 4*i, mpi.Int32, mpi.Int32
			}
			if isOddGroup(c) && c.Rank() == 0 {
				st[0] = mpi.Float32
			}
			return c.Alltoallw(i32(q), sc, sd, st, i32(q), rc, rd, rt)
		}},
	}
}

// isOddGroup reports whether the intercommunicator c's local group is
// the odd ranks of the world (its name says so: see runCases).
func isOddGroup(c *mpi.Comm) bool { return strings.HasSuffix(c.Name(), "odd") }

// nbrCases run on a periodic ring of the world's ranks: rank 1's
// neighbours are 0 and 2.
func nbrCases() []mmCase {
	nbrs := func(c *mpi.Comm) bool { return c.Rank() == 0 || c.Rank() == 2 }
	return []mmCase{
		{"NeighborAllgather/type", mpi.ErrType, nbrs, []string{"int32", "float32"}, func(c *mpi.Comm) error {
			return c.NeighborAllgather(i32(1), 1, odd(c, mpi.Int32, mpi.Float32), i32(2), 1, mpi.Int32)
		}},
		{"NeighborAlltoall/count", mpi.ErrCount, nbrs, []string{"1 × int32", "2 × int32"}, func(c *mpi.Comm) error {
			return c.NeighborAlltoall(i32(4), odd(c, 2, 1), mpi.Int32, i32(4), 2, mpi.Int32)
		}},
		{"NeighborAlltoallw/type", mpi.ErrType, nbrs, []string{"in-neighbour", "float64"}, func(c *mpi.Comm) error {
			sd, rd := []int{0, 8}, []int{0, 8}
			st := []*mpi.Datatype{mpi.Int64, mpi.Int64}
			rt := []*mpi.Datatype{mpi.Int64, mpi.Int64}
			if c.Rank() == 1 {
				st = []*mpi.Datatype{mpi.Float64, mpi.Float64}
			}
			return c.NeighborAlltoallw(make([]byte, 16), []int{1, 1}, sd, st, make([]byte, 16), []int{1, 1}, rd, rt)
		}},
		{"typed NeighborAllgather", mpi.ErrType, nbrs, []string{"int", "float64"}, func(c *mpi.Comm) error {
			if c.Rank() == 1 {
				_, err := mpi.NeighborAllgather(c, 1.5)
				return err
			}
			_, err := mpi.NeighborAllgather(c, 1)
			return err
		}},
		{"typed NeighborAlltoall", mpi.ErrType, nbrs, []string{"int", "string"}, func(c *mpi.Comm) error {
			if c.Rank() == 1 {
				_, err := mpi.NeighborAlltoall(c, []string{"a", "b"})
				return err
			}
			_, err := mpi.NeighborAlltoall(c, []int{1, 2})
			return err
		}},
	}
}

// runCases runs every case on comm, one after the other, checking each
// rank's error, and then that comm still works.
func runCases(c *mpi.Comm, cases []mmCase) error {
	var errs conformance.Errs
	for _, tc := range cases {
		conformance.Note("%s on rank %d", tc.name, c.Rank())
		err := tc.call(c)
		var e *mpi.Error
		switch {
		case tc.must(c) && !errors.Is(err, tc.class):
			errs.Add(fmt.Errorf("%s: rank %d: err %v, want %v", tc.name, c.Rank(), err, tc.class))
		case err != nil && !errors.Is(err, tc.class):
			errs.Add(fmt.Errorf("%s: rank %d: err %v, want nil or %v", tc.name, c.Rank(), err, tc.class))
		case err != nil && !errors.As(err, &e):
			errs.Add(fmt.Errorf("%s: rank %d: %T is not an *mpi.Error", tc.name, c.Rank(), err))
		case tc.must(c):
			if os.Getenv("SHOWERR") != "" {
				fmt.Println(err)
			}
			for _, w := range tc.words {
				if !strings.Contains(err.Error(), w) {
					errs.Add(fmt.Errorf("%s: rank %d: error %q does not mention %q", tc.name, c.Rank(), err, w))
				}
			}
		}
		// The communicator stays usable after the mismatch.
		if err := c.Barrier(); err != nil {
			errs.Add(fmt.Errorf("%s: rank %d: barrier after: %v", tc.name, c.Rank(), err))
			return errs.Err()
		}
	}
	if c.IsInter() {
		return errs.Err()
	}
	s, err := mpi.Allreduce(c, c.Rank(), mpi.Sum[int]())
	errs.Addf(c, err == nil && s == c.Size()*(c.Size()-1)/2, "allreduce after the mismatches: %d, %v", s, err)
	return errs.Err()
}

func TestMismatchLowLevel(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error { return runCases(c, lowCases()) })
	// A power of two takes other algorithms (recursive doubling, no
	// remainder step); the protocol paths are the inproc ones'.
	t.Run("4ranks", func(t *testing.T) {
		conformance.RunOnly(t, []string{"inproc", "inproc-rendezvous"}, 4, func(c *mpi.Comm) error { return runCases(c, lowCases()) })
	})
}

func TestMismatchTyped(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error { return runCases(c, typedCases()) })
}

func TestMismatchIntercomm(t *testing.T) {
	conformance.Run(t, 4, func(world *mpi.Comm) error {
		half, err := world.Split(world.Rank()%2, world.Rank())
		if err != nil {
			return err
		}
		ic, err := mpi.IntercommCreate(half, 0, world, 1-world.Rank()%2, 7)
		if err != nil {
			return err
		}
		if world.Rank()%2 == 1 {
			ic.SetName("inter-odd")
		} else {
			ic.SetName("inter-even")
		}
		return runCases(ic, interCases())
	})
}

func TestMismatchNeighbor(t *testing.T) {
	conformance.Run(t, 4, func(world *mpi.Comm) error {
		ring, err := world.CartCreate([]int{world.Size()}, []bool{true}, false)
		if err != nil {
			return err
		}
		return runCases(ring, nbrCases())
	})
}

// A signature is the sequence of basic types, not the layout: a strided
// vector of two int32 matches two contiguous int32 in every collective,
// and a struct sent as one element matches its fields sent as a
// contiguous pair of structs' halves.
func TestSignatureNotLayout(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		var errs conformance.Errs
		vec := mustType(mpi.NewVector(2, 1, 2, mpi.Int32))
		pair := mustType(mpi.NewStruct([]int{1, 1}, []int{0, 8}, []*mpi.Datatype{mpi.Int32, mpi.Float64}))
		two := mustType(mpi.NewContiguous(2, pair))
		// Bcast: root sends {10,11,12,13} as a vector (10 and 12); the
		// others receive two int32.
		if c.Rank() == 0 {
			b := []int32{10, 11, 12, 13}
			errs.Add(c.Bcast(mpi.AsBytes(b), 1, vec, 0))
		} else {
			b := make([]int32, 2)
			err := c.Bcast(mpi.AsBytes(b), 2, mpi.Int32, 0)
			errs.Addf(c, err == nil && b[0] == 10 && b[1] == 12, "vector bcast: %v %v", b, err)
		}
		// Allreduce with one rank passing the vector form.
		in := []int32{1, 0, 2, 0}
		out := make([]int32, 4)
		var err error
		if c.Rank() == 1 {
			err = c.Allreduce(mpi.AsBytes(in), mpi.AsBytes(out), 1, vec, mpi.OpSum)
		} else {
			err = c.Allreduce(mpi.AsBytes([]int32{1, 2}), mpi.AsBytes(out), 2, mpi.Int32, mpi.OpSum)
		}
		got := []int32{out[0], out[1]}
		if c.Rank() == 1 {
			got[1] = out[2]
		}
		errs.Addf(c, err == nil && got[0] == 3 && got[1] == 6, "vector allreduce: %v %v", out, err)
		// Gather two structs as two elements, or as one contiguous pair.
		send := make([]byte, 32)
		recv := make([]byte, 32*c.Size())
		if c.Rank() == 1 {
			err = c.Gather(send, 1, two, recv, 2, pair, 0)
		} else {
			err = c.Gather(send, 2, pair, recv, 2, pair, 0)
		}
		errs.Addf(c, err == nil, "struct gather: %v", err)
		// Packed matches any signature (MPI_PACKED): the root
		// broadcasts packed int32s, the others receive Int32.
		if c.Rank() == 0 {
			pk := make([]byte, 8)
			if _, err := mpi.Pack(mpi.AsBytes([]int32{5, 6}), 2, mpi.Int32, pk, 0); err != nil {
				return err
			}
			errs.Add(c.Bcast(pk, 8, mpi.Packed, 0))
		} else {
			b := make([]int32, 2)
			err := c.Bcast(mpi.AsBytes(b), 2, mpi.Int32, 0)
			errs.Addf(c, err == nil && b[1] == 6, "packed bcast: %v %v", b, err)
		}
		// Empty contributions match whatever the datatypes.
		errs.Add(c.Bcast(nil, 0, odd(c, mpi.Int32, mpi.Float64), 0))
		return errs.Err()
	})
}
