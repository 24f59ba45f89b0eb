package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// A generalized request wraps work the program does itself — here a
// goroutine that sums a slice — so that it can be waited for like a
// message, alone or among other requests.
func ExampleComm_GrequestStart() {
	mpi.Run(1, func(world *mpi.Comm) error {
		data := []float64{1, 2, 3, 4}
		var sum float64
		r, err := world.GrequestStart(
			func(st *mpi.Status) error { // query: what Wait reports
				st.Source, st.Tag = world.Rank(), 0
				return st.SetElements(mpi.Float64, 1)
			},
			func() error { // free: nothing more will ask for the result
				fmt.Println("freed")
				return nil
			},
			func(complete bool) error { return nil }, // cancel: not supported
		)
		if err != nil {
			return err
		}
		go func() {
			for _, v := range data {
				sum += v
			}
			r.GrequestComplete()
		}()
		st, err := r.Wait()
		fmt.Println(sum, st.Count(), err)
		return nil
	})
	// Output:
	// freed
	// 10 1 <nil>
}
