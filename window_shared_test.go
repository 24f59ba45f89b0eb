package mpi_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/mpigo/mpi"
)

// TestRMASharedWindowContiguous: NewSharedWindow (MPI_Win_allocate_shared)
// lays the ranks' parts out one after the other in one allocation, so a
// rank walks from rank 0's first element through every rank's part with
// plain loads and stores (MPICH's rma/win_shared read zeros, then faulted,
// when each rank's part was a segment of its own). Parts of 0 elements
// take no room. One-sided calls and locks work on it as on any window;
// over tcp, where the ranks share no memory, every rank gets ErrRMAShared.
func TestRMASharedWindowContiguous(t *testing.T) {
	sizes := []int{3, 0, 5, 2}
	matrix(t, len(sizes), func(c *mpi.Comm) error {
		me := c.Rank()
		w, err := mpi.NewSharedWindow[int64](c, sizes[me])
		if errors.Is(err, mpi.ErrRMAShared) {
			// Only where the ranks reach each other by messages alone.
			o, oerr := mpi.NewWindow[int64](c, 1)
			if oerr != nil {
				return oerr
			}
			if _, qerr := o.SharedQuery((me + 1) % c.Size()); !errors.Is(qerr, mpi.ErrRank) {
				return check(c, false, "ErrRMAShared (%v), yet the next rank's memory is in reach (%v)", err, qerr)
			}
			return o.Free()
		}
		if err != nil {
			return err
		}
		if w.Flavor() != "shared" || len(w.Local()) != sizes[me] {
			return check(c, false, "flavor %q, %d local elements", w.Flavor(), len(w.Local()))
		}
		first, err := w.SharedQuery(0)
		if err != nil {
			return err
		}
		total := 0
		for r, n := range sizes {
			s, err := w.SharedQuery(r)
			if err != nil {
				return err
			}
			if len(s) != n {
				return check(c, false, "rank %d's part has %d elements, want %d", r, len(s), n)
			}
			if n > 0 && &s[0] != &unsafe.Slice(&first[0], total+1)[total] {
				return check(c, false, "rank %d's part does not follow rank %d's", r, r-1)
			}
			total += n
		}
		all := unsafe.Slice(&first[0], total)
		if err := w.LockAll(); err != nil {
			return err
		}
		for i := range w.Local() {
			w.Local()[i] = int64(100*me + i)
		}
		if err := w.Sync(); err != nil {
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if err := w.Sync(); err != nil {
			return err
		}
		i := 0
		for r, n := range sizes {
			for j := range n {
				if all[i] != int64(100*r+j) {
					return check(c, false, "element %d (rank %d's [%d]) is %d, want %d", i, r, j, all[i], 100*r+j)
				}
				i++
			}
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		// One-sided calls on the same memory: rank 2's last element
		// counts everyone; Get reads rank 3's part.
		if err := w.Lock(2, false); err != nil {
			return err
		}
		if err := w.Accumulate([]int64{1}, 2, 4, mpi.Sum[int64]()); err != nil {
			return err
		}
		if err := w.Unlock(2); err != nil {
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		got := make([]int64, 2)
		if err := w.Lock(3, false); err != nil {
			return err
		}
		if err := w.Get(got, 3, 0); err != nil {
			return err
		}
		if err := w.Unlock(3); err != nil {
			return err
		}
		if got[0] != 300 || got[1] != 301 || all[3+5-1] != 204+int64(len(sizes)) {
			return check(c, false, "get of rank 3: %v; rank 2's last: %d", got, all[7])
		}
		if err := w.Lock(1, false); err != nil {
			return err
		}
		if err := w.Put([]int64{1}, 1, 0); !errors.Is(err, mpi.ErrRMARange) {
			return check(c, false, "put into rank 1's empty part: %v", err)
		}
		if err := w.Unlock(1); err != nil {
			return err
		}
		if err := w.Free(); err != nil {
			return err
		}
		// As NewWindow's, the memory reads zeros after Free.
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		for i, v := range all {
			if v != 0 {
				return check(c, false, "element %d reads %d after Free", i, v)
			}
		}
		return mpi.Barrier(c)
	})
}
