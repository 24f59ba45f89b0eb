package mpi

import (
	"fmt"
	"testing"
)

// TestRequestsOwnEngineRequests: a receive posted in a Requests set runs
// on its slot's own engine request, the same one window after window,
// and takes none from the rank's free list nor gives one back; results
// are right every time.
func TestRequestsOwnEngineRequests(t *testing.T) {
	const window = 5
	err := Run(2, func(c *Comm) error {
		var rs Requests
		bufs := make([][]int64, window)
		for i := range bufs {
			bufs[i] = make([]int64, 1)
		}
		for round := range 3 {
			if c.Rank() == 0 {
				for i := range window {
					if err := PostIsend(&rs, c, []int64{int64(round*window + i)}, 1, i); err != nil {
						return err
					}
				}
				if err := rs.WaitAll(); err != nil {
					return err
				}
				continue
			}
			c.p.ers.mu.Lock()
			free := len(c.p.ers.free)
			c.p.ers.mu.Unlock()
			for i := range window {
				if err := PostIrecvInto(&rs, c, bufs[i], 0, i); err != nil {
					return err
				}
				r := rs.reqs[i]
				if r.er != &rs.ers[0][i] || r.is(fPooled) {
					return fmt.Errorf("round %d, receive %d: engine request %p (pooled %v), want the slot's %p", round, i, r.er, r.is(fPooled), &rs.ers[0][i])
				}
			}
			if err := rs.WaitAll(); err != nil {
				return err
			}
			for i, b := range bufs {
				if want := int64(round*window + i); b[0] != want {
					return fmt.Errorf("round %d, receive %d: got %d, want %d", round, i, b[0], want)
				}
			}
			c.p.ers.mu.Lock()
			after := len(c.p.ers.free)
			c.p.ers.mu.Unlock()
			if after != free {
				return fmt.Errorf("round %d: the free list went from %d to %d engine requests", round, free, after)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
