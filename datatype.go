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
	Byte       = &Datatype{name: "Byte", size: 1}     // untyped bytes (MPI_BYTE): matches any type
	Packed     = &Datatype{name: "Packed", size: 1}   // packed data (MPI_PACKED)
	Bool       = predefined[bool]("Bool")             // MPI_C_BOOL
	Int8       = predefined[int8]("Int8")             // MPI_INT8_T
	Int16      = predefined[int16]("Int16")           // MPI_INT16_T
	Int32      = predefined[int32]("Int32")           // MPI_INT32_T, MPI_INT
	Int64      = predefined[int64]("Int64")           // MPI_INT64_T, MPI_LONG
	Int        = predefined[int]("Int")               // Go int
	Uint8      = predefined[uint8]("Uint8")           // MPI_UINT8_T, MPI_UNSIGNED_CHAR
	Uint16     = predefined[uint16]("Uint16")         // MPI_UINT16_T
	Uint32     = predefined[uint32]("Uint32")         // MPI_UINT32_T, MPI_UNSIGNED
	Uint64     = predefined[uint64]("Uint64")         // MPI_UINT64_T
	Uint       = predefined[uint]("Uint")             // Go uint
	Float32    = predefined[float32]("Float32")       // MPI_FLOAT
	Float64    = predefined[float64]("Float64")       // MPI_DOUBLE
	Complex64  = predefined[complex64]("Complex64")   // MPI_C_FLOAT_COMPLEX
	Complex128 = predefined[complex128]("Complex128") // MPI_C_DOUBLE_COMPLEX
)

// AsBytes returns the memory of a slice of plain (pointer-free) values as
// bytes, without copying, for use with the low-level calls. E must not
// contain pointers, strings, slices, maps or interfaces.
func AsBytes[E any](s []E) []byte { return datatype.SliceBytes(s) }
