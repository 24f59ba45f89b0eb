package mpi

import "github.com/mpigo/mpi/internal/datatype"

// C's pair types of MPI_MINLOC and MPI_MAXLOC hold a C int (32 bits) as
// the location, where ValueLoc holds a Go int: their layouts differ, so
// C programs (the standard ABI, abi/capi) and Go code that shares memory
// with C use these.

// CValueLoc is a value and a 32-bit location laid out as C's struct
// { T value; int loc; }: the element type of the C pair datatypes
// CFloatInt, CDoubleInt, CLongInt, C2Int and CShortInt.
type CValueLoc[T Ordered] struct {
	Value T
	Loc   int32
}

// The C pair datatypes, for MinLoc and MaxLoc (OpMinLoc, OpMaxLoc) on
// memory laid out by C. CLongInt is C's long on a 64-bit platform.
var (
	CFloatInt  = cPairType[float32]("CFloatInt")  // MPI_FLOAT_INT
	CDoubleInt = cPairType[float64]("CDoubleInt") // MPI_DOUBLE_INT
	CLongInt   = cLongInt()                       // MPI_LONG_INT (64-bit long)
	C2Int      = cPairType[int32]("C2Int")        // MPI_2INT
	CShortInt  = cPairType[int16]("CShortInt")    // MPI_SHORT_INT
)

// cPairType is the predefined datatype of CValueLoc[T], made as pairType
// makes ValueLoc's: the data without the padding is its size, the Go (and
// C) size of the pair its extent.
func cPairType[T Ordered](name string) *Datatype {
	d, err := DatatypeOf[CValueLoc[T]]()
	if err != nil {
		panic(err) // CValueLoc of a number is always plain
	}
	d.name, d.derived, d.padded = name, false, true
	d.ops = kernels{"minloc": kernel(cMinLoc[T]), "maxloc": kernel(cMaxLoc[T])}
	return d
}

// cLongInt makes CLongInt: CValueLoc[int64] whose value is a C long
// (datatype.BasicCLong), so that external32 gives it 4 bytes as it gives
// CLong, and everything else the layout, signature and kernels of the
// int64 pair.
func cLongInt() *Datatype {
	d := cPairType[int64]("CLongInt")
	t, err := datatype.NewStruct([]int{1, 1}, []int64{0, 8}, []*datatype.Type{datatype.NewBasic(datatype.BasicCLong), datatype.NewBasic(datatype.BasicInt32)})
	if err == nil {
		t, err = datatype.NewResized(t, 0, d.t.Extent())
	}
	if err != nil {
		panic(err) // a fixed layout that always builds
	}
	d.t = t
	return d
}

// cMinLoc sets x[i] to the smaller of x[i] and y[i]; on equal values, the
// smaller location wins (MPI_MINLOC).
func cMinLoc[T Ordered](x, y []CValueLoc[T]) {
	y = y[:len(x)]
	for i := range x {
		if y[i].Value < x[i].Value || (y[i].Value == x[i].Value && y[i].Loc < x[i].Loc) {
			x[i] = y[i]
		}
	}
}

// cMaxLoc sets x[i] to the larger of x[i] and y[i]; on equal values, the
// smaller location wins (MPI_MAXLOC).
func cMaxLoc[T Ordered](x, y []CValueLoc[T]) {
	y = y[:len(x)]
	for i := range x {
		if y[i].Value > x[i].Value || (y[i].Value == x[i].Value && y[i].Loc < x[i].Loc) {
			x[i] = y[i]
		}
	}
}
