package mpi_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// Node-aware collectives: goroutine ranks grouped into pretend nodes of
// RanksPerNode ranks (as processes on several machines would be) run
// Barrier, Bcast, Reduce and Allreduce through the per-node leaders. The
// results must equal the flat algorithms' for every shape of nodes,
// every root, and on communicators split from the world.
func TestHierarchicalCollectives(t *testing.T) {
	type shape struct{ n, perNode int }
	var shapes []shape
	for n := 2; n <= 7; n++ {
		for k := 1; k <= 3; k++ {
			shapes = append(shapes, shape{n, k})
		}
	}
	for _, sh := range shapes {
		t.Run(fmt.Sprintf("%dranks-%dpernode", sh.n, sh.perNode), func(t *testing.T) {
			cfg := mpi.DefaultConfig()
			cfg.RanksPerNode = sh.perNode
			err := mpi.RunConfig(sh.n, cfg, func(world *mpi.Comm) error {
				if err := hierChecks(world); err != nil {
					return err
				}
				// A communicator that leaves some ranks out: nodes of
				// different sizes, leaders that are not the world's.
				sub, err := world.Split(world.Rank()%2, -world.Rank())
				if err != nil {
					return err
				}
				return hierChecks(sub)
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func hierChecks(c *mpi.Comm) error {
	p, r := c.Size(), c.Rank()
	sum := mpi.Sum[int64]()
	for _, n := range []int{1, 3, 1000, 20000} { // short, odd, and above the eager limit
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(r*1000 + i)
		}
		want := func(i int) int64 { return int64(1000*p*(p-1)/2 + p*i) }
		// A non-blocking allreduce started before the first blocking
		// collective runs flat; one started later runs hierarchically.
		early, err := mpi.Iallreduce(c, int64(r), sum)
		if err != nil {
			return err
		}
		got, err := mpi.AllreduceSlice(c, v, sum)
		if err != nil {
			return err
		}
		for i, x := range got {
			if x != want(i) {
				return fmt.Errorf("rank %d: AllreduceSlice(%d)[%d] = %d, want %d", r, n, i, x, want(i))
			}
		}
		if x, err := early.Wait(); err != nil || x != int64(p*(p-1)/2) {
			return fmt.Errorf("rank %d: Iallreduce = %d, %v", r, x, err)
		}
		late, err := mpi.Iallreduce(c, int64(r), sum)
		if err != nil {
			return err
		}
		if x, err := late.Wait(); err != nil || x != int64(p*(p-1)/2) {
			return fmt.Errorf("rank %d: Iallreduce after = %d, %v", r, x, err)
		}
		// Low-level Allreduce, in place.
		all := append([]int64(nil), v...)
		if err := c.Allreduce(mpi.InPlace, mpi.AsBytes(all), n, mpi.Int64, mpi.OpSum); err != nil {
			return err
		}
		for i, x := range all {
			if x != want(i) {
				return fmt.Errorf("rank %d: Allreduce(%d)[%d] = %d, want %d", r, n, i, x, want(i))
			}
		}
		for root := 0; root < p; root++ {
			got, err := mpi.ReduceSlice(c, v, sum, root)
			if err != nil {
				return err
			}
			if r == root {
				for i, x := range got {
					if x != want(i) {
						return fmt.Errorf("rank %d: ReduceSlice(%d, root %d)[%d] = %d, want %d", r, n, root, i, x, want(i))
					}
				}
			}
			out := make([]int64, n)
			if err := c.Reduce(mpi.AsBytes(v), mpi.AsBytes(out), n, mpi.Int64, mpi.OpSum, root); err != nil {
				return err
			}
			if r == root && out[n-1] != want(n-1) {
				return fmt.Errorf("rank %d: Reduce(%d, root %d) = %d, want %d", r, n, root, out[n-1], want(n-1))
			}
			b := make([]int64, n)
			if r == root {
				for i := range b {
					b[i] = int64(root*7 + i)
				}
			}
			if err := mpi.BcastInto(c, b, root); err != nil {
				return err
			}
			if b[0] != int64(root*7) || b[n-1] != int64(root*7+n-1) {
				return fmt.Errorf("rank %d: BcastInto(%d, root %d) = %d..%d", r, n, root, b[0], b[n-1])
			}
			raw := make([]byte, n)
			if r == root {
				for i := range raw {
					raw[i] = byte(root + i)
				}
			}
			if err := c.Bcast(raw, n, mpi.Byte, root); err != nil {
				return err
			}
			if raw[n-1] != byte(root+n-1) {
				return fmt.Errorf("rank %d: Bcast(%d, root %d) = %d", r, n, root, raw[n-1])
			}
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
	}
	return nil
}
