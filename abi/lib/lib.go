//go:build cgo

// Command lib is libmpi_abi.so.1, mpigo behind the MPI-5.0 standard ABI:
// C (and C++, Python through mpi4py, Julia through MPI.jl) programs built
// against abi/include/mpi.h run on mpigo. Build it with
//
//	go build -buildmode=c-shared -o libmpi_abi.so.1 ./abi/lib
//
// or let `mpigo cc` build and cache it (docs/abi.md). Every function of the
// ABI is exported: zexports.go (generated from abi/spec) exports each
// function's body from Go, recovering any panic; zshim.c defines the PMPI_
// names over them and the MPI_ names as weak aliases, so that profiling
// libraries can interpose. The implemented functions (impl*.go) map onto
// mpigo's low-level API; the others return MPI_ERR_UNSUPPORTED_OPERATION
// through the error handler.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include <stdint.h>
void mpigo_call_user_function(void *fn, void *in, void *inout, int len, uintptr_t dt);
*/
import "C"

// main is never called: the package is built as a shared library.
func main() {}
