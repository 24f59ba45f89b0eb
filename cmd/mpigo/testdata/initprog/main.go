// Command initprog is a rank started through mpi.Init and ended by
// mpi.Finalize rather than mpi.Main, as a program linking C code that
// calls MPI_Init would be; TestInitUnderLauncher runs it under mpigo run.
package main

import (
	"fmt"
	"os"

	"github.com/mpigo/mpi"
)

func main() {
	w, err := mpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Init:", err)
		os.Exit(1)
	}
	sum, err := mpi.Allreduce(w, w.Rank()+1, mpi.Sum[int]())
	if err != nil {
		fmt.Fprintln(os.Stderr, "Allreduce:", err)
		os.Exit(1)
	}
	if w.Rank() == 0 {
		fmt.Printf("size %d sum %d\n", w.Size(), sum)
	}
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "Finalize:", err)
		os.Exit(1)
	}
}
