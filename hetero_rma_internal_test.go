package mpi

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestHeteroWindow runs the one-sided calls between mixedRun's ranks:
// rank 0 this machine, ranks 1 and 2 the other byte order. Arithmetic
// happens at rank 0's window (predefined operations run at the target) or
// is bitwise (user operations run at the origin).
func TestHeteroWindow(t *testing.T) {
	const n = 3
	// Slots of each rank's window: 0-2 Puts from each rank, 3 sums, 4
	// compare-and-swap, 5 bitwise user op, 6-7 PutBuf of a vector.
	mixedRun(t, n, func(c *Comm) error {
		c.SetErrHandler(ErrorsReturn)
		r := c.Rank()
		// The window's set-up exchanges the library's own values, which
		// these ranks hold in this machine's order whatever they play:
		// make it with one representation, then play the mixed job.
		reprs := c.p.reprs
		c.p.reprs = nil
		w, err := NewWindow[int64](c, 8)
		c.p.reprs = reprs
		if err != nil {
			return err
		}
		w.hetReach()
		defer w.Free()
		val := func(i int) int64 { return int64(i+1)<<40 | int64(i)<<8 | 7 }
		w.Local()[r] = asOwn(c, val(r))
		check := func(what string, got, want any) {
			if err := expect(what, got, want); err != nil {
				t.Errorf("rank %d: %v", r, err)
			}
		}
		if err := w.Fence(); err != nil {
			return err
		}
		for tg := range n {
			if tg == r {
				continue
			}
			if err := w.Put([]int64{asOwn(c, val(r))}, tg, r); err != nil {
				return err
			}
		}
		if err := w.Accumulate([]int64{asOwn(c, int64(r+1)<<33)}, 0, 3, Sum[int64]()); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		check("slots after Put", w.Local()[:3], asOwn(c, []int64{val(0), val(1), val(2)}))
		if r == 0 {
			check("Accumulate at rank 0", w.Local()[3], int64(1+2+3)<<33)
		}
		got := make([]int64, 3)
		if err := w.Get(got, (r+1)%n, 0); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		check("Get", got, asOwn(c, []int64{val(0), val(1), val(2)}))

		// Passive target: compare-and-swap, fetch-and-op and a user op at
		// rank 0.
		if err := w.Lock(0, true); err != nil {
			return err
		}
		old, err := w.CompareAndSwap(asOwn(c, int64(0)), asOwn(c, int64(r+100)<<32), 0, 4)
		if err != nil {
			return err
		}
		if o := asOwn(c, old); o != 0 && (o>>32 < 100 || o>>32 > 102 || o&(1<<32-1) != 0) {
			t.Errorf("rank %d: CompareAndSwap returned %#x", r, old)
		}
		if r != 0 {
			f, err := w.FetchAndOp(asOwn(c, int64(1)<<(20*r)), 0, 3, Sum[int64]())
			if err != nil {
				return err
			}
			if fo := asOwn(c, f); fo&(1<<20-1) != 0 || fo < 5<<33 {
				t.Errorf("rank %d: FetchAndOp returned %#x", r, fo)
			}
		}
		if err := w.Accumulate([]int64{asOwn(c, int64(1)<<(8*r+32))}, 0, 5, NewOp(func(a, b int64) int64 { return a | b }, true)); err != nil {
			return err
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
		if err := w.Fence(); err != nil { // everyone's done at rank 0
			return err
		}
		if r == 0 {
			check("FetchAndOp sum at rank 0", w.Local()[3], int64(6)<<33+1<<20+1<<40)
			check("user op at rank 0", w.Local()[5], int64(1)<<32|1<<40|1<<48)
			if cs := w.Local()[4] >> 32; cs < 100 || cs > 102 {
				t.Errorf("rank 0: compare-and-swap slot holds %#x", w.Local()[4])
			}
		}
		// The fence also opened the next epoch, whose AccumulateBuf adds
		// to slot 3: no one starts it before rank 0 has read the slot.
		if err := Barrier(c); err != nil {
			return err
		}

		// Low-level: a vector of two int64 (stride 2) into slots 6-7 of
		// the next rank, read back with a contiguous datatype.
		vec, err := NewVector(2, 1, 2, Int64)
		if err == nil {
			err = vec.Commit()
		}
		if err != nil {
			return err
		}
		src := asOwn(c, []int64{int64(r) << 48, -1, -int64(r) - 1, -1})
		next := (r + 1) % n
		if err := w.PutBuf(rawBytes(src), 1, vec, next, 6, 2, Int64); err != nil {
			return err
		}
		if err := w.AccumulateBuf(rawBytes(asOwn(c, []int64{int64(r + 1)})), 1, Int64, 0, 3, 1, Int64, OpSum); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		prev := (r + n - 1) % n
		check("PutBuf vector", w.Local()[6:8], asOwn(c, []int64{int64(prev) << 48, -int64(prev) - 1}))
		back := make([]int64, 2)
		if err := w.GetBuf(rawBytes(back), 2, Int64, next, 6, 2, Int64); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		check("GetBuf", back, asOwn(c, []int64{int64(r) << 48, -int64(r) - 1}))
		if r == 0 {
			check("AccumulateBuf at rank 0", w.Local()[3], int64(6)<<33+1<<20+1<<40+6)
		}

		// Raw bytes towards a target of the other order cannot be
		// converted: a clear error, nothing written.
		if r == 1 {
			err := w.PutBuf(make([]byte, 8), 8, Byte, 0, 6, 1, Int64)
			var me *Error
			if !errors.As(err, &me) || !errors.Is(err, ErrType) || !strings.Contains(err.Error(), fmt.Sprintf("target 0 runs with %s and this rank with %s", otherRepr(), nativeRepr)) {
				t.Errorf("rank 1: PutBuf of raw bytes to rank 0: %v", err)
			}
		}
		return w.Fence()
	})
}
