package mpi

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi/internal/bindhook"
)

// TestRecycleRequest: a finished request given back through
// bindhook.RecycleRequest is the next non-blocking call's request, zeroed,
// and the message of that call is right; a request given back twice is
// taken once; a request still live and a persistent one are not taken
// back.
func TestRecycleRequest(t *testing.T) {
	err := Run(2, func(c *Comm) error {
		peer := 1 - c.Rank()
		exchange := func(v int64) (*Request, *Request, []int64, error) {
			in := make([]int64, 1)
			rr, err := c.Irecv(AsBytes(in), 1, Int64, peer, 7)
			if err != nil {
				return nil, nil, nil, err
			}
			sr, err := c.Isend(AsBytes([]int64{v}), 1, Int64, peer, 7)
			if err != nil {
				return nil, nil, nil, err
			}
			return rr, sr, in, nil
		}
		held := func() int {
			c.p.ers.mu.Lock()
			defer c.p.ers.mu.Unlock()
			return len(c.p.ers.done)
		}
		rr, sr, in, err := exchange(10 + int64(c.Rank()))
		if err != nil {
			return err
		}
		// Live: not taken back.
		before := held()
		bindhook.RecycleRequest(rr)
		if held() != before {
			return fmt.Errorf("a live receive was taken back")
		}
		if _, err := rr.Wait(); err != nil {
			return err
		}
		if _, err := sr.Wait(); err != nil {
			return err
		}
		if in[0] != 10+int64(peer) {
			return fmt.Errorf("received %d, want %d", in[0], 10+peer)
		}
		bindhook.RecycleRequest(rr)
		bindhook.RecycleRequest(rr) // twice: taken once
		if held() != before+1 {
			return fmt.Errorf("%d requests held after one was given back (twice), want %d", held(), before+1)
		}
		// The next call's request is rr's memory, and works.
		rr2, sr2, in2, err := exchange(20 + int64(c.Rank()))
		if err != nil {
			return err
		}
		if rr2 != rr && sr2 != rr {
			return fmt.Errorf("the next requests %p and %p are not the one given back, %p", rr2, sr2, rr)
		}
		if err := WaitAll(rr2, sr2); err != nil {
			return err
		}
		if in2[0] != 20+int64(peer) {
			return fmt.Errorf("received %d through a recycled request, want %d", in2[0], 20+peer)
		}
		// A persistent request is not taken back.
		buf := make([]int64, 1)
		pr, err := c.RecvInit(AsBytes(buf), 1, Int64, peer, 8)
		if err != nil {
			return err
		}
		ps, err := c.SendInit(AsBytes([]int64{1}), 1, Int64, peer, 8)
		if err != nil {
			return err
		}
		if err := StartAll(pr, ps); err != nil {
			return err
		}
		if err := WaitAll(pr, ps); err != nil {
			return err
		}
		before = held()
		bindhook.RecycleRequest(pr)
		bindhook.RecycleRequest(ps)
		if held() != before {
			return fmt.Errorf("a persistent request was taken back")
		}
		pr.Free()
		ps.Free()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
