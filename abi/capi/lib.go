//go:build cgo

// Package capi is mpigo behind the MPI-5.0 standard ABI: the C functions
// MPI_* and PMPI_* of abi/include/mpi.h, implemented over the mpi package.
// It is libmpi_abi.so.1 (abi/lib, a shared library built from this
// package), through which C (and C++, Python through mpi4py, Julia
// through MPI.jl) programs run on mpigo: build it with
//
//	go build -buildmode=c-shared -o libmpi_abi.so.1 ./abi/lib
//
// or let `mpigo cc` build and cache it (docs/abi.md). Imported by a Go
// program built with cgo, it gives C code linked into that program the
// program's own MPI: see Attach, CommToC and CommFromC. Every function of the
// ABI is exported: zexports.go (generated from abi/spec) exports each
// function's body from Go, recovering any panic; zshim.c defines the PMPI_
// names over them and the MPI_ names as weak aliases, so that profiling
// libraries can interpose. The implemented functions (impl*.go) map onto
// mpigo's low-level API; the others return MPI_ERR_UNSUPPORTED_OPERATION
// through the error handler.
package capi

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include <stdint.h>
void mpigo_call_user_function(void *fn, void *in, void *inout, int len, uintptr_t dt);
*/
import "C"
