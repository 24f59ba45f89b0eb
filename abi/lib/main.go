//go:build cgo

// Command lib is libmpi_abi.so.1, mpigo behind the MPI-5.0 standard ABI:
// the functions of package capi (abi/capi) in a shared library that C
// programs built against abi/include/mpi.h load. Build it with
//
//	go build -buildmode=c-shared -o libmpi_abi.so.1 ./abi/lib
//
// or let `mpigo cc` build and cache it (docs/abi.md).
package main

import _ "github.com/mpigo/mpi/abi/capi" // the exported MPI_* and PMPI_* functions

// main is never called: the package is built as a shared library.
func main() {}
