package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// C's long double takes 16 bytes aligned to 16: a datatype of C's
// struct { char tag; long double x; } spans 32 bytes, as the C compiler
// lays it out, so arrays of such structs written by C code are described
// right. mpigo moves long doubles as data; C programs on the standard ABI
// also reduce them (MPI_SUM on MPI_LONG_DOUBLE runs in C).
func ExampleCLongDouble() {
	st, err := mpi.NewStruct([]int{1, 1}, []int{0, 16}, []*mpi.Datatype{mpi.Int8, mpi.CLongDouble})
	if err != nil {
		panic(err)
	}
	lb, extent := st.Extent()
	fmt.Println("long double:", mpi.CLongDouble.Size(), "bytes")
	fmt.Println("struct:", st.Size(), "bytes of data, extent", extent, "from", lb)
	// Output:
	// long double: 16 bytes
	// struct: 17 bytes of data, extent 32 from 0
}
