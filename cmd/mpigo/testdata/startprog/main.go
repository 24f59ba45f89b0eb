// Command startprog measures start-up: rank 0 prints how long after
// MPIGO_T0 (Unix nanoseconds, set by whoever started the launcher) the
// job's first Barrier ended.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/mpigo/mpi"
)

func main() {
	mpi.Main(func(world *mpi.Comm) error {
		if err := world.Barrier(); err != nil {
			return err
		}
		t0, err := strconv.ParseInt(os.Getenv("MPIGO_T0"), 10, 64)
		if world.Rank() == 0 && err == nil {
			fmt.Printf("startup %d ranks: %.1f ms\n", world.Size(), float64(time.Now().UnixNano()-t0)/1e6)
		}
		return nil
	})
}
