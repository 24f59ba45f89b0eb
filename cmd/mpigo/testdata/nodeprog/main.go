// nodeprog checks a job that spans several nodes: each rank finds the
// ranks of its node (SplitType shared), the job runs node-aware
// collectives on a megabyte and on a few bytes, and passes a half-megabyte
// message round the ring, so that shared memory inside a node and TCP
// between nodes both carry data. Rank 0 prints one line of results.
package main

import (
	"fmt"

	"github.com/mpigo/mpi"
)

func main() {
	mpi.Main(func(world *mpi.Comm) error {
		me, n := world.Rank(), world.Size()
		node, err := world.SplitType(mpi.SplitTypeShared, me, nil)
		if err != nil {
			return err
		}
		sizes, err := mpi.Allgather(world, node.Size())
		if err != nil {
			return err
		}
		big := make([]float64, 1<<17) // 1 MiB
		for i := range big {
			big[i] = float64(me + i)
		}
		sum, err := mpi.AllreduceSlice(world, big, mpi.Sum[float64]())
		if err != nil {
			return err
		}
		ok := true
		for i, v := range sum {
			if v != float64(n*(n-1)/2+n*i) {
				ok = false
			}
		}
		msg, err := mpi.Bcast(world, fmt.Sprintf("hello from %d", 0), 0)
		if err != nil {
			return err
		}
		ring := make([]int, 64<<10)
		ring[0] = me
		got, _, err := mpi.Sendrecv[[]int](world, ring, (me+1)%n, 0, (me+n-1)%n, 0)
		if err != nil {
			return err
		}
		if got[0] != (me+n-1)%n || len(got) != len(ring) {
			ok = false
		}
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		if me == 0 {
			fmt.Printf("nodeprog: %d ranks, node sizes %v, results ok %v, bcast %q\n", n, sizes, ok, msg)
		}
		if !ok {
			return fmt.Errorf("rank %d: wrong results", me)
		}
		return nil
	})
}
