// rmaprog exercises one-sided communication between processes: a counter
// in a NewWindow window (shared memory on one node, messages over tcp)
// hammered with FetchAndOp by every rank, and a WindowOf window (always
// served by messages between processes) written while its owner computes
// without calling MPI.
package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi"
)

const iters = 300

func main() {
	mpi.Main(func(world *mpi.Comm) error {
		me, size := world.Rank(), world.Size()
		counter, err := mpi.NewWindow[int64](world, 1)
		if err != nil {
			return err
		}
		mem := make([]int32, size)
		slots, err := mpi.WindowOf(world, mem)
		if err != nil {
			return err
		}
		if err := counter.LockAll(); err != nil {
			return err
		}
		for i := 0; i < iters; i++ {
			if _, err := counter.FetchAndOp(1, 0, 0, mpi.Sum[int64]()); err != nil {
				return err
			}
		}
		if err := counter.UnlockAll(); err != nil {
			return err
		}
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		const busy = 800 * time.Millisecond
		if me == 0 {
			if got := counter.Local()[0]; got != int64(iters*size) {
				return fmt.Errorf("counter %d, want %d", got, iters*size)
			}
			var x atomic.Int64
			for end := time.Now().Add(busy); time.Now().Before(end); { // compute, no MPI
				x.Add(1)
			}
		} else {
			start := time.Now()
			if err := slots.Lock(0, true); err != nil {
				return err
			}
			if err := slots.Put([]int32{int32(100 + me)}, 0, me); err != nil {
				return err
			}
			if err := slots.Unlock(0); err != nil {
				return err
			}
			if d := time.Since(start); d > busy/2 {
				return fmt.Errorf("rank %d: the busy target served the window only after %v", me, d)
			}
		}
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		if me == 0 {
			for r := 1; r < size; r++ {
				if mem[r] != int32(100+r) {
					return fmt.Errorf("slot %d = %d", r, mem[r])
				}
			}
			fmt.Printf("rma ok %d\n", counter.Local()[0])
		}
		if err := slots.Free(); err != nil {
			return err
		}
		return staleAfterFree(world, counter, me, size)
	})
}

// staleAfterFree frees w while holding slices into its memory, its own
// part and (over shared memory) the next rank's, and then uses them: they
// must read zeros and take writes, never fault (issue 40), and w's
// getters must answer zero values.
func staleAfterFree(world *mpi.Comm, w *mpi.Window[int64], me, size int) error {
	own := w.Local()
	peer, err := w.SharedQuery((me + 1) % size)
	if err != nil {
		peer = nil // tcp: the peer's memory is not mapped here
	}
	if err := w.Free(); err != nil {
		return err
	}
	if w.Local() != nil || w.Size(me) != 0 {
		return fmt.Errorf("rank %d: after Free, Local %v and Size %d", me, w.Local(), w.Size(me))
	}
	for _, s := range [][]int64{own, peer} {
		if len(s) > 0 && s[0] != 0 {
			return fmt.Errorf("rank %d: a slice kept past Free reads %d, want 0", me, s[0])
		}
	}
	// Every rank has read before any writes (own is the previous rank's
	// peer).
	if err := mpi.Barrier(world); err != nil {
		return err
	}
	own[0] = 7 // must not fault
	return nil
}
