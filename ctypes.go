package mpi

import (
	"hash/fnv"

	"github.com/mpigo/mpi/internal/datatype"
)

// CLongDouble is C's long double where it takes 16 bytes of memory (x87
// extended precision on amd64 and 386, IEEE binary128 on arm64 and most
// others), aligned to 16 bytes: the standard ABI's MPI_LONG_DOUBLE, for
// memory that C code laid out. Go has no such number, so mpigo moves it
// as data (sends, receives, the collectives that move data, Pack,
// derived datatypes built on it) but computes nothing on it: a
// predefined reduction on it is ErrOp here, and the standard ABI library
// does MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX on it in C. Its bytes are
// not converted between machines (external32 and mixed-architecture jobs
// carry them as they are).
var CLongDouble = &Datatype{name: "CLongDouble", size: 16, sig: cTypeSig("C long double"), t: datatype.NewBasic(datatype.BasicLongDouble), committed: true}

// cTypeSig is the type signature of a C type Go has none of: a hash of
// its name, never 0.
func cTypeSig(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("mpigo C type: " + name))
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1
}
