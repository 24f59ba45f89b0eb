//go:build !cgo

// Package capi is mpigo behind the MPI-5.0 standard ABI (the C functions
// of abi/include/mpi.h). It needs cgo: built without it, the package is
// empty (docs/abi.md).
package capi
