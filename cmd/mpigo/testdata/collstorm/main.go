// Command collstorm runs many small collectives: with more ranks than
// cores it shows whether waiting ranks leave the cores to the ranks that
// have work (no livelock, no lost wake-up).
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/mpigo/mpi"
)

func main() {
	n := 2000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	mpi.Main(func(c *mpi.Comm) error {
		sum := 0
		for i := 0; i < n; i++ {
			v, err := mpi.Allreduce(c, c.Rank()+i, mpi.Sum[int]())
			if err != nil {
				return err
			}
			sum += v
			if i%100 == 0 {
				if err := mpi.Barrier(c); err != nil {
					return err
				}
			}
		}
		p := c.Size()
		want := 0
		for i := 0; i < n; i++ {
			want += p*(p-1)/2 + p*i
		}
		if sum != want {
			return fmt.Errorf("rank %d: sum %d, want %d", c.Rank(), sum, want)
		}
		if c.Rank() == 0 {
			fmt.Printf("collstorm: %d allreduces on %d ranks: ok\n", n, p)
		}
		return nil
	})
}
