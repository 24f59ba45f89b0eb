package mpi

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/mpigo/mpi/internal/rma"
	"github.com/mpigo/mpi/internal/transport"
)

// sharedArenaJob runs f on n ranks over shared memory with AllocMem's
// chunks shared and named after rank 0, as they are for a process that is
// one rank of a launched job (the goroutine ranks here stand for the
// processes of one node).
func sharedArenaJob(t *testing.T, n int, f func(c *Comm) error) {
	t.Helper()
	procArena()
	oldArena, oldOf := arenaState.arena, arenaOf
	arenaState.arena = rma.NewArena(newArenaChunk, dropArenaChunk)
	var p0 atomic.Pointer[proc]
	arenaOf = func() (*proc, transport.Segments) {
		p := p0.Load()
		if p == nil {
			return nil, nil
		}
		return p, p.segmentsFor(1)
	}
	defer func() {
		// The chunks' files go as they go when a launched rank ends.
		removeArenaFiles()
		arenaState.arena, arenaOf = oldArena, oldOf
	}()
	cfg := DefaultConfig()
	cfg.Transport = "shm"
	err := RunConfig(n, cfg, func(c *Comm) error {
		if c.Rank() == 0 {
			p0.Store(c.p)
		}
		if err := Barrier(c); err != nil {
			return err
		}
		return f(c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPeerDynamicWindow: between processes of one node, a dynamic window
// over AllocMem's memory is reached directly (the lock, the data and the
// accumulates), memory from elsewhere by message with the lock still
// direct, and both give the same answers under contention; memory the
// target detached is ErrRMARange again, not silently reached.
func TestPeerDynamicWindow(t *testing.T) {
	const n, rounds = 4, 50
	sharedArenaJob(t, n, func(c *Comm) error {
		me := c.Rank()
		w, err := NewDynamicWindow[int64](c)
		if err != nil {
			return err
		}
		shared, err := AllocMem[int64](8)
		if err != nil {
			return err
		}
		private := make([]int64, 8)
		sd, err := w.Attach(shared)
		if err != nil {
			return err
		}
		pd, err := w.Attach(private)
		if err != nil {
			return err
		}
		disps, err := Allgather(c, [2]int{sd, pd})
		if err != nil {
			return err
		}
		for r := range n {
			if r == me {
				continue
			}
			if w.peers[r] == nil {
				return fmt.Errorf("rank %d: rank %d's window has no shared header", me, r)
			}
			if w.direct(r, disps[r][0], 8) == nil {
				return fmt.Errorf("rank %d: rank %d's AllocMem memory is not reached directly", me, r)
			}
			if w.direct(r, disps[r][1], 8) != nil {
				return fmt.Errorf("rank %d: rank %d's Go memory is reached directly", me, r)
			}
		}
		// Every rank adds to every rank's both regions, under exclusive
		// locks (Get, Put) and under shared ones (Accumulate, FetchAndOp).
		for range rounds {
			for r := range n {
				for k := range 2 {
					if err := w.Lock(r, true); err != nil {
						return err
					}
					v := make([]int64, 1)
					if err := w.Get(v, r, disps[r][k]); err != nil {
						return err
					}
					v[0]++
					if err := w.Put(v, r, disps[r][k]); err != nil {
						return err
					}
					if err := w.Unlock(r); err != nil {
						return err
					}
					if err := w.Lock(r, false); err != nil {
						return err
					}
					if err := w.Accumulate([]int64{1}, r, disps[r][k]+1, Sum[int64]()); err != nil {
						return err
					}
					if _, err := w.FetchAndOp(1, r, disps[r][k]+2, Sum[int64]()); err != nil {
						return err
					}
					if err := w.Unlock(r); err != nil {
						return err
					}
				}
			}
		}
		if err := Barrier(c); err != nil {
			return err
		}
		if err := w.Lock(me, true); err != nil {
			return err
		}
		for k, mem := range [][]int64{shared, private} {
			for i := range 3 {
				if mem[i] != n*rounds {
					return fmt.Errorf("rank %d, region %d, element %d: %d, want %d", me, k, i, mem[i], n*rounds)
				}
			}
		}
		if err := w.Unlock(me); err != nil {
			return err
		}
		if err := Barrier(c); err != nil {
			return err
		}
		if err := w.Detach(shared); err != nil {
			return err
		}
		if err := Barrier(c); err != nil {
			return err
		}
		next := (me + 1) % n
		if err := w.Lock(next, false); err != nil {
			return err
		}
		err = w.Put([]int64{7}, next, disps[next][0])
		if uerr := w.Unlock(next); uerr != nil {
			return uerr
		}
		if !errors.Is(err, ErrRMARange) {
			return fmt.Errorf("rank %d: Put into detached memory: %v, want ErrRMARange", me, err)
		}
		if err := Barrier(c); err != nil {
			return err
		}
		if err := w.Free(); err != nil {
			return err
		}
		return FreeMem(shared)
	})
}

// TestPeerWindowOf: a WindowOf window over AllocMem's memory is reached
// whole by the other processes of the node, one over Go memory by message
// with its lock taken directly; both count right under contention.
func TestPeerWindowOf(t *testing.T) {
	const n, rounds = 3, 100
	sharedArenaJob(t, n, func(c *Comm) error {
		me := c.Rank()
		raw, err := AllocMem[int64](4)
		if err != nil {
			return err
		}
		for k, local := range [][]int64{raw, make([]int64, 4)} {
			w, err := WindowOf(c, local)
			if err != nil {
				return err
			}
			for r := range n {
				if r == me {
					continue
				}
				whole, part := w.reach[r] != nil, w.peers[r] != nil
				if k == 0 && !whole || k == 1 && (whole || !part) {
					return fmt.Errorf("rank %d, window %d: rank %d reached whole %v, in part %v", me, k, r, whole, part)
				}
			}
			for range rounds {
				for r := range n {
					if err := w.Lock(r, true); err != nil {
						return err
					}
					v := make([]int64, 1)
					if err := w.Get(v, r, 0); err != nil {
						return err
					}
					if err := w.Put([]int64{v[0] + 1}, r, 0); err != nil {
						return err
					}
					if _, err := w.CompareAndSwap(0, 0, r, 1); err != nil {
						return err
					}
					if err := w.Unlock(r); err != nil {
						return err
					}
				}
			}
			if err := w.Free(); err != nil {
				return err
			}
			if local[0] != n*rounds {
				return fmt.Errorf("rank %d, window %d: %d, want %d", me, k, local[0], n*rounds)
			}
		}
		return FreeMem(raw)
	})
}
