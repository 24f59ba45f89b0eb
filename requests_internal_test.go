package mpi

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi/internal/datatype"
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

// TestRequestsOwnedSlots checks which requests a set's WaitAll waits for
// without their locks (Request.waitOwned): exactly the set's own slots,
// across more than one word of Requests.own and after the set is reused.
// A receive from AnySource under fault tolerance is a request of its own,
// which a failure may post again from another goroutine, so it keeps its
// lock.
func TestRequestsOwnedSlots(t *testing.T) {
	const n = 70 // past the first 64-bit word of Requests.own
	cfg := DefaultConfig()
	cfg.FT = true
	err := RunConfig(2, cfg, func(c *Comm) error {
		var rs Requests
		bufs := make([][]int64, n)
		for i := range bufs {
			bufs[i] = make([]int64, 1)
		}
		inChunks := func(r *Request) bool {
			for _, ch := range rs.chunks {
				for i := range ch {
					if r == &ch[i] {
						return true
					}
				}
			}
			return false
		}
		for round := range 2 {
			if c.Rank() == 0 {
				for i := range n {
					if err := PostIsend(&rs, c, []int64{int64(round*n + i)}, 1, 7); err != nil {
						return err
					}
				}
			} else {
				for i := range n {
					var err error
					if i%3 == 1 {
						// From AnySource under FT, Comm.PostIrecv makes a
						// request of its own.
						err = c.PostIrecv(&rs, datatype.SliceBytes(bufs[i]), 1, Int64, AnySource, 7)
					} else {
						err = PostIrecvInto(&rs, c, bufs[i], 0, 7)
					}
					if err != nil {
						return err
					}
				}
			}
			if round == 0 && c.Rank() == 1 {
				// One more, to ProcNull: a slot that completed at once.
				if err := PostIrecvInto(&rs, c, make([]int64, 1), ProcNull, 7); err != nil {
					return err
				}
			}
			for i, r := range rs.reqs {
				if got, want := rs.owns(i), inChunks(r); got != want {
					return fmt.Errorf("rank %d, round %d, request %d: owned %v, but a slot of the set: %v", c.Rank(), round, i, got, want)
				}
				if c.Rank() == 1 && i < n && i%3 == 1 && rs.owns(i) {
					return fmt.Errorf("round %d: the AnySource receive %d under FT counts as the set's own", round, i)
				}
			}
			if err := rs.WaitAll(); err != nil {
				return err
			}
			if c.Rank() == 1 {
				for i, b := range bufs {
					if want := int64(round*n + i); b[0] != want {
						return fmt.Errorf("round %d, receive %d: got %d, want %d", round, i, b[0], want)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
