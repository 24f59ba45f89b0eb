// gwprog checks a job whose ranks sit in networks joined by gateways: a
// ring, collectives, 4 MiB messages between every pair of neighbours and
// a synchronous send that must wait for its receiver across the relay.
// With -loop it then passes a token round the ring until that fails (the
// gateway tests kill a gateway meanwhile).
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/mpigo/mpi"
)

func main() {
	loop := flag.Bool("loop", false, "after the checks, pass a token round the ring until an error")
	flag.Parse()
	mpi.Main(func(world *mpi.Comm) error {
		rank, size := world.Rank(), world.Size()
		next, prev := (rank+1)%size, (rank+size-1)%size
		// Ring.
		token := 0
		if rank == 0 {
			if err := mpi.Send(world, 1, next, 0); err != nil {
				return err
			}
			t, _, err := mpi.Recv[int](world, prev, 0)
			if err != nil {
				return err
			}
			token = t
		} else {
			t, _, err := mpi.Recv[int](world, prev, 0)
			if err != nil {
				return err
			}
			if err := mpi.Send(world, t+1, next, 0); err != nil {
				return err
			}
		}
		// Collectives.
		sum, err := mpi.Allreduce(world, rank+1, mpi.Sum[int]())
		if err != nil {
			return err
		}
		msg, err := mpi.Bcast(world, fmt.Sprintf("hello from %d", rank), 0)
		if err != nil {
			return err
		}
		all, err := mpi.Allgather(world, rank)
		if err != nil {
			return err
		}
		// 4 MiB to the next rank, from the previous one.
		big := make([]float64, 1<<19)
		for i := range big {
			big[i] = float64(rank*1000003 + i)
		}
		req, err := mpi.Isend(world, big, next, 1)
		if err != nil {
			return err
		}
		got, _, err := mpi.Recv[[]float64](world, prev, 1)
		if err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		for i, v := range got {
			if v != float64(prev*1000003+i) {
				return fmt.Errorf("4 MiB from rank %d: element %d is %v", prev, i, v)
			}
		}
		red, err := mpi.AllreduceSlice(world, big[:1<<17], mpi.Sum[float64]())
		if err != nil {
			return err
		}
		for i, v := range red {
			if want := float64(1000003*size*(size-1)/2 + size*i); v != want {
				return fmt.Errorf("1 MiB allreduce: element %d is %v, want %v", i, v, want)
			}
		}
		// A synchronous send completes only once its receive has
		// started: the last rank posts it 300 ms late.
		waited := true
		last := size - 1
		switch rank {
		case 0:
			start := time.Now()
			if err := mpi.Ssend(world, 42, last, 2); err != nil {
				return err
			}
			waited = time.Since(start) >= 250*time.Millisecond
		case last:
			time.Sleep(300 * time.Millisecond)
			if _, _, err := mpi.Recv[int](world, 0, 2); err != nil {
				return err
			}
		}
		if rank == 0 {
			fmt.Printf("gwprog: %d ranks: ring %d, allreduce %d, bcast %q, allgather %v, 4 MiB ok, ssend waited %v\n", size, token, sum, msg, all, waited)
		}
		if !*loop {
			return nil
		}
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		if rank == 0 {
			fmt.Println("gwprog: looping")
		}
		for lap := 3; ; lap++ {
			if rank == 0 {
				if err := mpi.Send(world, lap, next, 3); err != nil {
					return err
				}
				if _, _, err := mpi.Recv[int](world, prev, 3); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
			} else {
				t, _, err := mpi.Recv[int](world, prev, 3)
				if err != nil {
					return err
				}
				if err := mpi.Send(world, t, next, 3); err != nil {
					return err
				}
			}
		}
	})
}
