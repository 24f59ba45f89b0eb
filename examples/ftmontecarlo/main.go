// Ftmontecarlo estimates π by Monte-Carlo with a pool of workers that
// survives the death of workers (fault tolerance, docs/fault-tolerance.md).
// Rank 0 hands out batches of random points; each worker counts the points
// of its batch that fall in the quarter circle and sends the count back.
// When a worker dies, rank 0 learns it (ErrProcFailed on its blocking
// receive from any worker), acknowledges the failure and gives the dead
// worker's batch to another: the estimate is the same, bit for bit, as if
// nobody had died, because each batch draws from a seed of its own.
//
//	mpigo run --ft -n 4 ftmontecarlo -kill 2      rank 2 kills itself (SIGKILL) after its first batch
//	MPIGO_FT=1 MPIGO_NP=4 go run ./examples/ftmontecarlo
package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/mpigo/mpi"
)

// Tags of the messages between rank 0 and the workers.
const (
	tagWork   = 1 // rank 0 -> worker: a batch number, or -1: stop
	tagResult = 2 // worker -> rank 0: {batch, hits}
)

func main() {
	batches := flag.Int("batches", 64, "number of batches")
	points := flag.Int("points", 200_000, "points per batch")
	kill := flag.Int("kill", -1, "this worker kills itself (SIGKILL) after its first batch")
	flag.Parse()
	mpi.Main(func(world *mpi.Comm) error {
		pi, err := Estimate(world, *batches, *points, func(rank, done int) error {
			if rank == *kill && done == 1 {
				killSelf()
			}
			return nil
		})
		if err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Printf("pi is approximately %.10f (%d batches of %d points)\n", pi, *batches, *points)
		}
		return nil
	})
}

// Batch counts the points of batch b that fall in the quarter circle.
func Batch(b, points int) int64 {
	r := rand.New(rand.NewPCG(uint64(b), 0x9e3779b97f4a7c15))
	var hits int64
	for i := 0; i < points; i++ {
		x, y := r.Float64(), r.Float64()
		if x*x+y*y <= 1 {
			hits++
		}
	}
	return hits
}

// Estimate runs the pool on world and returns the estimate on rank 0
// (0 elsewhere). after is called by each worker after each batch with its
// rank and the number of batches it has done; an error it returns ends
// the worker (a failed rank, for tests).
func Estimate(world *mpi.Comm, batches, points int, after func(rank, done int) error) (float64, error) {
	if world.Rank() != 0 {
		return 0, work(world, points, after)
	}
	hits, err := serve(world, batches, points)
	return 4 * float64(hits) / float64(batches*points), err
}

// work is a worker: it computes batches until rank 0 says stop.
func work(c *mpi.Comm, points int, after func(rank, done int) error) error {
	for done := 0; ; {
		b, _, err := mpi.Recv[int](c, 0, tagWork)
		if err != nil || b < 0 {
			return err
		}
		if err := mpi.Send(c, [2]int64{int64(b), Batch(b, points)}, 0, tagResult); err != nil {
			return err
		}
		done++
		if err := after(c.Rank(), done); err != nil {
			return err
		}
	}
}

// serve is rank 0: it hands out batches, collects the counts and hands
// the batch of a worker that died to another one.
func serve(c *mpi.Comm, batches, points int) (int64, error) {
	var hits int64
	todo := make([]int, 0, batches)
	for b := batches - 1; b >= 0; b-- {
		todo = append(todo, b) // popped from the end: batch 0 first
	}
	busy := map[int]int{} // worker -> its batch
	dead := map[int]bool{}
	counted := map[int]bool{} // batches whose count is in
	var idle []int
	give := func(w int) {
		for len(todo) > 0 {
			b := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if counted[b] {
				continue
			}
			if err := mpi.Send(c, b, w, tagWork); err != nil {
				todo = append(todo, b) // it died: the failure shows below
				dead[w] = true
				return
			}
			busy[w] = b
			return
		}
		idle = append(idle, w)
	}
	for w := 1; w < c.Size(); w++ {
		give(w)
	}
	for done := 0; done < batches; {
		if len(busy) == 0 {
			// No worker left: compute what remains here.
			for _, b := range todo {
				if !counted[b] {
					counted[b] = true
					hits += Batch(b, points)
					done++
				}
			}
			todo = nil
			break
		}
		res, st, err := mpi.Recv[[2]int64](c, mpi.AnySource, tagResult)
		if errors.Is(err, mpi.ErrProcFailedPending) || errors.Is(err, mpi.ErrProcFailed) {
			// A worker died: take back its batch, acknowledge, go on.
			failed, gerr := c.GetFailed()
			if gerr != nil {
				return 0, gerr
			}
			for _, w := range failed.WorldRanks() {
				if b, ok := busy[w]; ok {
					delete(busy, w)
					todo = append(todo, b)
				}
				dead[w] = true
			}
			if _, err := c.AckFailed(failed.Size()); err != nil {
				return 0, err
			}
			for len(todo) > 0 && len(idle) > 0 {
				w := idle[0]
				idle = idle[1:]
				give(w)
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		if busy[st.Source] == int(res[0]) {
			delete(busy, st.Source)
		}
		if b := int(res[0]); !counted[b] {
			// (A worker that died after sending may have had its batch
			// handed out again: the first count wins.)
			counted[b] = true
			hits += res[1]
			done++
		}
		if !dead[st.Source] {
			give(st.Source)
		}
	}
	// Every live worker waits for work, or will once its result (of a
	// batch counted already, after a reassignment) has gone: stop them all.
	for w := 1; w < c.Size(); w++ {
		if !dead[w] {
			mpi.Send(c, -1, w, tagWork) // a worker that died since fails here: nothing to do
		}
	}
	return hits, nil
}

// killSelf ends this process as kill -9 would.
func killSelf() {
	p, _ := os.FindProcess(os.Getpid())
	p.Kill()
	select {}
}
