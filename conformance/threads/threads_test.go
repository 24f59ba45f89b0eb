package threads_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Several goroutines of each rank send and receive at once, each on its
// own tag, with wildcards on the source (MPICH threads/pt2pt/threads,
// multisend, alltoall).
func TestConcurrentPt2pt(t *testing.T) {
	const workers, msgs = 4, 20
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		peer := 1 - c.Rank()
		var wg sync.WaitGroup
		errs := make(chan error, 2*workers)
		for w := range workers {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for i := range msgs {
					if err := mpi.Send(c, []int{w, i}, peer, w); err != nil {
						errs <- err
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				for i := range msgs {
					v, st, err := mpi.Recv[[]int](c, mpi.AnySource, w)
					if err != nil || st.Source != peer || v[0] != w || v[1] != i {
						errs <- fmt.Errorf("worker %d message %d: %v %+v %v", w, i, v, st, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	})
}

// Collectives on distinct communicators run at once from different
// goroutines of each rank (threads/comm/ctxdup, comm_create_threads).
func TestConcurrentCollectives(t *testing.T) {
	const comms = 3
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		cs := make([]*mpi.Comm, comms)
		for i := range cs {
			d, err := c.Dup()
			if err != nil {
				return err
			}
			cs[i] = d
		}
		var wg sync.WaitGroup
		errs := make(chan error, comms)
		for i, d := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 10 {
					s, err := mpi.Allreduce(d, i+k, mpi.Sum[int]())
					if err != nil || s != d.Size()*(i+k) {
						errs <- fmt.Errorf("comm %d round %d: %d %v", i, k, s, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	})
}

// The typed layer is safe for concurrent use: Irecv with many
// goroutines waiting on their own Pending (threads/pt2pt/mt_improbe*).
func TestConcurrentMprobe(t *testing.T) {
	const workers = 4
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			for i := range workers * 5 {
				if err := mpi.Send(c, i, 1, 3); err != nil {
					return err
				}
			}
			return nil
		}
		var mu sync.Mutex
		seen := map[int]bool{}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					m, _, err := mpi.Mprobe(c, 0, 3)
					if err != nil {
						errs <- err
						return
					}
					v, _, err := mpi.Mrecv[int](m)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					seen[v] = true
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
		if len(seen) != workers*5 {
			return fmt.Errorf("received %d distinct messages, want %d", len(seen), workers*5)
		}
		return nil
	})
}
