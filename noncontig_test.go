package mpi_test

import (
	"fmt"
	"slices"

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
