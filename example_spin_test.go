package mpi_test

import (
	"fmt"
	"time"

	"github.com/mpigo/mpi"
)

// Goroutine ranks that each have a processor can watch for what they wait
// for before they park (Config.Spin, or MPIGO_SPIN=50us): small
// ping-pongs and allreduces take about two thirds of the time, at the
// cost of a busy processor while a rank waits. With more ranks than
// GOMAXPROCS the setting is ignored and ranks park at once.
func ExampleConfig_spin() {
	cfg := mpi.DefaultConfig()
	cfg.Spin = 50 * time.Microsecond
	err := mpi.RunConfig(2, cfg, func(world *mpi.Comm) error {
		sum := 0
		for i := 0; i < 1000; i++ {
			s, err := mpi.Allreduce(world, world.Rank()+1, mpi.Sum[int]())
			if err != nil {
				return err
			}
			sum += s
		}
		if world.Rank() == 0 {
			fmt.Println("sum of 1000 allreduces:", sum)
		}
		return nil
	})
	fmt.Println("error:", err)
	// Output:
	// sum of 1000 allreduces: 3000
	// error: <nil>
}
