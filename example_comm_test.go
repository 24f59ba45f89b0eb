package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// Groups are sets of ranks: derive them from a communicator's group and
// combine them; ranks translate between groups.
func ExampleGroup() {
	mpi.Run(6, func(world *mpi.Comm) error {
		if world.Rank() != 0 {
			return nil
		}
		all := world.Group()
		even, _ := all.RangeIncl([]mpi.Range{{0, 5, 2}}) // 0 2 4
		low, _ := all.Incl([]int{0, 1, 2})
		u, _ := even.Union(low)
		i, _ := even.Intersection(low)
		d, _ := even.Difference(low)
		fmt.Println("union", u.WorldRanks(), "intersection", i.WorldRanks(), "difference", d.WorldRanks())
		tr, _ := even.TranslateRanks([]int{0, 1, 2}, low)
		fmt.Println("even ranks in low:", tr[:2], tr[2] == mpi.Undefined)
		return nil
	})
	// Output:
	// union [0 2 4 1] intersection [0 2] difference [4]
	// even ranks in low: [0 2] true
}

// Create makes a communicator of a group; ranks outside it get nil.
func ExampleComm_Create() {
	mpi.Run(4, func(world *mpi.Comm) error {
		g, _ := world.Group().Incl([]int{3, 1})
		c, err := world.Create(g)
		if err != nil || c == nil {
			return err
		}
		defer c.Free()
		members, _ := mpi.Gather(c, world.Rank(), 0)
		if c.Rank() == 0 {
			fmt.Println("world ranks in rank order:", members)
		}
		return nil
	})
	// Output: world ranks in rank order: [3 1]
}

// An intercommunicator joins two groups: point-to-point ranks name the
// other group, and collectives move data between the groups.
func ExampleIntercommCreate() {
	mpi.Run(5, func(world *mpi.Comm) error {
		left := world.Rank() < 2 // ranks 0 1 | 2 3 4
		color, remoteLeader := 0, 2
		if !left {
			color, remoteLeader = 1, 0
		}
		local, _ := world.Split(color, world.Rank())
		ic, err := mpi.IntercommCreate(local, 0, world, remoteLeader, 99)
		if err != nil {
			return err
		}
		// Rank 0 of the left group broadcasts to the whole right group.
		root := 0 // the root's rank, as the right group names it
		if left {
			root = mpi.ProcNull
			if ic.Rank() == 0 {
				root = mpi.Root
			}
		}
		v, _ := mpi.Bcast(ic, "hello from the left", root)
		sum, _ := mpi.Allreduce(ic, world.Rank(), mpi.Sum[int]()) // the other group's sum
		if !left && ic.Rank() == 0 {
			fmt.Printf("right got %q; left ranks sum to %d (remote size %d)\n", v, sum, ic.RemoteSize())
		}
		merged, _ := ic.IntercommMerge(!left) // left first
		all, _ := mpi.Allgather(merged, world.Rank())
		if world.Rank() == 0 {
			fmt.Println("merged:", all)
		}
		merged.Free()
		return ic.Free()
	})
	// Output:
	// right got "hello from the left"; left ranks sum to 1 (remote size 2)
	// merged: [0 1 2 3 4]
}

// Attributes cache values on a communicator; the key's callbacks decide
// what Dup copies and see every deletion.
func ExampleCreateKeyval() {
	mpi.Run(1, func(world *mpi.Comm) error {
		generation, _ := mpi.CreateKeyval(
			func(old *mpi.Comm, k *mpi.Keyval, v any) (any, bool, error) { return v.(int) + 1, true, nil },
			func(c *mpi.Comm, k *mpi.Keyval, v any) error {
				fmt.Println("deleting generation", v, "from", c.Name())
				return nil
			})
		c, _ := world.Dup()
		c.SetName("first")
		c.SetAttr(generation, 1)
		d, _ := c.Dup()
		d.SetName("second")
		v, ok, _ := d.GetAttr(generation)
		fmt.Println("copy has generation", v, ok)
		d.Free()
		c.Free()
		return mpi.FreeKeyval(generation)
	})
	// Output:
	// copy has generation 2 true
	// deleting generation 2 from second
	// deleting generation 1 from first
}

// The intercommunicator snippet of docs/intercomm.md: point-to-point across the
// groups, a collective between them, a merge, and a group of the merge.
func ExampleComm_IntercommMerge() {
	mpi.Run(5, func(world *mpi.Comm) error {
		left := world.Rank() < 2 // ranks 0 1 | 2 3 4
		color, remoteLeader := 0, 2
		if !left {
			color, remoteLeader = 1, 0
		}
		local, _ := world.Split(color, world.Rank())
		ic, err := mpi.IntercommCreate(local, 0, world, remoteLeader, 99)
		if err != nil {
			return err
		}
		if left && ic.Rank() == 0 {
			mpi.Send(ic, "work", 2, 0) // rank 2 of the *other* group: world rank 4
		}
		if !left && ic.Rank() == 2 {
			v, st, _ := mpi.Recv[string](ic, mpi.AnySource, 0)
			fmt.Println(v, "from left rank", st.Source)
		}
		// Collectives move data between the groups: each side gets the
		// other side's sum.
		sum, _ := mpi.Allreduce(ic, world.Rank(), mpi.Sum[int]())
		_ = sum
		merged, _ := ic.IntercommMerge(!left) // one intracommunicator, left first
		odd, _ := merged.Group().RangeIncl([]mpi.Range{{1, 4, 2}})
		sub, _ := merged.Create(odd) // ranks 1 and 3 of merged; others get nil
		if sub != nil {
			fmt.Println("in sub:", world.Rank())
			sub.Free()
		}
		merged.Free()
		return ic.Free()
	})
	// Unordered output:
	// work from left rank 0
	// in sub: 1
	// in sub: 3
}
