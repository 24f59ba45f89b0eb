package mpi_test

import (
	"fmt"
	"sync"

	"github.com/mpigo/mpi"
)

// An iterative solver sets up its Allreduce once and starts it in every
// iteration: the arguments are checked, the ranks agree and the algorithm
// is chosen at AllreduceInit; each Start then runs the collective again
// on the current contents of the input.
func ExampleAllreduceInit() {
	mpi.Run(4, func(c *mpi.Comm) error {
		local, global := []float64{0}, []float64{0}
		req, err := mpi.AllreduceInit(c, local, global, mpi.Sum[float64]())
		if err != nil {
			return err
		}
		defer req.Free()
		for iter := 1; iter <= 3; iter++ {
			local[0] = float64(iter * (c.Rank() + 1)) // this rank's residual
			if err := req.Start(); err != nil {
				return err
			}
			if _, err := req.Wait(); err != nil {
				return err
			}
			if c.Rank() == 0 {
				fmt.Println("iteration", iter, "sum", global[0])
			}
		}
		return nil
	})
	// Output:
	// iteration 1 sum 10
	// iteration 2 sum 20
	// iteration 3 sum 30
}

// Four goroutines fill one quarter each of a message and hand it over with
// Pready as soon as it is done; the receiver sees the message whole once
// every partition has arrived.
func ExamplePsendInit() {
	mpi.Run(2, func(c *mpi.Comm) error {
		const parts, per = 4, 3
		buf := make([]int32, parts*per)
		if c.Rank() == 0 {
			req, err := mpi.PsendInit(c, buf, parts, 1, 0)
			if err != nil {
				return err
			}
			defer req.Free()
			if err := req.Start(); err != nil {
				return err
			}
			var wg sync.WaitGroup
			for p := range parts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range per {
						buf[p*per+i] = int32(10*p + i)
					}
					req.Pready(p) // this quarter leaves now
				}()
			}
			wg.Wait()
			_, err = req.Wait()
			return err
		}
		req, err := mpi.PrecvInit(c, buf, parts, 0, 0)
		if err != nil {
			return err
		}
		defer req.Free()
		if err := req.Start(); err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		fmt.Println(buf)
		return nil
	})
	// Output: [0 1 2 10 11 12 20 21 22 30 31 32]
}
