// pcollprog runs a persistent Allreduce 1000 times with data that change
// every round and checks each result: the test of persistent
// collectives between processes, whichever road the ranks agree on (by
// publication in shared memory when every rank reaches every other that
// way, over messages when a process hosts several ranks).
package main

import (
	"fmt"

	"github.com/mpigo/mpi"
)

func main() {
	mpi.Main(func(c *mpi.Comm) error {
		in, out := []int64{0, 0}, []int64{0, 0}
		r, err := mpi.AllreduceInit(c, in, out, mpi.Sum[int64]())
		if err != nil {
			return err
		}
		n := int64(c.Size())
		for i := range int64(1000) {
			in[0], in[1] = int64(c.Rank())+i, -i
			if err := r.Start(); err != nil {
				return err
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
			if want := n*(n-1)/2 + n*i; out[0] != want || out[1] != -n*i {
				return fmt.Errorf("rank %d round %d: %v, want [%d %d]", c.Rank(), i, out, want, -n*i)
			}
		}
		fmt.Printf("rank %d: pcoll ok\n", c.Rank())
		return r.Free()
	})
}
