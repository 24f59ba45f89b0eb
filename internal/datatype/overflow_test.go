//go:build amd64 || arm64 || ppc64 || ppc64le || s390x || riscv64 || loong64 || mips64 || mips64le || wasm

// Counts here overflow 64-bit ints: the file needs a 64-bit int.

package datatype

import (
	"errors"
	"math"
	"testing"
)

// TestConstructorOverflow: counts, block lengths, strides and
// displacements whose products or sums do not fit in an int64 fail with
// ErrType instead of wrapping into a small (or empty) type, and counts
// too large to enumerate fail quickly instead of looping.
func TestConstructorOverflow(t *testing.T) {
	i64 := NewBasic(BasicInt64)
	big, err := NewContiguous(1<<40, i64)
	if err != nil {
		t.Fatalf("contiguous 1<<40: %v", err)
	}
	cases := []struct {
		name string
		f    func() (*Type, error)
	}{
		{"contiguous 1<<62", func() (*Type, error) { return NewContiguous(1<<62, i64) }},
		{"contiguous 1<<61+1", func() (*Type, error) { return NewContiguous(1<<61+1, i64) }},
		{"contiguous MaxInt/4", func() (*Type, error) { return NewContiguous(math.MaxInt/4, i64) }},
		{"contiguous of big", func() (*Type, error) { return NewContiguous(1<<30, big) }},
		{"vector count", func() (*Type, error) { return NewVector(1<<62, 1, 1, i64) }},
		{"vector blocklen", func() (*Type, error) { return NewVector(2, 1<<62, 1<<62, i64) }},
		{"vector stride", func() (*Type, error) { return NewVector(2, 1, 1<<61, i64) }},
		{"vector runs", func() (*Type, error) { return NewVector(1<<40, 1, 2, i64) }},
		{"hvector stride", func() (*Type, error) { return NewHvector(3, 1, math.MaxInt64/2, i64) }},
		{"hvector negative stride", func() (*Type, error) { return NewHvector(3, 1, math.MinInt64/2, i64) }},
		{"indexed displ", func() (*Type, error) { return NewIndexed([]int{1}, []int{1 << 61}, i64) }},
		{"indexed blocklen", func() (*Type, error) { return NewIndexed([]int{1 << 61}, []int{0}, i64) }},
		{"hindexed displ", func() (*Type, error) { return NewHindexed([]int{1}, []int64{math.MaxInt64 - 4}, i64) }},
		{"hindexed lengths", func() (*Type, error) { return NewHindexed([]int{1 << 60, 1 << 60}, []int64{0, 0}, i64) }},
		{"indexed block", func() (*Type, error) { return NewIndexedBlock(1<<61, []int{0, 1}, i64) }},
		{"hindexed block", func() (*Type, error) { return NewHindexedBlock(1, []int64{math.MinInt64}, i64) }},
		{"struct", func() (*Type, error) {
			return NewStruct([]int{1, 1 << 61}, []int64{0, 8}, []*Type{i64, i64})
		}},
		{"struct of big", func() (*Type, error) { return NewStruct([]int{1 << 24}, []int64{0}, []*Type{big}) }},
		{"resized", func() (*Type, error) { return NewResized(i64, math.MaxInt64, 8) }},
		{"contiguous of resized", func() (*Type, error) {
			r, err := NewResized(i64, 0, math.MaxInt64/2)
			if err != nil {
				return nil, err
			}
			return NewContiguous(3, r)
		}},
		{"subarray start", func() (*Type, error) { return NewSubarray([]int{4}, []int{1}, []int{math.MaxInt}, OrderC, i64) }},
		{"subarray sizes", func() (*Type, error) {
			return NewSubarray([]int{1 << 40, 1 << 40}, []int{1, 1}, []int{0, 0}, OrderC, i64)
		}},
		{"darray grid", func() (*Type, error) {
			return NewDarray(4, 0, []int{4, 4}, []Distribution{DistributeBlock, DistributeBlock}, []int{-1, -1}, []int{1 << 32, 1 << 32}, OrderC, i64)
		}},
		{"darray block", func() (*Type, error) {
			return NewDarray(2, 1, []int{math.MaxInt}, []Distribution{DistributeBlock}, []int{math.MaxInt/2 + 1}, []int{2}, OrderC, i64)
		}},
		{"darray none", func() (*Type, error) {
			return NewDarray(1, 0, []int{1 << 40, 1 << 40}, []Distribution{DistributeNone, DistributeNone}, []int{-1, -1}, []int{1, 1}, OrderC, i64)
		}},
		{"darray cyclic", func() (*Type, error) {
			return NewDarray(2, 1, []int{1 << 40}, []Distribution{DistributeCyclic}, []int{1}, []int{2}, OrderC, i64)
		}},
		{"darray cyclic block", func() (*Type, error) {
			return NewDarray(2, 1, []int{math.MaxInt}, []Distribution{DistributeCyclic}, []int{math.MaxInt}, []int{2}, OrderC, i64)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ty, err := tc.f()
			if !errors.Is(err, ErrType) {
				t.Fatalf("got %+v, %v; want ErrType", ty, err)
			}
		})
	}
}

// TestLargeButValid: counts that are large but whose type maps are small
// still build, with the right size, and without enumerating every block.
func TestLargeButValid(t *testing.T) {
	i64 := NewBasic(BasicInt64)
	cases := []struct {
		name string
		f    func() (*Type, error)
		size int64
	}{
		{"contiguous", func() (*Type, error) { return NewContiguous(1<<59, i64) }, 1 << 62},
		{"dense vector", func() (*Type, error) { return NewVector(1<<40, 2, 2, i64) }, 1 << 44},
		{"empty vector", func() (*Type, error) { return NewVector(1<<40, 0, 2, i64) }, 0},
		{"darray none", func() (*Type, error) {
			return NewDarray(1, 0, []int{1 << 40}, []Distribution{DistributeNone}, []int{-1}, []int{1}, OrderC, i64)
		}, 1 << 43},
		{"darray cyclic one process", func() (*Type, error) {
			return NewDarray(1, 0, []int{1 << 40}, []Distribution{DistributeCyclic}, []int{1}, []int{1}, OrderC, i64)
		}, 1 << 43},
		{"darray block", func() (*Type, error) {
			return NewDarray(2, 1, []int{1 << 40}, []Distribution{DistributeBlock}, []int{-1}, []int{2}, OrderC, i64)
		}, 1 << 42},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ty, err := tc.f()
			if err != nil {
				t.Fatal(err)
			}
			if ty.Size != tc.size {
				t.Fatalf("size %d, want %d", ty.Size, tc.size)
			}
		})
	}
	if _, _, ok := i64.SpanChecked(1 << 61); ok {
		t.Error("span of 1<<61 int64s fits")
	}
}
