package mpi

import (
	"fmt"
	"testing"
)

// The buffer calls towards a target served by messages (its memory not
// reached: here forced, as for a process of another node) with
// contiguous origins: a Put or Accumulate is one request buffer with the
// packed data in it (packedWithRoom), a Get's answer goes straight into
// the origin; the values must be those of the roundabout way, Rget's
// too.
func TestRMABufByMessage(t *testing.T) {
	const n = 3000 // int32s
	err := Run(2, func(c *Comm) error {
		w, err := NewWindow[int32](c, n)
		if err != nil {
			return err
		}
		me := c.Rank()
		for r := range w.reach {
			if r != me {
				w.reach[r] = nil
			}
		}
		other := 1 - me
		src, got := make([]int32, n), make([]int32, n)
		for i := range src {
			src[i] = int32(i*3 + me)
		}
		if err := w.Lock(other, true); err != nil {
			return err
		}
		if err := w.PutBuf(AsBytes(src), n, Int32, other, 0, n, Int32); err != nil {
			return err
		}
		if err := w.AccumulateBuf(AsBytes(src[:n/2]), n/2, Int32, other, n/2, n/2, Int32, OpSum); err != nil {
			return err
		}
		if err := w.GetBuf(AsBytes(got), n, Int32, other, 0, n, Int32); err != nil {
			return err
		}
		if err := w.Unlock(other); err != nil {
			return err
		}
		for i := range got {
			want := src[i]
			if i >= n/2 {
				want += src[i-n/2]
			}
			if got[i] != want {
				return fmt.Errorf("rank %d: element %d of the target = %d, want %d", me, i, got[i], want)
			}
		}
		// Rget: the answer arrives in the background.
		part := make([]int32, 10)
		if err := w.Lock(other, false); err != nil {
			return err
		}
		r, err := w.RgetBuf(AsBytes(part), len(part), Int32, other, 5, len(part), Int32)
		if err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		if err := w.Unlock(other); err != nil {
			return err
		}
		for i, v := range part {
			if v != got[5+i] {
				return fmt.Errorf("rank %d: Rget element %d = %d, want %d", me, i, v, got[5+i])
			}
		}
		if err := Barrier(c); err != nil {
			return err
		}
		return w.Free()
	})
	if err != nil {
		t.Fatal(err)
	}
}
