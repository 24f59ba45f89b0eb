package mpi

import (
	"slices"
	"testing"

	"github.com/mpigo/mpi/internal/datatype"
)

// TestDatarepFileType: a view in a representation that gives Int32 8
// bytes lays a datatype out as if it were built over an 8-byte kind with
// the same arguments (counts scale, byte displacements stay), for every
// constructor fileType replays.
func TestDatarepFileType(t *testing.T) {
	r := &dataRep{name: "t", extent: func(dt *Datatype) (int64, error) {
		if dt == Int32 {
			return 8, nil
		}
		return int64(dt.Size()), nil
	}}
	r.ext, r.errs = map[datatype.Basic]int64{}, map[datatype.Basic]error{}
	must := func(d *Datatype, err error) *Datatype {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name string
		make func(old *Datatype) (*Datatype, error)
	}{
		{"named", func(old *Datatype) (*Datatype, error) { return old, nil }},
		{"dup", func(old *Datatype) (*Datatype, error) { return old.Dup() }},
		{"contiguous", func(old *Datatype) (*Datatype, error) { return NewContiguous(3, old) }},
		{"vector", func(old *Datatype) (*Datatype, error) { return NewVector(3, 2, 5, old) }},
		{"hvector", func(old *Datatype) (*Datatype, error) { return NewHvector(3, 1, 40, old) }},
		{"indexed", func(old *Datatype) (*Datatype, error) { return NewIndexed([]int{2, 1}, []int{0, 5}, old) }},
		{"hindexed", func(old *Datatype) (*Datatype, error) { return NewHindexed([]int{2, 1}, []int{0, 48}, old) }},
		{"indexed-block", func(old *Datatype) (*Datatype, error) { return NewIndexedBlock(2, []int{1, 6}, old) }},
		{"hindexed-block", func(old *Datatype) (*Datatype, error) { return NewHindexedBlock(1, []int{8, 64}, old) }},
		{"struct", func(old *Datatype) (*Datatype, error) {
			return NewStruct([]int{1, 2}, []int{0, 16}, []*Datatype{old, old})
		}},
		{"resized", func(old *Datatype) (*Datatype, error) {
			v, err := NewVector(2, 1, 3, old)
			if err != nil {
				return nil, err
			}
			return NewResized(v, 0, 100)
		}},
		{"subarray", func(old *Datatype) (*Datatype, error) {
			return NewSubarray([]int{4, 6}, []int{2, 3}, []int{1, 2}, OrderC, old)
		}},
		{"darray", func(old *Datatype) (*Datatype, error) {
			return NewDarray(4, 3, []int{4, 6}, []Distribution{DistributeBlock, DistributeCyclic}, []int{DistributeDfltDarg, 2}, []int{2, 2}, OrderC, old)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := must(r.fileType(must(tc.make(Int32))))
			want := must(tc.make(Int64))
			if got.t.LB != want.t.LB || got.t.UB != want.t.UB || got.t.Size != want.t.Size || !slices.Equal(got.t.Segs, want.t.Segs) {
				t.Fatalf("file layout: lb %d ub %d size %d segs %v; want lb %d ub %d size %d segs %v",
					got.t.LB, got.t.UB, got.t.Size, got.t.Segs, want.t.LB, want.t.UB, want.t.Size, want.t.Segs)
			}
		})
	}
}
