package mpi_test

import (
	"testing"
	"unsafe"

	"github.com/mpigo/mpi"
)

// cPairCase checks a C pair datatype's size and extent against C's layout
// and MinLoc/MaxLoc through ReduceLocal, ties going to the smaller
// location.
func cPairCase[T mpi.Ordered](t *testing.T, dt *mpi.Datatype, valueSize int) {
	t.Helper()
	var p mpi.CValueLoc[T]
	if got, want := dt.Size(), valueSize+4; got != want {
		t.Errorf("%s: size %d, want %d", dt, got, want)
	}
	if _, ext := dt.Extent(); ext != int(unsafe.Sizeof(p)) {
		t.Errorf("%s: extent %d, want %d", dt, ext, unsafe.Sizeof(p))
	}
	in := []mpi.CValueLoc[T]{{Value: 1, Loc: 7}, {Value: 5, Loc: 2}, {Value: 3, Loc: 1}}
	for _, c := range []struct {
		op   *mpi.ReduceOp
		want []mpi.CValueLoc[T]
	}{
		{mpi.OpMinLoc, []mpi.CValueLoc[T]{{Value: 1, Loc: 7}, {Value: 4, Loc: 9}, {Value: 3, Loc: 0}}},
		{mpi.OpMaxLoc, []mpi.CValueLoc[T]{{Value: 2, Loc: 3}, {Value: 5, Loc: 2}, {Value: 3, Loc: 0}}},
	} {
		inout := []mpi.CValueLoc[T]{{Value: 2, Loc: 3}, {Value: 4, Loc: 9}, {Value: 3, Loc: 0}}
		if err := mpi.ReduceLocal(mpi.AsBytes(in), mpi.AsBytes(inout), len(in), dt, c.op); err != nil {
			t.Fatalf("%s %s: %v", dt, c.op.Name(), err)
		}
		for i := range inout {
			if inout[i] != c.want[i] {
				t.Errorf("%s %s: [%d] = %+v, want %+v", dt, c.op.Name(), i, inout[i], c.want[i])
			}
		}
	}
	if err := mpi.ReduceLocal(mpi.AsBytes(in), mpi.AsBytes(in), len(in), dt, mpi.OpSum); err == nil {
		t.Errorf("%s: OpSum accepted on a pair type", dt)
	}
}

func TestCPairTypes(t *testing.T) {
	cPairCase[float32](t, mpi.CFloatInt, 4)
	cPairCase[float64](t, mpi.CDoubleInt, 8)
	cPairCase[int64](t, mpi.CLongInt, 8)
	cPairCase[int32](t, mpi.C2Int, 4)
	cPairCase[int16](t, mpi.CShortInt, 2)
}
