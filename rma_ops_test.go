package mpi_test

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi"
)

// TestRMAPSCW: generalized active target; every rank exposes its window
// to its left neighbour and accesses its right one (putpscw1, test2).
func TestRMAPSCW(t *testing.T) {
	matrix(t, 4, func(c *mpi.Comm) error {
		n := c.Size()
		right, left := (c.Rank()+1)%n, (c.Rank()+n-1)%n
		w, err := mpi.NewWindow[float64](c, 8)
		if err != nil {
			return err
		}
		wl, wr := c.WorldRank(left), c.WorldRank(right)
		gl, err := mpi.GroupEmpty.Union(c.Group())
		if err != nil {
			return err
		}
		from, err := gl.Incl([]int{left})
		if err != nil {
			return err
		}
		to, err := gl.Incl([]int{right})
		if err != nil {
			return err
		}
		if got := from.WorldRanks()[0]; got != wl {
			return check(c, false, "group of the left neighbour holds %d, want %d", got, wl)
		}
		_ = wr
		if err := w.Put([]float64{1}, right, 0); !errors.Is(err, mpi.ErrRMASync) {
			return check(c, false, "put before Start: %v", err)
		}
		if err := w.Wait(); !errors.Is(err, mpi.ErrRMASync) {
			return check(c, false, "Wait without Post: %v", err)
		}
		if err := w.Complete(); !errors.Is(err, mpi.ErrRMASync) {
			return check(c, false, "Complete without Start: %v", err)
		}
		for round := 0; round < 3; round++ {
			if err := w.Post(from); err != nil {
				return err
			}
			if err := w.Start(to); err != nil {
				return err
			}
			vals := []float64{float64(c.Rank()), float64(round)}
			if err := w.Put(vals, right, 2); err != nil {
				return err
			}
			if err := w.Accumulate([]float64{1}, right, 7, mpi.Sum[float64]()); err != nil {
				return err
			}
			if err := w.Complete(); err != nil {
				return err
			}
			if round == 2 {
				if err := pollUntil("exposure epoch", w.Test); err != nil {
					return err
				}
			} else if err := w.Wait(); err != nil {
				return err
			}
			l := w.Local()
			if l[2] != float64(left) || l[3] != float64(round) || l[7] != float64(round+1) {
				return check(c, false, "round %d: window %v", round, l)
			}
		}
		return w.Free()
	})
}

// TestRMAGetAccumulate: get-accumulate with Sum, Replace and NoOp, the
// request forms, local flushes and Sync.
func TestRMAGetAccumulate(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		w, err := mpi.NewWindow[int32](c, 4)
		if err != nil {
			return err
		}
		if w.DispUnit() != 4 || w.Flavor() != "allocate" || w.Model() != "unified" || w.Size(2) != 4 {
			return check(c, false, "attributes %d %s %s %d", w.DispUnit(), w.Flavor(), w.Model(), w.Size(2))
		}
		if w.Group().Size() != c.Size() {
			return check(c, false, "group size %d", w.Group().Size())
		}
		w.SetName("counters")
		if err := w.Flush(0); err == nil || !errors.Is(err, mpi.ErrRMASync) || w.Name() != "counters" {
			return check(c, false, "flush outside epoch: %v (name %q)", err, w.Name())
		}
		if err := w.LockAll(); err != nil {
			return err
		}
		old := make([]int32, 2)
		if err := w.GetAccumulate([]int32{1, 10}, old, 0, 0, mpi.Sum[int32]()); err != nil {
			return err
		}
		if err := w.FlushLocalAll(); err != nil {
			return err
		}
		if err := w.FlushLocal(0); err != nil {
			return err
		}
		if err := w.Sync(); err != nil {
			return err
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if err := w.Lock(0, true); err != nil {
			return err
		}
		cur := make([]int32, 2)
		r, err := w.RgetAccumulate(nil2(), cur, 0, 0, mpi.NoOp[int32]())
		if err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		s := int32(c.Size())
		if cur[0] != s || cur[1] != 10*s {
			return check(c, false, "atomic read %v, want [%d %d]", cur, s, 10*s)
		}
		r, err = w.Raccumulate([]int32{7}, 0, 3, mpi.Replace[int32]())
		if err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		r, err = w.Rput([]int32{5}, 0, 2)
		if err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		if err := w.Flush(0); err != nil {
			return err
		}
		got := make([]int32, 2)
		r, err = w.Rget(got, 0, 2)
		if err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
		if got[0] != 5 || got[1] != 7 {
			return check(c, false, "rget %v after rput 5 and replace 7", got)
		}
		if err := w.GetAccumulate([]int32{1}, make([]int32, 2), 0, 0, mpi.Sum[int32]()); !errors.Is(err, mpi.ErrCount) {
			return check(c, false, "mismatched result length: %v", err)
		}
		// Sum is not defined on Byte, but with no elements there is
		// nothing to combine: accepted, as MPICH and Open MPI do.
		if err := w.Lock(0, false); err != nil {
			return err
		}
		b := make([]byte, 1)
		if err := w.GetAccumulateBuf(b, 0, mpi.Byte, b, 0, mpi.Byte, 0, 0, 0, mpi.Byte, mpi.OpSum); err != nil {
			return check(c, false, "zero bytes with OpSum: %v", err)
		}
		if err := w.GetAccumulateBuf(b, 1, mpi.Byte, b, 1, mpi.Byte, 0, 0, 1, mpi.Byte, mpi.OpSum); !errors.Is(err, mpi.ErrOp) {
			return check(c, false, "one byte with OpSum: %v, want ErrOp", err)
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
		return w.Free()
	})
}

func nil2() []int32 { return make([]int32, 2) }

// TestRMASharedQuery: direct loads and stores into a neighbour's window
// where memory is shared (allocate_shared, shared_query); ErrRank where it
// is not (tcp).
func TestRMASharedQuery(t *testing.T) {
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			err := mpi.RunConfig(3, tc.cfg, func(c *mpi.Comm) error {
				w, err := mpi.NewWindow[int64](c, 4)
				if err != nil {
					return err
				}
				right := (c.Rank() + 1) % c.Size()
				s, err := w.SharedQuery(right)
				switch tc.cfg.Transport {
				case "tcp", "ucx", "ofi":
					// Goroutine ranks over a network transport: no
					// rank addresses another's window.
					if !errors.Is(err, mpi.ErrRank) {
						return check(c, false, "shared query over %s: %v", tc.cfg.Transport, err)
					}
					return w.Free()
				}
				if err != nil {
					return err
				}
				if len(s) != 4 {
					return check(c, false, "shared slice of %d elements", len(s))
				}
				if err := w.Fence(); err != nil {
					return err
				}
				s[1] = int64(10 + c.Rank())
				if err := w.Fence(); err != nil {
					return err
				}
				left := (c.Rank() + c.Size() - 1) % c.Size()
				if got := w.Local()[1]; got != int64(10+left) {
					return check(c, false, "store through shared query: %d, want %d", got, 10+left)
				}
				return w.Free()
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRMAErrHandler: a window's handler sees its errors; it starts as
// the communicator's; hints round-trip.
func TestRMAErrHandler(t *testing.T) {
	err := mpi.Run(2, func(c *mpi.Comm) error {
		w, err := mpi.NewWindow[int](c, 1)
		if err != nil {
			return err
		}
		if w.ErrHandler() != mpi.ErrorsReturn {
			return check(c, false, "default handler is not the communicator's")
		}
		var seen []error
		w.SetErrHandler(mpi.NewErrHandler(func(_ *mpi.Comm, err error) { seen = append(seen, err) }))
		err = w.Put([]int{1}, 1-c.Rank(), 0) // no epoch
		if len(seen) != 1 || seen[0] != err || !errors.Is(err, mpi.ErrRMASync) {
			return check(c, false, "handler saw %v for %v", seen, err)
		}
		info := mpi.NewInfo()
		info.Set("no_locks", "true")
		if err := w.SetInfo(info); err != nil {
			return err
		}
		if v, ok := w.Info().Get("no_locks"); !ok || v != "true" {
			return check(c, false, "hint no_locks = %q %v", v, ok)
		}
		return w.Free()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRMADynamic: dynamic windows; memory attached after creation is
// reached at the displacement Attach returned, detached memory is not.
func TestRMADynamic(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		w, err := mpi.NewDynamicWindow[int64](c)
		if err != nil {
			return err
		}
		first := make([]int64, 2) // attached and detached again
		a, err := w.Attach(first)
		if err != nil {
			return err
		}
		mem := make([]int64, 4)
		base, err := w.Attach(mem)
		if err != nil {
			return err
		}
		if err := w.Detach(first); err != nil {
			return err
		}
		bases, err := mpi.Allgather(c, [2]int{a, base})
		if err != nil {
			return err
		}
		right := (c.Rank() + 1) % c.Size()
		if err := w.Lock(right, false); err != nil {
			return err
		}
		if err := w.Put([]int64{int64(c.Rank() + 1)}, right, bases[right][1]+2); err != nil {
			return err
		}
		if _, err := w.FetchAndOp(5, right, bases[right][1]+3, mpi.Sum[int64]()); err != nil {
			return err
		}
		if err := w.Put([]int64{1}, right, bases[right][0]); !errors.Is(err, mpi.ErrRMARange) {
			return check(c, false, "put into detached memory: %v", err)
		}
		if err := w.Put([]int64{1, 2}, right, bases[right][1]+3); !errors.Is(err, mpi.ErrRMARange) {
			return check(c, false, "put across the end of attached memory: %v", err)
		}
		if err := w.Unlock(right); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		left := (c.Rank() + c.Size() - 1) % c.Size()
		if mem[2] != int64(left+1) || mem[3] != 5 || mem[0] != 0 || first[0] != 0 {
			return check(c, false, "attached memory %v, detached %v", mem, first)
		}
		if err := w.Detach(make([]int64, 1)); !errors.Is(err, mpi.ErrArg) {
			return check(c, false, "detach of memory never attached: %v", err)
		}
		return w.Free()
	})
}
