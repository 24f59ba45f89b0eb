package mpi_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The pair types are struct datatypes over Go's layout of ValueLoc[T]: their
// size is the data (value and location), their extent Go's size of the pair.
func TestPairTypeLayout(t *testing.T) {
	intSize := int(unsafe.Sizeof(int(0)))
	cases := []struct {
		dt         *mpi.Datatype
		value, ext int
	}{
		{mpi.Float32Loc, 4, int(unsafe.Sizeof(mpi.ValueLoc[float32]{}))},
		{mpi.Float64Loc, 8, int(unsafe.Sizeof(mpi.ValueLoc[float64]{}))},
		{mpi.Int32Loc, 4, int(unsafe.Sizeof(mpi.ValueLoc[int32]{}))},
		{mpi.Int64Loc, 8, int(unsafe.Sizeof(mpi.ValueLoc[int64]{}))},
		{mpi.IntLoc, intSize, int(unsafe.Sizeof(mpi.ValueLoc[int]{}))},
	}
	for _, tc := range cases {
		if got := tc.dt.Size(); got != tc.value+intSize {
			t.Errorf("%s: Size %d, want %d", tc.dt, got, tc.value+intSize)
		}
		if lb, ext := tc.dt.Extent(); lb != 0 || ext != tc.ext {
			t.Errorf("%s: Extent %d %d, want 0 %d", tc.dt, lb, ext, tc.ext)
		}
		if !tc.dt.Committed() {
			t.Errorf("%s: not committed", tc.dt)
		}
		if err := tc.dt.Free(); err == nil {
			t.Errorf("%s: a predefined pair type could be freed", tc.dt)
		}
		if c, _, _, _ := tc.dt.Envelope(); c != mpi.CombinerNamed {
			t.Errorf("%s: combiner %v, want CombinerNamed", tc.dt, c)
		}
	}
}

// A point-to-point message of pair types carries the data without the
// padding: GetElements counts two basic elements per pair.
func TestPairTypePointToPoint(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		send := []mpi.ValueLoc[float32]{{1.5, 10}, {2.5, 20}, {3.5, 30}}
		if c.Rank() == 0 {
			return c.Send(mpi.AsBytes(send), 3, mpi.Float32Loc, 1, 7)
		}
		got := make([]mpi.ValueLoc[float32], 4)
		st, err := c.Recv(mpi.AsBytes(got), 4, mpi.Float32Loc, 0, 7)
		if err != nil {
			return err
		}
		if st.GetCount(mpi.Float32Loc) != 3 || st.GetElements(mpi.Float32Loc) != 6 || st.Bytes() != 3*mpi.Float32Loc.Size() {
			return check(c, false, "count %d, elements %d, bytes %d", st.GetCount(mpi.Float32Loc), st.GetElements(mpi.Float32Loc), st.Bytes())
		}
		return check(c, got[0] == send[0] && got[1] == send[1] && got[2] == send[2] && got[3] == mpi.ValueLoc[float32]{}, "received %v", got)
	})
}

// pairCase runs MinLoc and MaxLoc over one pair type through every
// reduction of the low-level layer.
func pairCase[T mpi.Ordered](c *mpi.Comm, dt *mpi.Datatype) error {
	n, me := c.Size(), c.Rank()
	const count = 3
	// Element i of rank r: value (r+i)%n, so the minimum 0 is at rank
	// (n-i)%n and the maximum n-1 at rank (2n-1-i)%n; element 2 ties
	// everywhere, so the smaller location (0) wins.
	in := make([]mpi.ValueLoc[T], count)
	for i := range in {
		in[i] = mpi.ValueLoc[T]{Value: T((me + i) % n), Loc: me}
	}
	in[2].Value = 5
	wantMin := func(i int) mpi.ValueLoc[T] {
		if i == 2 {
			return mpi.ValueLoc[T]{Value: 5, Loc: 0}
		}
		return mpi.ValueLoc[T]{Value: 0, Loc: (n - i%n) % n}
	}
	wantMax := func(i int) mpi.ValueLoc[T] {
		if i == 2 {
			return mpi.ValueLoc[T]{Value: 5, Loc: 0}
		}
		return mpi.ValueLoc[T]{Value: T(n - 1), Loc: (2*n - 1 - i) % n}
	}
	out := make([]mpi.ValueLoc[T], count)
	same := func(what string, want func(int) mpi.ValueLoc[T], got []mpi.ValueLoc[T]) error {
		for i := range got {
			if got[i] != want(i) {
				return check(c, false, "%s on %s: [%d] = %+v, want %+v", what, dt, i, got[i], want(i))
			}
		}
		return nil
	}
	if err := c.Allreduce(mpi.AsBytes(in), mpi.AsBytes(out), count, dt, mpi.OpMinLoc); err != nil {
		return err
	}
	if err := same("Allreduce MinLoc", wantMin, out); err != nil {
		return err
	}
	copy(out, in)
	if err := c.Allreduce(mpi.InPlace, mpi.AsBytes(out), count, dt, mpi.OpMaxLoc); err != nil {
		return err
	}
	if err := same("Allreduce MaxLoc in place", wantMax, out); err != nil {
		return err
	}
	clear(out)
	if err := c.Reduce(mpi.AsBytes(in), mpi.AsBytes(out), count, dt, mpi.OpMaxLoc, n-1); err != nil {
		return err
	}
	if me == n-1 {
		if err := same("Reduce MaxLoc", wantMax, out); err != nil {
			return err
		}
	}
	r, err := c.Iallreduce(mpi.AsBytes(in), mpi.AsBytes(out), count, dt, mpi.OpMinLoc)
	if err != nil {
		return err
	}
	if _, err := r.Wait(); err != nil {
		return err
	}
	if err := same("Iallreduce MinLoc", wantMin, out); err != nil {
		return err
	}
	// Scan: the minimum over ranks 0..me.
	if err := c.Scan(mpi.AsBytes(in[:1]), mpi.AsBytes(out[:1]), 1, dt, mpi.OpMinLoc); err != nil {
		return err
	}
	if want := (mpi.ValueLoc[T]{Value: 0, Loc: 0}); out[0] != want {
		return check(c, false, "Scan MinLoc on %s: %+v, want %+v", dt, out[0], want)
	}
	// ReduceScatterBlock: one pair per rank, pair j of rank r has value
	// (r+j)%n; rank j gets the maximum of its pair.
	big := make([]mpi.ValueLoc[T], n)
	for j := range big {
		big[j] = mpi.ValueLoc[T]{Value: T((me + j) % n), Loc: me}
	}
	if err := c.ReduceScatterBlock(mpi.AsBytes(big), mpi.AsBytes(out[:1]), 1, dt, mpi.OpMaxLoc); err != nil {
		return err
	}
	if want := (mpi.ValueLoc[T]{Value: T(n - 1), Loc: (2*n - 1 - me) % n}); out[0] != want {
		return check(c, false, "ReduceScatterBlock MaxLoc on %s: %+v, want %+v", dt, out[0], want)
	}
	// Moving pairs: Bcast and Allgather keep whole pairs.
	b := []mpi.ValueLoc[T]{{Value: T(me + 1), Loc: me}}
	if err := c.Bcast(mpi.AsBytes(b), 1, dt, 0); err != nil {
		return err
	}
	if b[0] != (mpi.ValueLoc[T]{Value: 1, Loc: 0}) {
		return check(c, false, "Bcast of %s: %+v", dt, b[0])
	}
	all := make([]mpi.ValueLoc[T], n)
	if err := c.Allgather(mpi.AsBytes(in[:1]), 1, dt, mpi.AsBytes(all), 1, dt); err != nil {
		return err
	}
	for r := range all {
		if all[r] != (mpi.ValueLoc[T]{Value: T(r % n), Loc: r}) {
			return check(c, false, "Allgather of %s: %+v", dt, all)
		}
	}
	// The typed layer agrees.
	typed, err := mpi.AllreduceSlice(c, in, mpi.MinLoc[T]())
	if err != nil {
		return err
	}
	return same("typed AllreduceSlice MinLoc", wantMin, typed)
}

func TestPairTypeReductions(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		return errors.Join(
			pairCase[float32](c, mpi.Float32Loc),
			pairCase[float64](c, mpi.Float64Loc),
			pairCase[int32](c, mpi.Int32Loc),
			pairCase[int64](c, mpi.Int64Loc),
			pairCase[int](c, mpi.IntLoc),
		)
	})
}

// A datatype built from a pair type has holes that are not padding: the
// collectives stage it (pack the pairs, reduce them pair by pair, unpack),
// and leave its holes alone.
func TestPairTypeDerived(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		v, err := mpi.NewVector(2, 1, 2, mpi.Float32Loc)
		if err != nil {
			return err
		}
		if err := v.Commit(); err != nil {
			return err
		}
		me := c.Rank()
		buf := make([]mpi.ValueLoc[float32], 3)
		buf[0] = mpi.ValueLoc[float32]{Value: float32(10 - me), Loc: me} // min at rank 2
		buf[1] = mpi.ValueLoc[float32]{Value: -1, Loc: -7}               // a hole
		buf[2] = mpi.ValueLoc[float32]{Value: float32(me), Loc: me}      // min at rank 0
		if err := c.Allreduce(mpi.InPlace, mpi.AsBytes(buf), 1, v, mpi.OpMinLoc); err != nil {
			return err
		}
		want := []mpi.ValueLoc[float32]{{Value: 8, Loc: 2}, {Value: -1, Loc: -7}, {Value: 0, Loc: 0}}
		for i := range want {
			if buf[i] != want[i] {
				return fmt.Errorf("rank %d: got %v, want %v", me, buf, want)
			}
		}
		return nil
	})
}

type flag16 int16

// Land, Lor and Lxor on integers: nonzero is true, the result is 1 or 0.
func TestLogicalOpsOnIntegers(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		me := c.Rank()
		// Element 0: nonzero everywhere (3, 4, 5); element 1: nonzero on
		// rank 0 only (-2); element 2: zero everywhere.
		in := []int32{int32(me + 3), 0, 0}
		if me == 0 {
			in[1] = -2
		}
		for _, tc := range []struct {
			op   *mpi.ReduceOp
			want []int32
		}{
			{mpi.OpLand, []int32{1, 0, 0}},
			{mpi.OpLor, []int32{1, 1, 0}},
			{mpi.OpLxor, []int32{1, 1, 0}}, // three trues: odd
		} {
			out := make([]int32, 3)
			if err := c.Allreduce(mpi.AsBytes(in), mpi.AsBytes(out), 3, mpi.Int32, tc.op); err != nil {
				return err
			}
			if fmt.Sprint(out) != fmt.Sprint(tc.want) {
				return check(c, false, "%s on Int32: %v, want %v", tc.op.Name(), out, tc.want)
			}
		}
		// Every integer datatype has them.
		for _, dt := range []*mpi.Datatype{mpi.Int8, mpi.Int16, mpi.Int64, mpi.Int, mpi.Uint8, mpi.Uint16, mpi.Uint32, mpi.Uint64, mpi.Uint} {
			buf := make([]byte, dt.Size())
			lo := 0 // the least significant byte, in the machine's byte order
			if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
				lo = len(buf) - 1
			}
			buf[lo] = byte(me) // nonzero except on rank 0
			if err := c.Allreduce(mpi.InPlace, buf, 1, dt, mpi.OpLor); err != nil {
				return err
			}
			if buf[lo] != 1 {
				return check(c, false, "Lor on %s: %v", dt, buf)
			}
		}
		// Typed layer: scalars, slices, named integer types.
		and, err := mpi.Allreduce(c, me+1, mpi.Land[int]())
		if err != nil || and != 1 {
			return check(c, false, "typed Land[int]: %v %v", and, err)
		}
		xs, err := mpi.AllreduceSlice(c, []uint8{uint8(me % 2), 0, 200}, mpi.Lxor[uint8]())
		if err != nil || fmt.Sprint(xs) != "[1 0 1]" { // one odd rank of three; 200 thrice
			return check(c, false, "typed Lxor[uint8]: %v %v", xs, err)
		}
		f, err := mpi.Allreduce(c, flag16(me), mpi.Lor[flag16]())
		if err != nil || f != 1 {
			return check(c, false, "typed Lor[flag16]: %v %v", f, err)
		}
		s, err := mpi.Scan(c, int64(me), mpi.Land[int64]())
		want := int64(0) // rank 0 contributes 0
		return check(c, err == nil && s == want, "typed Scan Land[int64]: %v %v", s, err)
	})
}

// Pair types in intercommunicator reductions: each group gets the other
// group's result.
func TestPairTypeIntercomm(t *testing.T) {
	matrix(t, 3, func(world *mpi.Comm) error {
		s, err := makeInter(world, 1, false)
		if err != nil {
			return err
		}
		me := world.Rank()
		in := []mpi.ValueLoc[float32]{{Value: float32(me), Loc: me}, {Value: float32(-me), Loc: me}}
		out := make([]mpi.ValueLoc[float32], 2)
		if err := s.ic.Allreduce(mpi.AsBytes(in), mpi.AsBytes(out), 2, mpi.Float32Loc, mpi.OpMinLoc); err != nil {
			return err
		}
		want := []mpi.ValueLoc[float32]{{Value: 1, Loc: 1}, {Value: -2, Loc: 2}} // group A sees B = {1, 2}
		if !s.inA {
			want = []mpi.ValueLoc[float32]{{Value: 0, Loc: 0}, {Value: 0, Loc: 0}}
		}
		if out[0] != want[0] || out[1] != want[1] {
			return check(world, false, "intercomm Allreduce MinLoc: %v, want %v", out, want)
		}
		return s.free()
	})
}
