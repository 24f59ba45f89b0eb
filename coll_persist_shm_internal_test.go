package mpi

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// shmConfig is the configuration of goroutine ranks that reach each
// other as processes of one node do: over the shm transport, with shared
// segments.
func shmConfig() Config {
	cfg := DefaultConfig()
	cfg.Transport = "shm"
	return cfg
}

// onShmRoad reports an error unless every request of rs goes by
// publications in shared memory.
func onShmRoad(c *Comm, rs ...*Request) error {
	for _, r := range rs {
		if _, ok := r.x.pub.(*shmColl); !ok {
			return fmt.Errorf("rank %d: %s does not go by publications in shared memory (%T)", c.Rank(), r.opName(), r.x.pub)
		}
	}
	return nil
}

// TestPersistentShmPublications: the persistent collectives that go by
// publications, between ranks that are processes of one node: round
// after round, started in another order on every rank, with a blocking
// collective in between, completed by each way of waiting and testing
// (Wait, WaitAll, WaitAny, Test and TestAll in loops, WaitSome), on
// ranks that wait at once and on a rank that comes late; every result
// right every round, and every request freed.
func TestPersistentShmPublications(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		for _, late := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dranks/late%v", n, late), func(t *testing.T) {
				err := runConfigWithin(t, n, shmConfig(), 2*time.Minute, func(c *Comm) error {
					q, err := newPubReqs(c)
					if err != nil {
						return err
					}
					if err := onShmRoad(c, q.all...); err != nil {
						return err
					}
					for i := range 36 {
						q.set(c, i)
						order := slices.Clone(q.all)
						if c.Rank()%2 == 1 {
							slices.Reverse(order)
						}
						if late && c.Rank() == n-1 && i%3 == 0 {
							// Past the others' watch: they park.
							time.Sleep(200 * time.Microsecond)
						}
						if err := StartAll(order...); err != nil {
							return err
						}
						if _, err := Allreduce(c, 1, Sum[int]()); err != nil {
							return err
						}
						if err := q.complete(c, i); err != nil {
							return err
						}
						if err := q.check(c, i); err != nil {
							return err
						}
					}
					for _, r := range q.all {
						if err := r.Free(); err != nil {
							return err
						}
						if r.x.pub.(*shmColl).mem != nil {
							return fmt.Errorf("rank %d: %s kept its block after Free", c.Rank(), r.opName())
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
