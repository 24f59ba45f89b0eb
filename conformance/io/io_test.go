// Package io_test holds the MPI-IO conformance tests, modelled on the
// kinds of check of MPICH's test/mpi/io directory: every access routine,
// views with vector, subarray and darray filetypes, shared and ordered
// pointers, atomicity, non-blocking and split collectives, external32,
// zero-length and past-the-end access, and the error cases. File
// contents are checked byte for byte against a reference built by plain
// Go code. Every test runs over every transport of the matrix.
package io_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

var seq atomic.Int64

// fileName returns a fresh path in dir, the same for every rank of a run.
func fileName(dir, what string) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d", what, seq.Add(1)))
}

// le32 is the native (little-endian on the test machines) byte form of vals.
func le32(vals []int32) []byte {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.NativeEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

// runFile runs f on n ranks of every transport with a new file name per run.
func runFile(t *testing.T, n int, what string, f func(c *mpi.Comm, name string) error) {
	dir := t.TempDir()
	for _, tr := range conformance.Transports() {
		t.Run(tr.Name, func(t *testing.T) {
			name := fileName(dir, what)
			if err := conformance.RunOne(tr, n, func(c *mpi.Comm) error {
				// Every rank needs the same name: rank 0's.
				nm, err := mpi.Bcast(c, name, 0)
				if err != nil {
					return err
				}
				return f(c, nm)
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func open(c *mpi.Comm, name string, amode int) (*mpi.File, error) {
	return mpi.OpenFile(c, name, amode, nil)
}

// TestExplicitOffsets: every rank writes its block with WriteAt, reads
// another rank's block after sync-barrier-sync; the file is the
// concatenation of the blocks.
func TestExplicitOffsets(t *testing.T) {
	const n, per = 3, 100
	runFile(t, n, "explicit", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		r := c.Rank()
		blk := make([]int32, per)
		for i := range blk {
			blk[i] = int32(r*1000 + i)
		}
		st, err := mpi.WriteAt(f, int64(r*per*4), blk)
		if err != nil {
			return err
		}
		if st.Count() != per {
			return fmt.Errorf("rank %d: wrote %d elements, want %d", r, st.Count(), per)
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		peer := (r + 1) % n
		got := make([]int32, per)
		if _, err := mpi.ReadAt(f, int64(peer*per*4), got); err != nil {
			return err
		}
		for i, v := range got {
			if v != int32(peer*1000+i) {
				return fmt.Errorf("rank %d: element %d of rank %d's block is %d", r, i, peer, v)
			}
		}
		size, err := f.Size()
		if err != nil {
			return err
		}
		if size != n*per*4 {
			return fmt.Errorf("rank %d: size %d, want %d", r, size, n*per*4)
		}
		if err := f.Close(); err != nil {
			return err
		}
		if r == 0 {
			var want []int32
			for q := 0; q < n; q++ {
				for i := 0; i < per; i++ {
					want = append(want, int32(q*1000+i))
				}
			}
			b, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			if !bytes.Equal(b, le32(want)) {
				return fmt.Errorf("file contents differ from the reference")
			}
		}
		return nil
	})
}

// strided sets a view in which rank r of n owns blocks of blk int32s
// every n*blk: a resized vector filetype.
func strided(f *mpi.File, r, n, blk int, datarep string) error {
	vec, err := mpi.NewContiguous(blk, mpi.Int32)
	if err != nil {
		return err
	}
	ft, err := mpi.NewResized(vec, 0, n*blk*4)
	if err != nil {
		return err
	}
	if err := ft.Commit(); err != nil {
		return err
	}
	return f.SetView(int64(r*blk*4), mpi.Int32, ft, datarep, nil)
}

// interleavedRef is the file of n ranks writing per elements each in
// blocks of blk, rank r's element i being r*100000+i.
func interleavedRef(n, blk, per int) []int32 {
	out := make([]int32, n*per)
	for r := 0; r < n; r++ {
		for i := 0; i < per; i++ {
			b, in := i/blk, i%blk
			out[b*n*blk+r*blk+in] = int32(r*100000 + i)
		}
	}
	return out
}

// TestStridedViews writes an interleaved pattern through a vector view,
// collectively (two-phase), independently (data sieving and not) and
// split collective, and reads it back each way.
func TestStridedViews(t *testing.T) {
	const n, blk, per = 4, 3, 60
	for _, tc := range []struct {
		name  string
		hint  string
		coll  bool
		nodes string
	}{
		{"collective", "enable", true, ""},
		{"collective-3-aggregators", "enable", true, "3"},
		{"collective-4-aggregators-automatic", "automatic", true, "4"},
		{"collective-automatic", "automatic", true, ""},
		{"collective-disabled", "disable", true, ""},
		{"independent-sieve", "enable", false, ""},
		{"independent-nosieve", "disable", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runFile(t, n, "strided", func(c *mpi.Comm, name string) error {
				in := mpi.NewInfo()
				_ = in.Set("romio_cb_write", tc.hint)
				_ = in.Set("romio_cb_read", tc.hint)
				_ = in.Set("romio_ds_write", tc.hint)
				_ = in.Set("romio_ds_read", tc.hint)
				_ = in.Set("cb_buffer_size", "64") // many rounds even for this small file
				if tc.nodes != "" {
					_ = in.Set("cb_nodes", tc.nodes)
				}
				f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeRdwr, in)
				if err != nil {
					return err
				}
				r := c.Rank()
				if err := strided(f, r, n, blk, "native"); err != nil {
					return err
				}
				vals := make([]int32, per)
				for i := range vals {
					vals[i] = int32(r*100000 + i)
				}
				if tc.coll {
					_, err = mpi.WriteAtAll(f, 0, vals)
				} else {
					_, err = mpi.WriteAt(f, 0, vals)
				}
				if err != nil {
					return err
				}
				if err := f.Sync(); err != nil {
					return err
				}
				got := make([]int32, per)
				var st mpi.Status
				if tc.coll {
					st, err = mpi.ReadAtAll(f, 0, got)
				} else {
					if err := c.Barrier(); err != nil {
						return err
					}
					st, err = mpi.ReadAt(f, 0, got)
				}
				if err != nil {
					return err
				}
				if st.Count() != per || !slices.Equal(got, vals) {
					return fmt.Errorf("rank %d: read back %d elements %v, want %v", r, st.Count(), got[:6], vals[:6])
				}
				if err := f.Close(); err != nil {
					return err
				}
				if r == 0 {
					b, err := os.ReadFile(name)
					if err != nil {
						return err
					}
					if !bytes.Equal(b, le32(interleavedRef(n, blk, per))) {
						return fmt.Errorf("file differs from the reference")
					}
				}
				return nil
			})
		})
	}
}

// TestSubarrayCheckpoint writes a 2-D block-distributed array with
// SetViewBlock and WriteAtAll on 4 ranks (2x2 grid), and reads it back
// whole and by rows on every rank.
func TestSubarrayCheckpoint(t *testing.T) {
	const rows, cols = 6, 8
	runFile(t, 4, "subarray", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		r := c.Rank()
		pr, pc := r/2, r%2
		sub := []int{rows / 2, cols / 2}
		start := []int{pr * rows / 2, pc * cols / 2}
		if err := mpi.SetViewBlock[float64](f, 0, []int{rows, cols}, sub, start, "native"); err != nil {
			return err
		}
		blk := make([]float64, sub[0]*sub[1])
		for i := range blk {
			gi, gj := start[0]+i/sub[1], start[1]+i%sub[1]
			blk[i] = float64(gi*cols + gj)
		}
		if _, err := mpi.WriteAtAll(f, 0, blk); err != nil {
			return err
		}
		if err := f.SetView(0, mpi.Float64, mpi.Float64, "native", nil); err != nil {
			return err
		}
		all := make([]float64, rows*cols)
		st, err := mpi.ReadAtAll(f, 0, all)
		if err != nil {
			return err
		}
		if st.Count() != rows*cols {
			return fmt.Errorf("rank %d: read %d elements", r, st.Count())
		}
		for i, v := range all {
			if v != float64(i) {
				return fmt.Errorf("rank %d: element %d is %v", r, i, v)
			}
		}
		return f.Close()
	})
}

// TestDarray writes a block-cyclic distributed 1-D array with a darray
// filetype and compares the file with the reference.
func TestDarray(t *testing.T) {
	const n, N, b = 3, 40, 4
	runFile(t, n, "darray", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeWronly)
		if err != nil {
			return err
		}
		r := c.Rank()
		ft, err := mpi.NewDarray(n, r, []int{N}, []mpi.Distribution{mpi.DistributeCyclic}, []int{b}, []int{n}, mpi.OrderC, mpi.Int32)
		if err != nil {
			return err
		}
		if err := ft.Commit(); err != nil {
			return err
		}
		if err := f.SetView(0, mpi.Int32, ft, "native", nil); err != nil {
			return err
		}
		var mine []int32
		for i := 0; i < N; i++ {
			if (i/b)%n == r {
				mine = append(mine, int32(i))
			}
		}
		if _, err := mpi.WriteAtAll(f, 0, mine); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if r == 0 {
			want := make([]int32, N)
			for i := range want {
				want[i] = int32(i)
			}
			got, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, le32(want)) {
				return fmt.Errorf("darray file differs from the reference")
			}
		}
		return nil
	})
}

// TestSharedAndOrdered: WriteShared from every rank fills the file with
// whole records and no gaps; WriteOrdered puts them in rank order;
// ReadOrdered reads them back in the same order.
func TestSharedAndOrdered(t *testing.T) {
	const n, k = 3, 5
	runFile(t, n, "shared", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr|mpi.ModeDeleteOnClose)
		if err != nil {
			return err
		}
		r := c.Rank()
		for i := 0; i < k; i++ {
			if _, err := mpi.WriteShared(f, []int32{int32(r), int32(i)}); err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		pos, err := f.PositionShared()
		if err != nil {
			return err
		}
		if pos != n*k*8 {
			return fmt.Errorf("rank %d: shared pointer at %d, want %d", r, pos, n*k*8)
		}
		all := make([]int32, 2*n*k)
		if _, err := mpi.ReadAt(f, 0, all); err != nil {
			return err
		}
		count := make([]int, n)
		for i := 0; i < n*k; i++ {
			if all[2*i] < 0 || int(all[2*i]) >= n {
				return fmt.Errorf("rank %d: record %d names rank %d", r, i, all[2*i])
			}
			count[all[2*i]]++
		}
		for q, m := range count {
			if m != k {
				return fmt.Errorf("rank %d: %d records of rank %d, want %d", r, m, q, k)
			}
		}
		// Ordered: after the shared records, in rank order.
		vals := make([]int32, r+1)
		for i := range vals {
			vals[i] = int32(100 + r)
		}
		if _, err := mpi.WriteOrdered(f, vals); err != nil {
			return err
		}
		if err := f.SeekShared(int64(n*k*8), mpi.SeekSet); err != nil {
			return err
		}
		back := make([]int32, r+1)
		if _, err := mpi.ReadOrdered(f, back); err != nil {
			return err
		}
		if !slices.Equal(back, vals) {
			return fmt.Errorf("rank %d: ReadOrdered got %v, want %v", r, back, vals)
		}
		if err := f.Close(); err != nil {
			return err
		}
		if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) && r == 0 {
			return fmt.Errorf("ModeDeleteOnClose left the file: %v", err)
		}
		return nil
	})
}

// TestAtomicity: in atomic mode, ranks writing the same non-contiguous
// region at once leave it wholly one rank's data.
func TestAtomicity(t *testing.T) {
	const n, blk = 3, 2
	runFile(t, n, "atomic", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		if err := f.SetAtomicity(true); err != nil {
			return err
		}
		if on, err := f.Atomicity(); err != nil || !on {
			return fmt.Errorf("Atomicity = %v, %v", on, err)
		}
		if err := strided(f, 0, 2, blk, "native"); err != nil {
			return err
		}
		r := c.Rank()
		vals := make([]int32, 200)
		for i := range vals {
			vals[i] = int32(r + 1)
		}
		for it := 0; it < 5; it++ {
			if _, err := mpi.WriteAt(f, 0, vals); err != nil {
				return err
			}
			got := make([]int32, len(vals))
			if _, err := mpi.ReadAt(f, 0, got); err != nil {
				return err
			}
			for _, v := range got[1:] {
				if v != got[0] {
					return fmt.Errorf("rank %d: atomic read saw a mix of writes: %v", r, got[:8])
				}
			}
		}
		return f.Close()
	})
}

// TestNonblockingAndSplit runs every non-blocking and split collective
// form, with a blocking collective started after a non-blocking one
// (they must meet in order).
func TestNonblockingAndSplit(t *testing.T) {
	const n = 2
	runFile(t, n, "nb", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		r := c.Rank()
		b := le32([]int32{int32(r), int32(r), int32(r), int32(r)})
		req1, err := f.IwriteAt(int64(r*16), b, 16, mpi.Byte)
		if err != nil {
			return err
		}
		req2, err := f.IwriteAtAll(int64(32+r*16), b, 16, mpi.Byte)
		if err != nil {
			return err
		}
		if _, err := f.WriteAtAll(int64(64+r*16), b, 16, mpi.Byte); err != nil {
			return err
		}
		for _, q := range []*mpi.Request{req1, req2} {
			st, err := q.Wait()
			if err != nil {
				return err
			}
			if st.Bytes() != 16 {
				return fmt.Errorf("rank %d: non-blocking write moved %d bytes", r, st.Bytes())
			}
		}
		if err := f.WriteAtAllBegin(int64(96+r*16), b, 16, mpi.Byte); err != nil {
			return err
		}
		if _, err := f.WriteAtAllEnd(b); err != nil {
			return err
		}
		if _, err := f.Seek(int64(128+r*16), mpi.SeekSet); err != nil {
			return err
		}
		wq, err := f.IwriteAll(b, 16, mpi.Byte)
		if err != nil {
			return err
		}
		if _, err := wq.Wait(); err != nil {
			return err
		}
		if p, _ := f.Position(); p != int64(144+r*16) {
			return fmt.Errorf("rank %d: pointer at %d after IwriteAll", r, p)
		}
		if _, err := f.Seek(0, mpi.SeekSet); err != nil {
			return err
		}
		if err := f.ReadAllBegin(make([]byte, 0), 0, mpi.Byte); err != nil {
			return err
		}
		if _, err := f.ReadAllEnd(nil); err != nil {
			return err
		}
		got := make([]byte, 160)
		rq, err := f.IreadAtAll(0, got, 160, mpi.Byte)
		if err != nil {
			return err
		}
		st, err := rq.Wait()
		if err != nil {
			return err
		}
		var want []byte
		for i := 0; i < 5; i++ {
			want = append(want, le32([]int32{0, 0, 0, 0, 1, 1, 1, 1})...)
		}
		if st.Bytes() != 160 || !bytes.Equal(got, want) {
			return fmt.Errorf("rank %d: read back %d bytes % x", r, st.Bytes(), got)
		}
		return f.Close()
	})
}

// TestExternal32 writes through an external32 view: the file holds
// big-endian numbers, and reading it back through the same view gives
// the values.
func TestExternal32(t *testing.T) {
	runFile(t, 2, "ext32", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		r := c.Rank()
		if err := f.SetView(0, mpi.Int32, mpi.Int32, "external32", nil); err != nil {
			return err
		}
		vals := []int32{int32(r*256 + 1), -2}
		if _, err := mpi.WriteAtAll(f, int64(2*r), vals); err != nil {
			return err
		}
		back := make([]int32, 4)
		if _, err := mpi.ReadAtAll(f, 0, back); err != nil {
			return err
		}
		if !slices.Equal(back, []int32{1, -2, 257, -2}) {
			return fmt.Errorf("rank %d: read back %v", r, back)
		}
		if err := f.Close(); err != nil {
			return err
		}
		if r == 0 {
			got, _ := os.ReadFile(name)
			want := []byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0, 1, 1, 0xff, 0xff, 0xff, 0xfe}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("external32 bytes % x, want % x", got, want)
			}
		}
		return nil
	})
}

// TestEdges: zero-length access, reading past the end (short count, no
// error), a negative offset (independent, in a collective read: that
// rank's error only; in a collective write: every rank's, nothing
// written), an etype mismatch, and pointers.
func TestEdges(t *testing.T) {
	runFile(t, 2, "edges", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		var e conformance.Errs
		r := c.Rank()
		st, err := mpi.WriteAt(f, 0, []int32{})
		e.Addf(c, err == nil && st.Count() == 0, "zero-length write: %v %d", err, st.Count())
		if r == 0 {
			_, err = mpi.WriteAt(f, 0, []int32{7, 8, 9})
			e.Add(err)
		}
		e.Add(f.Sync())
		e.Add(c.Barrier())
		e.Add(f.Sync())
		buf := make([]int32, 5)
		st, err = mpi.ReadAt(f, 4, buf)
		e.Addf(c, err == nil && st.Count() == 2 && buf[0] == 8 && buf[1] == 9, "read past the end: %v count %d %v", err, st.Count(), buf)
		st, err = mpi.ReadAt(f, 100, buf)
		e.Addf(c, err == nil && st.Count() == 0, "read beyond the end: %v count %d", err, st.Count())
		_, err = mpi.ReadAt(f, -1, buf)
		e.Addf(c, conformance.IsClass(err, mpi.ErrArg), "negative offset: %v", err)
		// A collective read whose ranks each read their own bytes
		// reports each rank's own outcome: rank 1's negative offset is
		// its error alone, and rank 0 reads.
		clear(buf)
		st, err = mpi.ReadAtAll(f, int64(-r), buf)
		if r == 1 {
			e.Addf(c, conformance.IsClass(err, mpi.ErrArg), "collective read with a negative offset: %v", err)
		} else {
			e.Addf(c, err == nil && st.Count() == 3 && buf[0] == 7 && buf[2] == 9, "collective read beside rank 1's negative offset: %v count %d %v", err, st.Count(), buf)
		}
		// A collective write fails on every rank, and nothing is written.
		_, err = mpi.WriteAtAll(f, int64(-r), []int32{1})
		e.Addf(c, err != nil, "collective write with a negative offset on rank 1 succeeded on rank %d", r)
		e.Add(c.Barrier())
		st, err = mpi.ReadAt(f, 0, buf[:1])
		e.Addf(c, err == nil && st.Count() == 1 && buf[0] == 7, "after a refused collective write: %v count %d %v", err, st.Count(), buf[:1])
		// Views: an etype of int32 and a float64 buffer of 12 bytes is fine; 3 bytes is not.
		e.Add(f.SetView(0, mpi.Int32, mpi.Int32, "native", nil))
		_, err = f.ReadAt(0, make([]byte, 3), 3, mpi.Byte)
		e.Addf(c, conformance.IsClass(err, mpi.ErrType), "3 bytes through an int32 view: %v", err)
		err = f.SetView(0, mpi.Int32, mpi.Float64, "native", nil)
		e.Addf(c, conformance.IsClass(err, mpi.ErrType), "filetype not built from etype: %v", err)
		rep := "native"
		if r == 1 {
			rep = "external32"
		}
		err = f.SetView(0, mpi.Int32, mpi.Int32, rep, nil)
		e.Addf(c, conformance.IsClass(err, mpi.ErrArg), "different datareps: %v", err)
		err = f.SetView(0, mpi.Int32, mpi.Int32, "bogus", nil)
		e.Addf(c, conformance.IsClass(err, mpi.ErrUnsupportedDatarep), "bogus datarep: %v", err)
		// Pointers.
		e.Add(f.SetView(4, mpi.Int32, mpi.Int32, "native", nil))
		p, err := f.Seek(0, mpi.SeekEnd)
		e.Addf(c, err == nil && p == 2, "SeekEnd: %d %v", p, err)
		bo, err := f.ByteOffset(1)
		e.Addf(c, err == nil && bo == 8, "ByteOffset(1) = %d %v", bo, err)
		_, err = f.Seek(-5, mpi.SeekCur)
		e.Addf(c, conformance.IsClass(err, mpi.ErrArg), "seek before the start: %v", err)
		x, err := f.TypeExtent(mpi.Float64)
		e.Addf(c, err == nil && x == 8, "TypeExtent %d %v", x, err)
		e.Add(f.SetSize(3))
		sz, err := f.Size()
		e.Addf(c, err == nil && sz == 3, "SetSize: %d %v", sz, err)
		e.Add(f.Preallocate(100))
		sz, _ = f.Size()
		e.Addf(c, sz == 100, "Preallocate: size %d", sz)
		err = f.SetSize(int64(r))
		e.Addf(c, conformance.IsClass(err, mpi.ErrArg), "different sizes: %v", err)
		in := f.Info()
		v, ok := in.Get("cb_buffer_size")
		e.Addf(c, ok && v != "", "cb_buffer_size hint not reported")
		e.Addf(c, f.Amode() == mpi.ModeCreate|mpi.ModeRdwr, "Amode %#x", f.Amode())
		e.Addf(c, f.Group().Size() == 2, "Group size")
		e.Add(f.Close())
		_, err = f.Size()
		e.Addf(c, conformance.IsClass(err, mpi.ErrFile), "Size after Close: %v", err)
		return e.Err()
	})
}

// TestOpenErrors: every bad open fails on every rank with its class and
// no rank hangs.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	exist := filepath.Join(dir, "exists")
	if err := os.WriteFile(exist, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		var e conformance.Errs
		r := c.Rank()
		_, err := open(c, filepath.Join(dir, "missing"), mpi.ModeRdonly)
		e.Addf(c, conformance.IsClass(err, mpi.ErrNoSuchFile), "missing file: %v", err)
		_, err = open(c, exist, mpi.ModeCreate|mpi.ModeExcl|mpi.ModeWronly)
		e.Addf(c, conformance.IsClass(err, mpi.ErrFileExists), "exclusive create of an existing file: %v", err)
		_, err = open(c, exist, mpi.ModeRdonly|mpi.ModeWronly)
		e.Addf(c, conformance.IsClass(err, mpi.ErrAmode), "two access modes: %v", err)
		_, err = open(c, exist, mpi.ModeRdonly|mpi.ModeCreate)
		e.Addf(c, conformance.IsClass(err, mpi.ErrAmode), "read-only create: %v", err)
		mode := mpi.ModeRdonly
		if r == 1 {
			mode = mpi.ModeRdwr
		}
		_, err = open(c, exist, mode)
		e.Addf(c, conformance.IsClass(err, mpi.ErrArg), "different amodes: %v", err)
		f, err := open(c, exist, mpi.ModeRdonly)
		if err != nil {
			return err
		}
		_, err = mpi.WriteAt(f, 0, []byte{1})
		e.Addf(c, conformance.IsClass(err, mpi.ErrReadOnly), "write to a read-only file: %v", err)
		e.Add(f.Close())
		if os.Getuid() != 0 {
			locked := filepath.Join(dir, fmt.Sprintf("locked-%d", seq.Add(1)))
			if r == 0 {
				e.Add(os.WriteFile(locked, nil, 0))
			}
			e.Add(c.Barrier())
			_, err = open(c, locked, mpi.ModeRdwr)
			e.Addf(c, conformance.IsClass(err, mpi.ErrAccess), "no permission: %v", err)
		}
		e.Add(c.Barrier())
		if r == 0 {
			err = mpi.DeleteFile(filepath.Join(dir, "missing"), nil)
			e.Addf(c, conformance.IsClass(err, mpi.ErrNoSuchFile), "DeleteFile of a missing file: %v", err)
		}
		return e.Err()
	})
}

// TestSequentialAndAppend: a ModeSequential file takes shared-pointer
// access only; ModeAppend starts the pointers at the end.
func TestSequentialAndAppend(t *testing.T) {
	runFile(t, 2, "seq", func(c *mpi.Comm, name string) error {
		var e conformance.Errs
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeWronly|mpi.ModeSequential)
		if err != nil {
			return err
		}
		_, err = mpi.WriteAt(f, 0, []byte{1})
		e.Addf(c, conformance.IsClass(err, mpi.ErrUnsupportedOp), "WriteAt on a sequential file: %v", err)
		_, err = mpi.WriteOrdered(f, []byte{byte('a' + c.Rank())})
		e.Add(err)
		e.Add(f.Close())
		f, err = open(c, name, mpi.ModeRdwr|mpi.ModeAppend)
		if err != nil {
			return err
		}
		p, err := f.Position()
		e.Addf(c, err == nil && p == 2, "append: pointer at %d", p)
		_, err = mpi.WriteOrdered(f, []byte{byte('A' + c.Rank())})
		e.Add(err)
		e.Add(f.Close())
		if c.Rank() == 0 {
			b, _ := os.ReadFile(name)
			e.Addf(c, string(b) == "abAB", "file %q, want abAB", b)
		}
		return e.Err()
	})
}

// TestIOAdapter uses the io.ReaderAt / io.WriterAt / io.Seeker adapter.
func TestIOAdapter(t *testing.T) {
	runFile(t, 1, "adapter", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		a := f.IO()
		var _ io.ReaderAt = a
		var _ io.WriterAt = a
		var _ io.ReadWriteSeeker = a
		if _, err := io.WriteString(a, "hello, "); err != nil {
			return err
		}
		if _, err := a.WriteAt([]byte("world"), 7); err != nil {
			return err
		}
		b := make([]byte, 20)
		n, err := a.ReadAt(b, 0)
		if n != 12 || err != io.EOF || string(b[:n]) != "hello, world" {
			return fmt.Errorf("ReadAt: %d %v %q", n, err, b[:n])
		}
		if _, err := a.Seek(7, io.SeekStart); err != nil {
			return err
		}
		rest, err := io.ReadAll(a)
		if err != nil || string(rest) != "world" {
			return fmt.Errorf("ReadAll: %q %v", rest, err)
		}
		return f.Close()
	})
}

// TestRefusedCollectiveWritesNothing: a collective write whose arguments
// one rank refuses (a negative offset, a count its buffer does not hold)
// fails on every rank and writes nothing on any, through the default view
// and through a strided one, blocking and non-blocking.
func TestRefusedCollectiveWritesNothing(t *testing.T) {
	runFile(t, 3, "refused", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		r := c.Rank()
		bad := r == c.Size()-1
		vals := []int32{int32(r + 1), int32(r + 1)}
		calls := []struct {
			name string
			call func() error
		}{
			{"WriteAtAll with a negative offset", func() error {
				off := int64(2 * r)
				if bad {
					off = -1
				}
				_, err := mpi.WriteAtAll(f, off, vals)
				return err
			}},
			{"WriteAtAll past the buffer", func() error {
				count := 2
				if bad {
					count = 3
				}
				_, err := f.WriteAtAll(int64(8*r), mpi.AsBytes(vals), count, mpi.Int32)
				return err
			}},
			{"IwriteAtAll with a negative offset", func() error {
				off := int64(8 * r)
				if bad {
					off = -1
				}
				req, err := f.IwriteAtAll(off, mpi.AsBytes(vals), 2, mpi.Int32)
				if err != nil {
					return err
				}
				_, err = req.Wait()
				return err
			}},
		}
		for _, view := range []string{"default", "strided"} {
			if view == "strided" {
				ft, err := mpi.NewVector(2, 1, c.Size(), mpi.Int32)
				if err != nil {
					return err
				}
				if err := ft.Commit(); err != nil {
					return err
				}
				if err := f.SetView(int64(4*r), mpi.Int32, ft, "native", nil); err != nil {
					return err
				}
			}
			for _, tc := range calls {
				if err := tc.call(); err == nil {
					return fmt.Errorf("rank %d, %s view: %s succeeded though rank %d refused it", r, view, tc.name, c.Size()-1)
				}
				if err := syncBarrierSync(c, f); err != nil {
					return err
				}
				if sz, err := f.Size(); err != nil || sz != 0 {
					return fmt.Errorf("rank %d, %s view: %s wrote %d bytes (%v); a refused collective write writes nothing", r, view, tc.name, sz, err)
				}
			}
		}
		return f.Close()
	})
}

// syncBarrierSync makes every rank's writes to f visible to the others'
// reads (MPI-4.1 section 14.6.1).
func syncBarrierSync(c *mpi.Comm, f *mpi.File) error {
	if err := f.Sync(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	return f.Sync()
}
