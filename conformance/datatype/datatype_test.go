package datatype_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

func commit(dt *mpi.Datatype, err error) (*mpi.Datatype, error) {
	if err != nil {
		return nil, err
	}
	return dt, dt.Commit()
}

// Regression (issue 14): the pair types count their data, not their
// padding: MPI_FLOAT_INT is 8 bytes, and one pair is 2 basic elements.
func TestPairTypeSizes(t *testing.T) {
	cases := []struct {
		dt   *mpi.Datatype
		size int
	}{
		{mpi.Float32Loc, 4 + 8}, // Go's int location is 8 bytes on 64-bit machines
		{mpi.Float64Loc, 8 + 8},
		{mpi.Int32Loc, 4 + 8},
		{mpi.Int64Loc, 8 + 8},
	}
	for _, tc := range cases {
		t.Run(tc.dt.Name(), func(t *testing.T) {
			if got := tc.dt.Size(); got != tc.size {
				t.Errorf("Size() = %d, want %d (data only)", got, tc.size)
			}
		})
	}
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		v := []mpi.ValueLoc[float32]{{Value: 1.5, Loc: 7}, {Value: 2.5, Loc: 9}}
		if c.Rank() == 0 {
			return c.Send(mpi.AsBytes(v), 2, mpi.Float32Loc, 1, 0)
		}
		got := make([]mpi.ValueLoc[float32], 2)
		st, err := c.Recv(mpi.AsBytes(got), 2, mpi.Float32Loc, 0, 0)
		if err != nil {
			return err
		}
		if got[1] != v[1] || st.GetCount(mpi.Float32Loc) != 2 || st.GetElements(mpi.Float32Loc) != 4 {
			return fmt.Errorf("pairs %v, count %d, elements %d; want 2 and 4", got, st.GetCount(mpi.Float32Loc), st.GetElements(mpi.Float32Loc))
		}
		return nil
	})
}

// Size, extent, true extent and bounds of the constructors (MPICH
// datatype/typelb, contents, tresized).
func TestExtents(t *testing.T) {
	vec, err := commit(mpi.NewVector(3, 2, 4, mpi.Int32))
	if err != nil {
		t.Fatal(err)
	}
	if lb, ext := vec.Extent(); lb != 0 || ext != (2*4+2)*4 || vec.Size() != 24 {
		t.Errorf("vector(3,2,4,int32): lb %d extent %d size %d", lb, ext, vec.Size())
	}
	res, err := commit(mpi.NewResized(vec, 0, 64))
	if err != nil {
		t.Fatal(err)
	}
	if _, ext := res.Extent(); ext != 64 || res.Size() != 24 {
		t.Errorf("resized: extent %d size %d", ext, res.Size())
	}
	if tlb, text := res.TrueExtent(); tlb != 0 || text != 40 {
		t.Errorf("resized: true extent %d %d", tlb, text)
	}
	st, err := commit(mpi.NewStruct([]int{1, 2}, []int{4, 16}, []*mpi.Datatype{mpi.Int32, mpi.Float64}))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 20 || st.LB() != 4 {
		t.Errorf("struct: size %d lb %d", st.Size(), st.LB())
	}
	comb, ni, na, nt := st.Envelope()
	if comb != mpi.CombinerStruct || ni != 3 || na != 2 || nt != 2 {
		t.Errorf("struct envelope: %v %d %d %d", comb, ni, na, nt)
	}
	if _, err := mpi.NewContiguous(-1, mpi.Int32); !errors.Is(err, mpi.ErrArg) && !errors.Is(err, mpi.ErrCount) {
		t.Errorf("negative count: %v", err)
	}
}

// Pack and Unpack follow the layout, and a message sent with one
// datatype is received with another of the same signature.
func TestPackAndSignature(t *testing.T) {
	vec, err := commit(mpi.NewVector(2, 1, 2, mpi.Int32))
	if err != nil {
		t.Fatal(err)
	}
	in := []int32{10, 11, 12, 13}
	size, err := mpi.PackSize(1, vec)
	if err != nil || size != 8 {
		t.Fatalf("PackSize: %d %v", size, err)
	}
	buf := make([]byte, size)
	pos, err := mpi.Pack(mpi.AsBytes(in), 1, vec, buf, 0)
	if err != nil || pos != 8 {
		t.Fatalf("Pack: %d %v", pos, err)
	}
	out := make([]int32, 4)
	if _, err := mpi.Unpack(buf, 0, mpi.AsBytes(out), 1, vec); err != nil || out[0] != 10 || out[2] != 12 || out[1] != 0 {
		t.Fatalf("Unpack: %v %v", out, err)
	}
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			return c.Send(mpi.AsBytes(in), 1, vec, 1, 0)
		}
		got := make([]int32, 2)
		st, err := c.Recv(mpi.AsBytes(got), 2, mpi.Int32, 0, 0)
		if err != nil || got[0] != 10 || got[1] != 12 || st.GetElements(mpi.Int32) != 2 {
			return fmt.Errorf("vector as two int32: %v %+v %v", got, st, err)
		}
		return nil
	})
}

// Subarray and indexed types send exactly their elements (MPICH
// datatype/subarray, indexed-misc).
func TestSubarrayIndexed(t *testing.T) {
	sub, err := commit(mpi.NewSubarray([]int{4, 4}, []int{2, 2}, []int{1, 1}, mpi.OrderC, mpi.Int32))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := commit(mpi.NewIndexed([]int{1, 2}, []int{0, 3}, mpi.Int32))
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			m := make([]int32, 16)
			for i := range m {
				m[i] = int32(i)
			}
			if err := c.Send(mpi.AsBytes(m), 1, sub, 1, 0); err != nil {
				return err
			}
			return c.Send(mpi.AsBytes([]int32{7, 0, 0, 8, 9}), 1, idx, 1, 1)
		}
		got := make([]int32, 4)
		if _, err := c.Recv(mpi.AsBytes(got), 4, mpi.Int32, 0, 0); err != nil {
			return err
		}
		if fmt.Sprint(got) != "[5 6 9 10]" {
			return fmt.Errorf("subarray: %v", got)
		}
		into := make([]int32, 5)
		if _, err := c.Recv(mpi.AsBytes(into), 1, idx, 0, 1); err != nil {
			return err
		}
		if fmt.Sprint(into) != "[7 0 0 8 9]" {
			return fmt.Errorf("indexed: %v", into)
		}
		return nil
	})
}

// An uncommitted or freed datatype is refused with ErrType.
func TestUncommitted(t *testing.T) {
	conformance.Run(t, 1, func(c *mpi.Comm) error {
		v, err := mpi.NewContiguous(2, mpi.Int32)
		if err != nil {
			return err
		}
		if err := c.Send(make([]byte, 8), 1, v, 0, 0); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("uncommitted: %v", err)
		}
		if err := v.Commit(); err != nil {
			return err
		}
		if err := v.Free(); err != nil {
			return err
		}
		if err := c.Send(make([]byte, 8), 1, v, 0, 0); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("freed: %v", err)
		}
		return nil
	})
}
