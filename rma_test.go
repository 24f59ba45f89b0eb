package mpi_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// Conformance tests for one-sided communication, modelled on the MPICH
// test suite's rma directory, over every transport of the matrix.

type vec2 struct{ X, Y float64 }

// TestRMAPutGetFence: every rank puts its rank into slot `rank` of every
// window, then gets its neighbour's whole window (putfence1, getfence1).
func TestRMAPutGetFence(t *testing.T) {
	matrix(t, 4, func(c *mpi.Comm) error {
		n := c.Size()
		w, err := mpi.NewWindow[int64](c, n)
		if err != nil {
			return err
		}
		for i, v := range w.Local() {
			if v != 0 {
				return check(c, false, "new window not zeroed at %d: %d", i, v)
			}
		}
		if err := w.Fence(); err != nil {
			return err
		}
		for t := 0; t < n; t++ {
			if err := w.Put([]int64{int64(100 + c.Rank())}, t, c.Rank()); err != nil {
				return err
			}
		}
		if err := w.Fence(); err != nil {
			return err
		}
		for i, v := range w.Local() {
			if v != int64(100+i) {
				return check(c, false, "after put+fence slot %d = %d", i, v)
			}
		}
		buf := make([]int64, n)
		if err := w.Get(buf, (c.Rank()+1)%n, 0); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		for i, v := range buf {
			if v != int64(100+i) {
				return check(c, false, "get slot %d = %d", i, v)
			}
		}
		return w.Free()
	})
}

// TestRMAWindowOfStruct: a window over the caller's slice of structs,
// with puts at displacements inside it and a large put and get.
func TestRMAWindowOfStruct(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		const big = 40000 // larger than the eager limit and a shm ring's share
		mem := make([]vec2, big)
		w, err := mpi.WindowOf(c, mem)
		if err != nil {
			return err
		}
		if &w.Local()[0] != &mem[0] {
			return check(c, false, "Local is not the slice passed in")
		}
		right := (c.Rank() + 1) % c.Size()
		src := make([]vec2, big)
		for i := range src {
			src[i] = vec2{float64(c.Rank()), float64(i)}
		}
		if err := w.Fence(); err != nil {
			return err
		}
		if err := w.Put(src, right, 0); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		left := (c.Rank() + c.Size() - 1) % c.Size()
		for i, p := range mem {
			if p != (vec2{float64(left), float64(i)}) {
				return check(c, false, "element %d = %v", i, p)
			}
		}
		got := make([]vec2, 5)
		if err := w.Get(got, right, big-5); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		for i, p := range got {
			if p != (vec2{float64(c.Rank()), float64(big - 5 + i)}) {
				return check(c, false, "get %d = %v", i, p)
			}
		}
		return w.Free()
	})
}

// TestRMAAccumulate: predefined and user operations from every rank at
// once into every element (accfence1, and a closure as op), applied as
// op(target, origin).
func TestRMAAccumulate(t *testing.T) {
	matrix(t, 4, func(c *mpi.Comm) error {
		const n = 64
		w, err := mpi.NewWindow[int64](c, 3*n)
		if err != nil {
			return err
		}
		calls := 0
		sub := mpi.NewOp(func(a, b int64) int64 { calls++; return a - b }, false)
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(c.Rank() + i)
		}
		if err := w.Fence(); err != nil {
			return err
		}
		for t := 0; t < c.Size(); t++ {
			if err := w.Accumulate(vals, t, 0, mpi.Sum[int64]()); err != nil {
				return err
			}
			if err := w.Accumulate(vals, t, n, sub); err != nil {
				return err
			}
			if err := w.Accumulate(vals, t, 2*n, mpi.Max[int64]()); err != nil {
				return err
			}
		}
		if err := w.Fence(); err != nil {
			return err
		}
		s := c.Size()
		l := w.Local()
		for i := 0; i < n; i++ {
			sum := int64(s*i + s*(s-1)/2)
			if l[i] != sum || l[n+i] != -sum || l[2*n+i] != int64(s-1+i) {
				return check(c, false, "element %d: sum %d, sub %d, max %d; want %d, %d, %d", i, l[i], l[n+i], l[2*n+i], sum, -sum, s-1+i)
			}
		}
		if calls < s*n { // more when an update by message had to be retried
			return check(c, false, "the user op ran %d times, want at least %d", calls, s*n)
		}
		return w.Free()
	})
}

// TestRMALockPut: passive target with exclusive locks; each rank writes
// its block of rank 0's window under Lock/Unlock, then reads it back
// under a shared lock (lockcontention, putpscw-like without PSCW).
func TestRMALockPut(t *testing.T) {
	matrix(t, 4, func(c *mpi.Comm) error {
		const blk = 16
		w, err := mpi.NewWindow[int32](c, blk*c.Size())
		if err != nil {
			return err
		}
		vals := make([]int32, blk)
		for i := range vals {
			vals[i] = int32(c.Rank()*1000 + i)
		}
		if err := w.Lock(0, true); err != nil {
			return err
		}
		if err := w.Put(vals, 0, c.Rank()*blk); err != nil {
			return err
		}
		if err := w.Flush(0); err != nil {
			return err
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		got := make([]int32, blk*c.Size())
		if err := w.Lock(0, false); err != nil {
			return err
		}
		if err := w.Get(got, 0, 0); err != nil {
			return err
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
		for i, v := range got {
			if v != int32(i/blk*1000+i%blk) {
				return check(c, false, "element %d = %d", i, v)
			}
		}
		return w.Free()
	})
}

// TestRMAFetchAndOpCounter: all ranks hammer one counter with FetchAndOp
// under LockAll; every value is fetched exactly once and the final value
// is exact (fetchandop contention, and the stress test of the issue).
func TestRMAFetchAndOpCounter(t *testing.T) {
	iters := stressSize(1000)
	matrix(t, 4, func(c *mpi.Comm) error {
		w, err := mpi.NewWindow[int64](c, 1)
		if err != nil {
			return err
		}
		if err := w.LockAll(); err != nil {
			return err
		}
		seen := make([]int64, 0, iters)
		for i := 0; i < iters; i++ {
			v, err := w.FetchAndOp(1, 0, 0, mpi.Sum[int64]())
			if err != nil {
				return err
			}
			seen = append(seen, v)
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		all, err := mpi.Gather(c, seen, 0)
		if err != nil {
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			total := iters * c.Size()
			if got := w.Local()[0]; got != int64(total) {
				return check(c, false, "counter = %d, want %d", got, total)
			}
			hit := make([]bool, total)
			for _, s := range all {
				for _, v := range s {
					if v < 0 || v >= int64(total) || hit[v] {
						return check(c, false, "value %d fetched twice or out of range", v)
					}
					hit[v] = true
				}
			}
		}
		return w.Free()
	})
}

// TestRMAUserOpAtomic: a user closure on a struct accumulated by every
// rank into one element under shared locks is applied atomically per
// element: no update is lost.
func TestRMAUserOpAtomic(t *testing.T) {
	iters := stressSize(300)
	matrix(t, 3, func(c *mpi.Comm) error {
		w, err := mpi.NewWindow[vec2](c, 2)
		if err != nil {
			return err
		}
		add := mpi.NewOp(func(a, b vec2) vec2 { return vec2{a.X + b.X, a.Y + b.Y*2} }, true)
		if err := w.Lock(1, false); err != nil {
			return err
		}
		for i := 0; i < iters; i++ {
			if err := w.Accumulate([]vec2{{1, 1}}, 1, 1, add); err != nil {
				return err
			}
			if _, err := w.FetchAndOp(vec2{1, 0}, 1, 0, add); err != nil {
				return err
			}
		}
		if err := w.Unlock(1); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		if c.Rank() == 1 {
			n := float64(iters * c.Size())
			if l := w.Local(); l[1] != (vec2{n, 2 * n}) || l[0] != (vec2{n, 0}) {
				return check(c, false, "window %v, want [{%v 0} {%v %v}]", l, n, n, 2*n)
			}
		}
		return w.Free()
	})
}

// TestRMACompareAndSwap: every rank tries to claim the same slot; exactly
// one succeeds, and a CAS-based spin lock guards a counter (compare_and_swap).
func TestRMACompareAndSwap(t *testing.T) {
	iters := stressSize(150)
	matrix(t, 4, func(c *mpi.Comm) error {
		w, err := mpi.NewWindow[int64](c, 2)
		if err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			w.Local()[0] = -1
		}
		if err := w.Fence(); err != nil {
			return err
		}
		old, err := w.CompareAndSwap(-1, int64(c.Rank()), 0, 0)
		if err != nil {
			return err
		}
		wins, err := mpi.Allreduce(c, b2i(old == -1), mpi.Sum[int]())
		if err != nil {
			return err
		}
		if wins != 1 {
			return check(c, false, "%d ranks won the CAS", wins)
		}
		if err := w.Fence(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			w.Local()[0] = 0
		}
		if err := w.Fence(); err != nil {
			return err
		}
		// A spin lock in slot 0 of rank 0 guards slot 1.
		if err := w.LockAll(); err != nil {
			return err
		}
		me := int64(c.Rank() + 1)
		for i := 0; i < iters; i++ {
			for {
				o, err := w.CompareAndSwap(0, me, 0, 0)
				if err != nil {
					return err
				}
				if o == 0 {
					break
				}
			}
			v, err := w.FetchAndOp(0, 0, 1, mpi.NewOp(func(a, b int64) int64 { return a }, true))
			if err != nil {
				return err
			}
			if _, err := w.FetchAndOp(v+1, 0, 1, mpi.NewOp(func(a, b int64) int64 { return b }, true)); err != nil {
				return err
			}
			if o, err := w.CompareAndSwap(me, 0, 0, 0); err != nil || o != me {
				return check(c, err == nil, "lock released by %d, held by %d (%v)", me, o, err)
			}
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		if c.Rank() == 0 && w.Local()[1] != int64(iters*c.Size()) {
			return check(c, false, "guarded counter %d, want %d", w.Local()[1], iters*c.Size())
		}
		return w.Free()
	})
}

// TestRMAErrors: the bad-input cases of the issue give their class and
// leave the window usable and untouched.
func TestRMAErrors(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		other := 1 - c.Rank()
		w, err := mpi.NewWindow[int32](c, 4)
		if err != nil {
			return err
		}
		cases := []struct {
			name string
			err  error
			want error
		}{
			{"put before any epoch", w.Put([]int32{1}, other, 0), mpi.ErrRMASync},
			{"get before any epoch", w.Get(make([]int32, 1), other, 0), mpi.ErrRMASync},
			{"flush without lock", w.Flush(other), mpi.ErrRMASync},
			{"flushall without lock", w.FlushAll(), mpi.ErrRMASync},
			{"unlock without lock", w.Unlock(other), mpi.ErrRMASync},
			{"unlockall without lockall", w.UnlockAll(), mpi.ErrRMASync},
			{"lock bad rank", w.Lock(5, true), mpi.ErrRank},
			{"procnull lock", w.Lock(mpi.ProcNull, true), nil},
			{"procnull put", w.Put([]int32{1}, mpi.ProcNull, 100), nil},
			{"procnull unlock", w.Unlock(mpi.ProcNull), nil},
		}
		if err := w.Lock(other, false); err != nil {
			return err
		}
		_, fopErr := w.FetchAndOp(1, other, 4, mpi.Sum[int32]())
		_, casErr := w.CompareAndSwap(0, 1, other, -1)
		cases = append(cases, []struct {
			name string
			err  error
			want error
		}{
			{"put beyond window", w.Put([]int32{1, 2}, other, 3), mpi.ErrRMARange},
			{"get beyond window", w.Get(make([]int32, 5), other, 0), mpi.ErrRMARange},
			{"acc negative disp", w.Accumulate([]int32{1}, other, -1, mpi.Sum[int32]()), mpi.ErrRMARange},
			{"fop beyond", fopErr, mpi.ErrRMARange},
			{"cas negative", casErr, mpi.ErrRMARange},
			{"put bad rank", w.Put([]int32{1}, 2, 0), mpi.ErrRank},
			{"acc zero op", w.Accumulate([]int32{1}, other, 0, mpi.Op[int32]{}), mpi.ErrOp},
			{"lock twice", w.Lock(other, true), mpi.ErrRMASync},
			{"lockall while locked", w.LockAll(), mpi.ErrRMASync},
		}...)
		if err := w.Unlock(other); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		for i, v := range w.Local() {
			if v != 0 {
				return check(c, false, "a failed call wrote %d at %d", v, i)
			}
		}
		if err := w.Free(); err != nil {
			return err
		}
		cases = append(cases, []struct {
			name string
			err  error
			want error
		}{
			{"put after free", w.Put([]int32{1}, other, 0), mpi.ErrRMASync},
			{"fence after free", w.Fence(), mpi.ErrRMASync},
			{"lock after free", w.Lock(other, false), mpi.ErrRMASync},
			{"free twice", w.Free(), mpi.ErrRMASync},
		}...)
		for _, tc := range cases {
			if tc.want == nil {
				if tc.err != nil {
					return check(c, false, "%s: %v", tc.name, tc.err)
				}
				continue
			}
			var e *mpi.Error
			if !errors.Is(tc.err, tc.want) || !errors.As(tc.err, &e) {
				return check(c, false, "%s: got %v, want %v as *mpi.Error", tc.name, tc.err, tc.want)
			}
		}
		// Creation errors: a non-plain type on every rank, a negative size on one.
		if _, err := mpi.NewWindow[string](c, 1); !errors.Is(err, mpi.ErrType) {
			return check(c, false, "window of strings: %v", err)
		}
		n := 1
		if c.Rank() == 1 {
			n = -1
		}
		if _, err := mpi.NewWindow[int](c, n); err == nil {
			return check(c, false, "negative size accepted")
		} else if c.Rank() == 1 && !errors.Is(err, mpi.ErrCount) {
			return check(c, false, "negative size: %v", err)
		}
		// Empty windows are valid.
		e, err := mpi.WindowOf[float64](c, nil)
		if err != nil {
			return err
		}
		if err := e.Fence(); err != nil {
			return err
		}
		if err := e.Put([]float64{1}, other, 0); !errors.Is(err, mpi.ErrRMARange) {
			return check(c, false, "put into an empty window: %v", err)
		}
		if err := e.Fence(); err != nil {
			return err
		}
		return e.Free()
	})
}

// TestRMAMismatchedTypes: ranks that make a window with different element
// types all get ErrType, none hangs.
func TestRMAMismatchedTypes(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		var err error
		if c.Rank() == 0 {
			_, err = mpi.NewWindow[int64](c, 1)
		} else {
			_, err = mpi.NewWindow[float64](c, 1)
		}
		if !errors.Is(err, mpi.ErrType) {
			return check(c, false, "mismatched window types: %v", err)
		}
		return nil
	})
}

// TestRMAPassiveProgress: the target computes without calling MPI for a
// while; origins lock, put, get and unlock its window meanwhile.
func TestRMAPassiveProgress(t *testing.T) {
	const busy = time.Second
	matrix(t, 3, func(c *mpi.Comm) error {
		w, err := mpi.NewWindow[int64](c, c.Size())
		if err != nil {
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			var x atomic.Int64
			end := time.Now().Add(busy)
			for time.Now().Before(end) { // compute, no MPI
				x.Add(1)
			}
		} else {
			start := time.Now()
			if err := w.Lock(0, true); err != nil {
				return err
			}
			if err := w.Put([]int64{int64(c.Rank())}, 0, c.Rank()); err != nil {
				return err
			}
			v, err := w.FetchAndOp(1, 0, 0, mpi.Sum[int64]())
			if err != nil {
				return err
			}
			if err := w.Unlock(0); err != nil {
				return err
			}
			if d := time.Since(start); d > busy*2/3 {
				return check(c, false, "passive target served only after %v (fetched %d)", d, v)
			}
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			l := w.Local()
			if l[0] != int64(c.Size()-1) || l[1] != 1 || l[2] != 2 {
				return check(c, false, "window %v", l)
			}
		}
		return w.Free()
	})
}

// TestRMATargetDies: an origin waiting on a target that is gone gets an
// error, not a hang.
func TestRMATargetDies(t *testing.T) {
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan error, 1)
			done := make(chan error, 1)
			go func() {
				done <- mpi.RunConfig(2, tc.cfg, func(c *mpi.Comm) error {
					w, err := mpi.NewWindow[int64](c, 1)
					if c.Rank() == 1 {
						if err != nil {
							return err
						}
						if _, _, err := mpi.Recv[int](c, 0, 0); err != nil {
							return err
						}
						if err := w.Lock(1, true); err != nil {
							return err
						}
						return fmt.Errorf("rank 1 dies holding its lock")
					}
					if err == nil {
						err = mpi.Send(c, 1, 1, 0)
					}
					if err == nil {
						time.Sleep(50 * time.Millisecond)
						err = w.Lock(1, true) // never granted: rank 1 is gone
					}
					got <- err
					return nil
				})
			}()
			select {
			case err := <-got:
				if !errors.Is(err, mpi.ErrProcFailed) {
					t.Fatalf("lock of a dead target: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("hang: lock of a dead target did not return")
			}
			if err := <-done; err == nil {
				t.Fatal("job with a failed rank succeeded")
			}
		})
	}
}
