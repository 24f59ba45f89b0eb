// Command gen writes the files generated from the ABI table (package abi):
// include/mpi.h, the library's export skeleton and C shim, the symbol
// list, and the list of unimplemented functions in docs/abi.md. Run it
// with go generate in the abi directory.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mpigo/mpi/abi"
)

func main() {
	t, err := abi.Load()
	if err != nil {
		fail(err)
	}
	docs, err := os.ReadFile(abi.DocsFile)
	if err != nil {
		fail(err)
	}
	files, err := abi.Generate(t, docs)
	if err != nil {
		fail(err)
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}
