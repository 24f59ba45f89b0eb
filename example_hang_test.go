package mpi_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/mpigo/mpi"
)

// A deadlock in a test: both ranks receive first. Instead of hanging, Run
// returns the hang report after Config.HangReport; its diagnosis names
// both calls. (Run does not print it; Main prints the error, once.)
func ExampleConfig_hangReport() {
	cfg := mpi.DefaultConfig()
	cfg.HangReport = 200 * time.Millisecond
	err := mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
		peer := 1 - c.Rank()
		if _, _, err := mpi.Recv[int](c, peer, 0); err != nil {
			return err
		}
		return mpi.Send(c, 1, peer, 0)
	})
	for _, line := range strings.Split(fmt.Sprint(err), "\n") {
		if strings.HasPrefix(line, "diagnosis:") {
			fmt.Println(line)
		}
	}
	// Output:
	// diagnosis: rank 0 waits in Recv from 1 tag 0 at example_hang_test.go:19 while rank 1 waits in Recv from 0 tag 0 at example_hang_test.go:19: each waits for the other
}

// Check mode: ranks that call Bcast with different roots fail at once,
// naming both calls, instead of returning garbage.
func ExampleConfig_check() {
	cfg := mpi.DefaultConfig()
	cfg.Check = true
	err := mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
		_, err := mpi.Bcast(c, c.Rank(), c.Rank()) // each rank names itself the root
		return err
	})
	fmt.Println(strings.Contains(fmt.Sprint(err), "different roots"))
	// Output:
	// true
}
