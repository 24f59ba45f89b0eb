//go:build cgo && (mpigo_ucx || mpigo_ofi)

package mpi

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"time"
)

// fabricRMAJob is the job of TestFabricRMA (over UCX, and over libfabric):
// windows whose puts and gets go through the fabric (rma_fabric.go), or,
// with off, by message. The target's runtime serves no message for them
// (its server applies nothing, no message waits to be flushed), while a
// target that computes without calling MPI still sees them; low-level
// contiguous puts and gets take the same road; accumulates still go by
// message.
func fabricRMAJob(off bool) func(c *Comm) error {
	return func(c *Comm) error {
		w, err := NewWindow[int64](c, 2048)
		if err != nil {
			return err
		}
		if got := w.remote(1-c.Rank()) != nil; got == off {
			return fmt.Errorf("rank %d: target reached through the fabric: %v, want %v", c.Rank(), got, !off)
		}
		if c.Rank() == 1 {
			// Compute without MPI while rank 0 works on this
			// window, then check what it left.
			time.Sleep(100 * time.Millisecond)
			if err := Barrier(c); err != nil {
				return err
			}
			w.synced()
			for i, v := range w.Local()[:500] {
				if v != int64(i*3) {
					return fmt.Errorf("element %d: %d, want %d", i, v, i*3)
				}
			}
			if v := w.Local()[1000]; v != 5+6 {
				return fmt.Errorf("accumulated element: %d, want 11", v)
			}
			if v := w.Local()[600]; v != 77 {
				return fmt.Errorf("low-level put: %d, want 77", v)
			}
			for i, v := range w.Local()[1100:1640] {
				want := int64(0)
				switch {
				case i < 128:
					want = int64(7 + i)
				case i >= 256 && i < 384:
					want = int64(7 + i - 128)
				case i >= 512 && i < 540 && i%2 == 0:
					want = -int64(i)
				}
				if v != want {
					return fmt.Errorf("element %d after the strided puts: %d, want %d", 1100+i, v, want)
				}
			}
			want := uint64(8)
			if w.atomicsTo(0) != nil {
				// The accumulates through the fabric's atomics
				// (rma_atomic.go), and so no message for the Flush
				// after them either.
				want = 5
			}
			if !off && w.applied.Load() != want {
				// Lock, the two accumulates and the Flush after
				// them, the strided put of short runs, the Flush
				// after it and its get, and Unlock; no other put or
				// get by message.
				return fmt.Errorf("the target's server applied %d requests, want %d", w.applied.Load(), want)
			}
			return w.Free()
		}
		if err := w.Lock(1, false); err != nil {
			return err
		}
		vals := make([]int64, 500)
		for i := range vals {
			vals[i] = int64(i * 3)
		}
		if err := w.Put(vals, 1, 0); err != nil {
			return err
		}
		if !off && w.pend[1].Load() != 0 {
			return fmt.Errorf("a put through the fabric left %d messages to flush", w.pend[1].Load())
		}
		if err := w.Flush(1); err != nil {
			return err
		}
		got := make([]int64, 500)
		if err := w.Get(got, 1, 0); err != nil {
			return err
		}
		for i := range got {
			if got[i] != vals[i] {
				return fmt.Errorf("get after flush: element %d is %d, want %d", i, got[i], vals[i])
			}
		}
		if err := w.Accumulate([]int64{5}, 1, 1000, Sum[int64]()); err != nil {
			return err
		}
		if err := w.Accumulate([]int64{6}, 1, 1000, Sum[int64]()); err != nil {
			return err
		}
		b := make([]byte, 8)
		b[0] = 77
		if err := w.PutBuf(b, 1, Int64, 1, 600, 1, Int64); err != nil {
			return err
		}
		rb := make([]byte, 8)
		if err := w.Flush(1); err != nil {
			return err
		}
		if err := w.GetBuf(rb, 1, Int64, 1, 600, 1, Int64); err != nil || rb[0] != 77 {
			return fmt.Errorf("low-level get: %v %v", rb, err)
		}
		// A target layout of two runs of 1 KiB goes through the fabric,
		// one of fourteen runs of 8 bytes by message (fabRuns).
		if err := stridedRMA(w, 1100, 2, 128, 256, func(i int) int64 { return int64(7 + i) }); err != nil {
			return err
		}
		if err := stridedRMA(w, 1612, 14, 1, 2, func(i int) int64 { return -int64(512 + 2*i) }); err != nil {
			return err
		}
		if err := w.Put([]int64{1}, 1, 2048); err == nil {
			return fmt.Errorf("a put past the window: no error")
		}
		if err := w.Unlock(1); err != nil {
			return err
		}
		if err := Barrier(c); err != nil {
			return err
		}
		return w.Free()
	}
}

// stridedRMA puts count blocks of blocklen int64 values, stride apart,
// at disp of rank 1's part of w (value i of the packed data is val(i)),
// flushes, and gets them back.
func stridedRMA(w *Window[int64], disp, count, blocklen, stride int, val func(int) int64) error {
	vt, err := NewVector(count, blocklen, stride, Int64)
	if err != nil {
		return err
	}
	if err := vt.Commit(); err != nil {
		return err
	}
	n := count * blocklen
	b := make([]byte, 8*n)
	for i := 0; i < n; i++ {
		binary.NativeEndian.PutUint64(b[8*i:], uint64(val(i)))
	}
	if err := w.PutBuf(b, n, Int64, 1, disp, 1, vt); err != nil {
		return err
	}
	if err := w.Flush(1); err != nil {
		return err
	}
	got := make([]byte, len(b))
	if err := w.GetBuf(got, n, Int64, 1, disp, 1, vt); err != nil {
		return err
	}
	if !bytes.Equal(got, b) {
		return fmt.Errorf("strided get of %d blocks of %d: other values than were put", count, blocklen)
	}
	return nil
}

func fabricAtomicsJob(fab bool) func(c *Comm) error {
	const per = 50
	return func(c *Comm) error {
		me, n := c.Rank(), c.Size()
		w, err := NewWindow[int64](c, 16)
		if err != nil {
			return err
		}
		if got := w.atomicsTo(0) != nil; got != fab {
			return fmt.Errorf("rank %d: the fabric's atomics taken: %v, want %v", me, got, fab)
		}
		wb, err := NewWindow[byte](c, 64)
		if err != nil {
			return err
		}
		if err := w.LockAll(); err != nil {
			return err
		}
		if err := wb.LockAll(); err != nil {
			return err
		}
		tickets := make([]int64, 0, per)
		for range per {
			v, err := w.FetchAndOp(1, 0, 0, Sum[int64]())
			if err != nil {
				return err
			}
			tickets = append(tickets, v)
			if err := w.Accumulate([]int64{int64(me + 1), 1 << me}, 0, 1, Sum[int64]()); err != nil {
				return err
			}
			// An increment by compare-and-swap.
			for {
				cur, err := w.FetchAndOp(0, 0, 3, NoOp[int64]())
				if err != nil {
					return err
				}
				old, err := w.CompareAndSwap(cur, cur+1, 0, 3)
				if err != nil {
					return err
				}
				if old == cur {
					break
				}
			}
		}
		if err := w.Accumulate([]int64{100 + int64(me)}, 0, 4, Max[int64]()); err != nil {
			return err
		}
		if err := w.AccumulateBuf(int64Bytes(1<<me), 1, Int64, 0, 5, 1, Int64, OpBor); err != nil {
			return err
		}
		old := make([]byte, 8)
		if err := w.FetchAndOpBuf(int64Bytes(int64(me)), old, Int64, 0, 6, OpReplace); err != nil {
			return err
		}
		// Integers at bytes 8 and 13 of rank 0's byte window, one call:
		// the first aligned, the second not.
		two, err := NewHindexedBlock(1, []int{0, 5}, Int32)
		if err != nil {
			return err
		}
		if err := two.Commit(); err != nil {
			return err
		}
		res := make([]byte, 8)
		if err := wb.GetAccumulateBuf(int32Bytes(1, 10), 2, Int32, res, 2, Int32, 0, 8, 1, two, OpSum); err != nil {
			return err
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		if err := wb.UnlockAll(); err != nil {
			return err
		}
		all, err := Gather(c, tickets, 0)
		if err != nil {
			return err
		}
		if err := Barrier(c); err != nil {
			return err
		}
		if me == 0 {
			w.synced()
			wb.synced()
			seen := make([]bool, n*per)
			for _, ts := range all {
				for _, v := range ts {
					if v < 0 || v >= int64(len(seen)) || seen[v] {
						return fmt.Errorf("ticket %d handed out twice or out of range", v)
					}
					seen[v] = true
				}
			}
			l := w.Local()
			want := []int64{int64(n * per), per * int64(n*(n+1)/2), per * int64(1<<n-1), int64(n * per), 100 + int64(n-1), 1<<n - 1}
			for i, v := range want {
				if l[i] != v {
					return fmt.Errorf("element %d: %d, want %d (all %v)", i, l[i], v, l[:8])
				}
			}
			if l[6] < 0 || l[6] >= int64(n) {
				return fmt.Errorf("element 6 after the replaces: %d", l[6])
			}
			b := wb.Local()
			if a, o := int32At(b[8:]), int32At(b[13:]); a != int32(n) || o != int32(10*n) {
				return fmt.Errorf("byte window: aligned integer %d, misaligned %d; want %d, %d", a, o, n, 10*n)
			}
			// Each rank's fetch-and-adds, accumulates and reads: by
			// message unless through the fabric.
			if a := w.applied.Load(); fab != (a < uint64(n*per)) {
				return fmt.Errorf("the target's server applied %d requests (through the fabric: %v)", a, fab)
			}
		}
		if err := wb.Free(); err != nil {
			return err
		}
		return w.Free()
	}
}

func int64Bytes(v int64) []byte { return binary.NativeEndian.AppendUint64(nil, uint64(v)) }

func int32Bytes(vs ...int32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.NativeEndian.AppendUint32(b, uint32(v))
	}
	return b
}

func int32At(b []byte) int32 { return int32(binary.NativeEndian.Uint32(b)) }

// benchFetchAndOp times a low-level FetchAndOpBuf and Flush of an int64
// from rank 0 to rank 1's window, in a job of two goroutine ranks of cfg.
func benchFetchAndOp(b *testing.B, cfg Config) {
	b.ReportAllocs()
	err := RunConfig(2, cfg, func(c *Comm) error {
		w, err := NewWindow[int64](c, 8)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			if err := w.Lock(1, false); err != nil {
				return err
			}
			one, res := make([]byte, 8), make([]byte, 8)
			binary.LittleEndian.PutUint64(one, 1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.FetchAndOpBuf(one, res, Int64, 1, 0, OpSum); err != nil {
					return err
				}
				if err := w.Flush(1); err != nil {
					return err
				}
			}
			b.StopTimer()
			if got := binary.LittleEndian.Uint64(res); got != uint64(b.N-1) {
				return fmt.Errorf("the last fetch-and-op saw %d, want %d", got, b.N-1)
			}
			if err := w.Unlock(1); err != nil {
				return err
			}
		}
		if err := Barrier(c); err != nil {
			return err
		}
		return w.Free()
	})
	if err != nil {
		b.Fatal(err)
	}
}
