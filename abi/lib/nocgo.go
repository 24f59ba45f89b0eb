//go:build !cgo

// Command lib is libmpi_abi.so.1, mpigo behind the MPI-5.0 standard ABI
// (docs/abi.md). It needs cgo: built without it, it only says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "libmpi_abi needs cgo: build it with go build -buildmode=c-shared -o libmpi_abi.so.1 and a C compiler")
	os.Exit(2)
}
