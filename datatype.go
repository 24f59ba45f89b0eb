package mpi

import (
	"github.com/mpigo/mpi/internal/datatype"
)

// Datatype describes the elements of a low-level buffer (MPI_Datatype).
// The predefined datatypes correspond to Go's basic types; a buffer of n
// elements of a datatype of size s is n*s bytes in the machine's layout.
// Messages sent with a predefined datatype carry the same type signature as
// the typed API's, so a c.Send(buf, n, mpi.Float64, ...) can be received by
// mpi.Recv[[]float64] and vice versa.
type Datatype struct {
	name string
	size int
	sig  uint64
	ops  map[string]func(inout, in []byte) // predefined reductions defined on it
}

// Name returns the datatype's name.
func (d *Datatype) Name() string { return d.name }

// Size returns the size of one element in bytes (MPI_Type_size).
func (d *Datatype) Size() int { return d.size }

// String returns the name.
func (d *Datatype) String() string { return d.name }

func predefined[T any](name string) *Datatype {
	info := datatype.InfoFor[T]()
	return &Datatype{name: name, size: info.Size, sig: info.Sig}
}

// The predefined datatypes.
var (
	Byte       = &Datatype{name: "Byte", size: 1, ops: bitOps}                           // untyped bytes (MPI_BYTE): matches any type
	Packed     = &Datatype{name: "Packed", size: 1}                                      // packed data (MPI_PACKED)
	Bool       = withOps(predefined[bool]("Bool"), boolOps())                            // MPI_C_BOOL
	Int8       = withOps(predefined[int8]("Int8"), intOps[int8]())                       // MPI_INT8_T
	Int16      = withOps(predefined[int16]("Int16"), intOps[int16]())                    // MPI_INT16_T
	Int32      = withOps(predefined[int32]("Int32"), intOps[int32]())                    // MPI_INT32_T, MPI_INT
	Int64      = withOps(predefined[int64]("Int64"), intOps[int64]())                    // MPI_INT64_T, MPI_LONG
	Int        = withOps(predefined[int]("Int"), intOps[int]())                          // Go int
	Uint8      = withOps(predefined[uint8]("Uint8"), intOps[uint8]())                    // MPI_UINT8_T, MPI_UNSIGNED_CHAR
	Uint16     = withOps(predefined[uint16]("Uint16"), intOps[uint16]())                 // MPI_UINT16_T
	Uint32     = withOps(predefined[uint32]("Uint32"), intOps[uint32]())                 // MPI_UINT32_T, MPI_UNSIGNED
	Uint64     = withOps(predefined[uint64]("Uint64"), intOps[uint64]())                 // MPI_UINT64_T
	Uint       = withOps(predefined[uint]("Uint"), intOps[uint]())                       // Go uint
	Float32    = withOps(predefined[float32]("Float32"), floatOps[float32]())            // MPI_FLOAT
	Float64    = withOps(predefined[float64]("Float64"), floatOps[float64]())            // MPI_DOUBLE
	Complex64  = withOps(predefined[complex64]("Complex64"), complexOps[complex64]())    // MPI_C_FLOAT_COMPLEX
	Complex128 = withOps(predefined[complex128]("Complex128"), complexOps[complex128]()) // MPI_C_DOUBLE_COMPLEX

	// The pair types of MinLoc and MaxLoc: ValueLoc[T] with an int location.
	Float32Loc = withOps(predefined[ValueLoc[float32]]("Float32Loc"), locOps[float32]()) // MPI_FLOAT_INT
	Float64Loc = withOps(predefined[ValueLoc[float64]]("Float64Loc"), locOps[float64]()) // MPI_DOUBLE_INT
	Int32Loc   = withOps(predefined[ValueLoc[int32]]("Int32Loc"), locOps[int32]())       // MPI_2INT
	Int64Loc   = withOps(predefined[ValueLoc[int64]]("Int64Loc"), locOps[int64]())       // MPI_LONG_INT
	IntLoc     = withOps(predefined[ValueLoc[int]]("IntLoc"), locOps[int]())             // Go int with location
)

// bitOps are the bitwise operations, which MPI also defines on MPI_BYTE.
var bitOps = kernels{"band": kernel(Band[uint8]().vec), "bor": kernel(Bor[uint8]().vec), "bxor": kernel(Bxor[uint8]().vec)}

// AsBytes returns the memory of a slice of plain (pointer-free) values as
// bytes, without copying, for use with the low-level calls. E must not
// contain pointers, strings, slices, maps or interfaces.
func AsBytes[E any](s []E) []byte { return datatype.SliceBytes(s) }
