//go:build amd64 || arm64 || ppc64 || ppc64le || s390x || riscv64 || loong64 || mips64 || mips64le || wasm

// Counts here overflow 64-bit ints: the file needs a 64-bit int.

package mpi_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/mpigo/mpi"
)

// Hostile counts: products with an element size that overflow an int,
// some of them wrapping around to a small, plausible number of bytes.
var hostileCounts = []struct {
	name  string
	count int
	dt    *mpi.Datatype
}{
	{"MaxInt/4 int64", math.MaxInt / 4, mpi.Int64},     // 2·MaxInt: used to panic slicing
	{"1<<61+1 int64", 1<<61 + 1, mpi.Int64},            // wraps to 8 bytes
	{"1<<62 int32", 1 << 62, mpi.Int32},                // wraps to 0 bytes
	{"MaxInt complex128", math.MaxInt, mpi.Complex128}, // wraps to -16
}

// wantCount checks that err is an *mpi.Error of class ErrCount.
func wantCount(what string, err error) error {
	var e *mpi.Error
	if !errors.As(err, &e) || !errors.Is(err, mpi.ErrCount) {
		return fmt.Errorf("%s: got %v (%T), want an *mpi.Error of class ErrCount", what, err, err)
	}
	return nil
}

// TestOverflowP2P: every point-to-point call refuses counts whose bytes
// overflow with ErrCount, before it communicates (the peer is ProcNull,
// which would otherwise succeed at once), and the communicator still works.
func TestOverflowP2P(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		buf := make([]byte, 64)
		pn := mpi.ProcNull
		for _, h := range hostileCounts {
			n, dt := h.count, h.dt
			calls := []struct {
				name string
				f    func() error
			}{
				{"Send", func() error { return c.Send(buf, n, dt, pn, 0) }},
				{"Ssend", func() error { return c.Ssend(buf, n, dt, pn, 0) }},
				{"Rsend", func() error { return c.Rsend(buf, n, dt, pn, 0) }},
				{"Bsend", func() error { return c.Bsend(buf, n, dt, pn, 0) }},
				{"Recv", func() error { _, err := c.Recv(buf, n, dt, pn, 0); return err }},
				{"Isend", func() error { _, err := c.Isend(buf, n, dt, pn, 0); return err }},
				{"Issend", func() error { _, err := c.Issend(buf, n, dt, pn, 0); return err }},
				{"Irecv", func() error { _, err := c.Irecv(buf, n, dt, pn, 0); return err }},
				{"SendInit", func() error { _, err := c.SendInit(buf, n, dt, pn, 0); return err }},
				{"RecvInit", func() error { _, err := c.RecvInit(buf, n, dt, pn, 0); return err }},
				{"Sendrecv send", func() error { _, err := c.Sendrecv(buf, n, dt, pn, 0, buf, 1, dt, pn, 0); return err }},
				{"Sendrecv recv", func() error { _, err := c.Sendrecv(buf, 1, dt, pn, 0, buf, n, dt, pn, 0); return err }},
				{"SendrecvReplace", func() error { _, err := c.SendrecvReplace(buf, n, dt, pn, 0, pn, 0); return err }},
			}
			for _, call := range calls {
				if err := wantCount(fmt.Sprintf("rank %d: %s of %s", c.Rank(), call.name, h.name), call.f()); err != nil {
					return err
				}
			}
		}
		// A derived datatype whose size times the count fits but whose
		// extent times the count does not.
		wide, err := mpi.NewResized(mpi.Int64, 0, 1<<40)
		if err != nil {
			return err
		}
		if err := wide.Commit(); err != nil {
			return err
		}
		if err := wantCount("Send of a wide type", c.Send(buf, 1<<24, wide, pn, 0)); err != nil {
			return err
		}
		// The communicator is unharmed.
		v, err := mpi.Bcast(c, c.Rank()+7, 0)
		return check(c, err == nil && v == 7, "Bcast after: %v, %v", v, err)
	})
}

// TestOverflowCollectives: the low-level collectives refuse counts and
// displacements whose bytes overflow with ErrCount on every rank, and the
// communicator still works.
func TestOverflowCollectives(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		sb, rb := make([]byte, 64), make([]byte, 64)
		i64, sum := mpi.Int64, mpi.OpSum
		wrap := 1<<61 + 1 // ×8 wraps to 8 bytes
		half := math.MaxInt/2 + 1
		calls := []struct {
			name string
			f    func() error
		}{
			{"Bcast", func() error { return c.Bcast(sb, wrap, i64, 0) }},
			{"Reduce", func() error { return c.Reduce(sb, rb, wrap, i64, sum, 0) }},
			{"Allreduce", func() error { return c.Allreduce(sb, rb, wrap, i64, sum) }},
			{"Scan", func() error { return c.Scan(sb, rb, wrap, i64, sum) }},
			{"Exscan", func() error { return c.Exscan(sb, rb, wrap, i64, sum) }},
			{"ReduceScatterBlock", func() error { return c.ReduceScatterBlock(sb, rb, wrap, i64, sum) }},
			{"ReduceScatter", func() error { return c.ReduceScatter(sb, rb, []int{wrap, wrap}, i64, sum) }},
			{"ReduceScatter sum", func() error { return c.ReduceScatter(sb, rb, []int{half, half}, mpi.Byte, mpi.OpBor) }},
			{"Gather", func() error { return c.Gather(sb, wrap, i64, rb, wrap, i64, 0) }},
			{"Gatherv", func() error { return c.Gatherv(sb, wrap, i64, rb, []int{wrap, 1}, nil, i64, 0) }},
			{"Scatter", func() error { return c.Scatter(sb, wrap, i64, rb, wrap, i64, 0) }},
			{"Scatterv", func() error { return c.Scatterv(sb, []int{1, 1}, []int{0, wrap}, i64, rb, wrap, i64, 0) }},
			{"Allgather", func() error { return c.Allgather(sb, wrap, i64, rb, wrap, i64) }},
			{"Allgatherv displ", func() error { return c.Allgatherv(sb, 1, i64, rb, []int{1, 1}, []int{0, wrap}, i64) }},
			{"Allgatherv end", func() error { return c.Allgatherv(sb, 1, i64, rb, []int{1, 1}, []int{0, math.MaxInt / 8}, i64) }},
			{"Alltoall", func() error { return c.Alltoall(sb, wrap, i64, rb, wrap, i64) }},
			{"Alltoall ranks", func() error { return c.Alltoall(sb, half, mpi.Byte, rb, half, mpi.Byte) }},
			{"Alltoallv", func() error {
				return c.Alltoallv(sb, []int{wrap, 1}, []int{0, 0}, i64, rb, []int{wrap, 1}, []int{0, 0}, i64)
			}},
			{"Alltoallw", func() error {
				ts := []*mpi.Datatype{i64, i64}
				return c.Alltoallw(sb, []int{1, 1}, []int{0, math.MaxInt - 4}, ts, rb, []int{1, 1}, []int{0, math.MaxInt - 4}, ts)
			}},
			{"ReduceScatter typed", func() error {
				_, err := mpi.ReduceScatter(c, []int{1, 2}, []int{half, half}, mpi.Sum[int]())
				return err
			}},
		}
		for _, call := range calls {
			if err := wantCount(fmt.Sprintf("rank %d: %s", c.Rank(), call.name), call.f()); err != nil {
				return err
			}
		}
		v, err := mpi.Allreduce(c, 1, mpi.Sum[int]())
		return check(c, err == nil && v == 2, "Allreduce after: %v, %v", v, err)
	})
}

// TestOverflowNeighbor: displacements of the neighbourhood collectives
// whose bytes overflow are refused with ErrCount.
func TestOverflowNeighbor(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		c, err := world.CartCreate([]int{2}, []bool{true}, false)
		if err != nil {
			return err
		}
		sb, rb := make([]byte, 64), make([]byte, 64)
		i64 := mpi.Int64
		wrap := 1<<61 + 1
		calls := []struct {
			name string
			f    func() error
		}{
			{"NeighborAllgather", func() error { return c.NeighborAllgather(sb, 1, i64, rb, wrap, i64) }},
			{"NeighborAllgatherv", func() error { return c.NeighborAllgatherv(sb, 1, i64, rb, []int{1, 1}, []int{0, wrap}, i64) }},
			{"NeighborAlltoall", func() error { return c.NeighborAlltoall(sb, wrap, i64, rb, wrap, i64) }},
			{"NeighborAlltoallv", func() error {
				return c.NeighborAlltoallv(sb, []int{1, 1}, []int{0, wrap}, i64, rb, []int{1, 1}, []int{0, wrap}, i64)
			}},
			{"NeighborAlltoallw", func() error {
				ts := []*mpi.Datatype{i64, i64}
				return c.NeighborAlltoallw(sb, []int{wrap, 1}, []int{0, 8}, ts, rb, []int{wrap, 1}, []int{0, 8}, ts)
			}},
		}
		for _, call := range calls {
			if err := wantCount(fmt.Sprintf("rank %d: %s", c.Rank(), call.name), call.f()); err != nil {
				return err
			}
		}
		return c.Free()
	})
}

// TestOverflowLocal: the calls that do not communicate (packing, local
// reduction, datatype constructors) refuse overflowing counts with an
// *mpi.Error instead of panicking or building a type of the wrong size.
func TestOverflowLocal(t *testing.T) {
	in, out := make([]byte, 64), make([]byte, 64)
	for _, h := range hostileCounts {
		n, dt := h.count, h.dt
		calls := []struct {
			name string
			f    func() error
		}{
			{"PackSize", func() error { _, err := mpi.PackSize(n, dt); return err }},
			{"Pack", func() error { _, err := mpi.Pack(in, n, dt, out, 0); return err }},
			{"Unpack", func() error { _, err := mpi.Unpack(in, 0, out, n, dt); return err }},
			{"PackExternalSize", func() error { _, err := mpi.PackExternalSize(n, dt); return err }},
			{"PackExternal", func() error { _, err := mpi.PackExternal(in, n, dt, out, 0); return err }},
			{"UnpackExternal", func() error { _, err := mpi.UnpackExternal(in, 0, out, n, dt); return err }},
			{"ReduceLocal", func() error { return mpi.ReduceLocal(in, out, n, dt, mpi.OpSum) }},
		}
		for _, call := range calls {
			t.Run(call.name+"/"+h.name, func(t *testing.T) {
				if err := wantCount(call.name, call.f()); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	// Pack at a position near MaxInt: the end overflows.
	if _, err := mpi.Pack(in, 1, mpi.Int64, out, math.MaxInt-2); !errors.Is(err, mpi.ErrBuffer) {
		t.Errorf("Pack at MaxInt-2: %v, want ErrBuffer", err)
	}
	cons := []struct {
		name string
		f    func() (*mpi.Datatype, error)
	}{
		{"Contiguous", func() (*mpi.Datatype, error) { return mpi.NewContiguous(1<<62, mpi.Int64) }},
		{"Contiguous wrap", func() (*mpi.Datatype, error) { return mpi.NewContiguous(1<<61+1, mpi.Int64) }},
		{"Vector", func() (*mpi.Datatype, error) { return mpi.NewVector(2, 1<<61, 1<<61, mpi.Int64) }},
		{"Hvector", func() (*mpi.Datatype, error) { return mpi.NewHvector(3, 1, math.MaxInt/2, mpi.Int64) }},
		{"Indexed", func() (*mpi.Datatype, error) { return mpi.NewIndexed([]int{1}, []int{1 << 61}, mpi.Int64) }},
		{"Hindexed", func() (*mpi.Datatype, error) { return mpi.NewHindexed([]int{1 << 60, 1 << 60}, []int{0, 0}, mpi.Int64) }},
		{"IndexedBlock", func() (*mpi.Datatype, error) { return mpi.NewIndexedBlock(1<<61, []int{0, 1}, mpi.Int64) }},
		{"HindexedBlock", func() (*mpi.Datatype, error) { return mpi.NewHindexedBlock(1, []int{math.MaxInt - 4}, mpi.Int64) }},
		{"Struct", func() (*mpi.Datatype, error) {
			return mpi.NewStruct([]int{1, 1 << 61}, []int{0, 8}, []*mpi.Datatype{mpi.Int64, mpi.Int64})
		}},
		{"Resized", func() (*mpi.Datatype, error) { return mpi.NewResized(mpi.Int64, math.MaxInt, 8) }},
		{"Subarray", func() (*mpi.Datatype, error) {
			return mpi.NewSubarray([]int{4}, []int{1}, []int{math.MaxInt}, mpi.OrderC, mpi.Int64)
		}},
		{"Darray", func() (*mpi.Datatype, error) {
			return mpi.NewDarray(2, 1, []int{math.MaxInt}, []mpi.Distribution{mpi.DistributeBlock}, []int{math.MaxInt/2 + 1}, []int{2}, mpi.OrderC, mpi.Int64)
		}},
	}
	for _, tc := range cons {
		t.Run(tc.name, func(t *testing.T) {
			dt, err := tc.f()
			var e *mpi.Error
			if !errors.As(err, &e) || !errors.Is(err, mpi.ErrArg) {
				t.Fatalf("got %v (size %d), %v; want an *mpi.Error of class ErrArg", dt, dt.Size(), err)
			}
		})
	}
}

// TestOverflowWindowSize: NewWindow refuses, with ErrCount on every rank
// and before it allocates anything, a size whose bytes wrap (the shared
// segment used to be sized by the wrapped product, then make panicked and
// left the segment's file behind) or exceed what a process can address
// (make panicked with "len out of range", or the runtime died of
// out-of-memory). The communicator and a normal window still work after.
func TestOverflowWindowSize(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		for _, tc := range []struct {
			name string
			make func() error
		}{
			{"float64 1<<60", func() error { _, err := mpi.NewWindow[float64](c, 1<<60); return err }},
			{"float64 1<<45 (2^48 bytes)", func() error { _, err := mpi.NewWindow[float64](c, 1<<45); return err }},
			{"[1<<20]byte 1<<45 (wraps to 0)", func() error { _, err := mpi.NewWindow[[1 << 20]byte](c, 1<<45); return err }},
			{"MaxInt int8", func() error { _, err := mpi.NewWindow[int8](c, math.MaxInt); return err }},
		} {
			if err := wantCount("NewWindow "+tc.name, tc.make()); err != nil {
				return err
			}
		}
		// One rank asks too much: it gets ErrCount, the others ErrArg,
		// and nobody allocates.
		n := 4
		if c.Rank() == 1 {
			n = 1 << 60
		}
		_, err := mpi.NewWindow[float64](c, n)
		if c.Rank() == 1 {
			if err := wantCount("NewWindow on one rank", err); err != nil {
				return err
			}
		} else if !errors.Is(err, mpi.ErrArg) {
			return check(c, false, "NewWindow with a bad size on rank 1: %v, want ErrArg", err)
		}
		w, err := mpi.NewWindow[float64](c, 4)
		if err != nil {
			return err
		}
		if err := check(c, len(w.Local()) == 4, "a normal window after: %d elements", len(w.Local())); err != nil {
			return err
		}
		return w.Free()
	})
}

// TestOverflowPaddedColl: a collective on a padded datatype (a struct of
// DatatypeOf, which collectives move as whole extents) with a count whose
// bytes overflow: the product used to wrap and slice the buffer with a
// negative or small length (a panic, or a silent short operation).
func TestOverflowPaddedColl(t *testing.T) {
	type pair struct {
		A int8
		B int64
	}
	dt, err := mpi.DatatypeOf[pair]()
	if err != nil {
		t.Fatal(err)
	}
	err = mpi.Run(2, func(c *mpi.Comm) error {
		buf := make([]byte, 64)
		for _, count := range []int{1 << 60, 1<<60 + 1, math.MaxInt / 8} {
			if err := wantCount(fmt.Sprintf("Bcast of %d pairs", count), c.Bcast(buf, count, dt, 0)); err != nil {
				return err
			}
		}
		return mpi.Barrier(c)
	})
	if err != nil {
		t.Fatal(err)
	}
}
