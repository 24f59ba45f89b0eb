// procsprog prints how many Go processors (GOMAXPROCS) its rank process
// was given; mpigo run's tests build it.
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/mpigo/mpi"
)

func main() {
	c, err := mpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("rank %d procs %d\n", c.Rank(), runtime.GOMAXPROCS(0))
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
