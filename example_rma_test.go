package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// A halo exchange with Put and Fence: each rank owns a strip of cells
// plus one ghost cell at each end, and writes its edge cells straight into
// its neighbours' ghost cells.
func ExampleWindow_Fence() {
	const n = 3 // cells per rank
	mpi.Run(3, func(world *mpi.Comm) error {
		me, size := world.Rank(), world.Size()
		w, err := mpi.NewWindow[float64](world, n+2) // [ghost, cells..., ghost]
		if err != nil {
			return err
		}
		defer w.Free()
		strip := w.Local()
		for i := 1; i <= n; i++ {
			strip[i] = float64(10*me + i)
		}
		left, right := me-1, me+1
		if left < 0 {
			left = mpi.ProcNull // no neighbour: the Put does nothing
		}
		if right == size {
			right = mpi.ProcNull
		}
		w.Fence()
		w.Put(strip[1:2], left, n+1)  // my first cell -> left's right ghost
		w.Put(strip[n:n+1], right, 0) // my last cell -> right's left ghost
		w.Fence()
		for r := 0; r < size; r++ {
			if r == me {
				fmt.Println("rank", me, strip)
			}
			mpi.Barrier(world)
		}
		return nil
	})
	// Output:
	// rank 0 [0 1 2 3 11]
	// rank 1 [3 11 12 13 21]
	// rank 2 [13 21 22 23 0]
}

// A distributed counter: every rank takes tickets from a counter on rank
// 0 with FetchAndOp, without rank 0 doing anything.
func ExampleWindow_FetchAndOp() {
	mpi.Run(4, func(world *mpi.Comm) error {
		w, err := mpi.NewWindow[int64](world, 1)
		if err != nil {
			return err
		}
		defer w.Free()
		w.LockAll()
		var mine []int64
		for i := 0; i < 5; i++ {
			t, err := w.FetchAndOp(1, 0, 0, mpi.Sum[int64]())
			if err != nil {
				return err
			}
			mine = append(mine, t)
		}
		w.UnlockAll()
		all, _ := mpi.Gather(world, len(mine), 0)
		mpi.Barrier(world)
		if world.Rank() == 0 {
			fmt.Println("tickets per rank:", all, "counter:", w.Local()[0])
		}
		return nil
	})
	// Output: tickets per rank: [5 5 5 5] counter: 20
}

// A global array over passive-target locks: element i lives on rank i%size.
// Ranks update elements with an exclusive lock and read them with a
// shared one; the owners never call MPI for it. The update is a closure.
func ExampleWindow_Lock() {
	mpi.Run(3, func(world *mpi.Comm) error {
		const perRank = 4
		size := world.Size()
		w, err := mpi.NewWindow[int32](world, perRank)
		if err != nil {
			return err
		}
		defer w.Free()
		owner := func(i int) (rank, disp int) { return i % size, i / size }
		scaled := mpi.NewOp(func(cur, add int32) int32 { return cur + 10*add }, true)
		for i := world.Rank(); i < perRank*size; i += size { // each rank updates some elements
			r, d := owner(i)
			w.Lock(r, true)
			w.Accumulate([]int32{int32(i)}, r, d, scaled)
			w.Unlock(r)
		}
		mpi.Barrier(world)
		if world.Rank() == 0 {
			var all []int32
			for i := 0; i < perRank*size; i++ {
				r, d := owner(i)
				v := make([]int32, 1)
				w.Lock(r, false)
				w.Get(v, r, d)
				w.Unlock(r)
				all = append(all, v[0])
			}
			fmt.Println(all)
		}
		mpi.Barrier(world)
		return nil
	})
	// Output: [0 10 20 30 40 50 60 70 80 90 100 110]
}

// Windows over the caller's memory: WindowOf's Local is the slice itself.
func ExampleWindowOf() {
	mpi.Run(2, func(world *mpi.Comm) error {
		data := make([]int, 3)
		w, err := mpi.WindowOf(world, data)
		if err != nil {
			return err
		}
		defer w.Free()
		w.Fence()
		if world.Rank() == 0 {
			w.Put([]int{7, 8, 9}, 1, 0)
		}
		w.Fence()
		if world.Rank() == 1 {
			fmt.Println(data)
		}
		return nil
	})
	// Output: [7 8 9]
}

// Generalized active target: rank 1 exposes its window to rank 0 only.
func ExampleWindow_Post() {
	mpi.Run(2, func(world *mpi.Comm) error {
		w, err := mpi.NewWindow[int](world, 2)
		if err != nil {
			return err
		}
		defer w.Free()
		other, _ := world.Group().Incl([]int{1 - world.Rank()})
		if world.Rank() == 1 {
			w.Post(other)
			w.Wait()
			fmt.Println(w.Local())
		} else {
			w.Start(other)
			w.Put([]int{4, 2}, 1, 0)
			w.Complete()
		}
		return nil
	})
	// Output: [4 2]
}

// Memory from AllocMem under a window made over the program's own memory
// (WindowOf, or Attach to a dynamic window): between processes of one
// node the other ranks then reach it directly in shared memory, as they
// reach NewWindow's, where other memory is served by messages. Here each
// rank counts its visitors in such memory.
func ExampleAllocMem() {
	mpi.Run(3, func(world *mpi.Comm) error {
		count, err := mpi.AllocMem[int64](1)
		if err != nil {
			return err
		}
		defer mpi.FreeMem(count)
		w, err := mpi.WindowOf(world, count)
		if err != nil {
			return err
		}
		for t := range world.Size() {
			if t == world.Rank() {
				continue
			}
			w.Lock(t, false)
			w.Accumulate([]int64{1}, t, 0, mpi.Sum[int64]())
			w.Unlock(t)
		}
		if err := w.Free(); err != nil {
			return err
		}
		fmt.Printf("rank %d had %d visitors\n", world.Rank(), count[0])
		return nil
	})
	// Unordered output:
	// rank 0 had 2 visitors
	// rank 1 had 2 visitors
	// rank 2 had 2 visitors
}
