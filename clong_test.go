package mpi_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mpigo/mpi"
)

// TestCLongExternal: CLong and CUlong take 4 big-endian bytes in
// external32 (MPI's table for C's long), 8 in memory; a value beyond 32
// bits is ErrConversion; unpacking extends the sign (CLong) or zeros
// (CUlong).
func TestCLongExternal(t *testing.T) {
	vec, err := mpi.NewVector(2, 1, 2, mpi.CLong)
	if err != nil {
		t.Fatal(err)
	}
	if err := vec.Commit(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		dt    *mpi.Datatype
		count int
		in    []byte
		want  []byte
	}{
		{"long", mpi.CLong, 2, mpi.AsBytes([]int64{1, -2}), []byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe}},
		{"unsigned long", mpi.CUlong, 2, mpi.AsBytes([]uint64{0x01020304, 0xfffffffe}), []byte{1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe}},
		{"vector of long", vec, 1, mpi.AsBytes([]int64{-1, 99, 7}), []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 7}},
		{"int64 keeps 8", mpi.Int64, 1, mpi.AsBytes([]int64{-2}), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
		{"long int pair", mpi.CLongInt, 1, mpi.AsBytes([]mpi.CValueLoc[int64]{{Value: -2, Loc: 7}}), []byte{0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := mpi.PackExternalSize(c.count, c.dt)
			if err != nil || n != len(c.want) {
				t.Fatalf("PackExternalSize %d, %v; want %d", n, err, len(c.want))
			}
			out := make([]byte, n+3)
			pos, err := mpi.PackExternal(c.in, c.count, c.dt, out, 3)
			if err != nil || pos != 3+n || !bytes.Equal(out[3:], c.want) {
				t.Fatalf("PackExternal: pos %d, %v, % x; want %d, % x", pos, err, out[3:], 3+n, c.want)
			}
			back := make([]byte, len(c.in))
			pos, err = mpi.UnpackExternal(out, 3, back, c.count, c.dt)
			if err != nil || pos != 3+n {
				t.Fatalf("UnpackExternal: pos %d, %v", pos, err)
			}
			if c.dt == vec { // the hole stays as it was
				copy(back[8:16], c.in[8:16])
			}
			if !bytes.Equal(back, c.in) {
				t.Fatalf("round trip % x, want % x", back, c.in)
			}
		})
	}
	for _, bad := range []struct {
		dt *mpi.Datatype
		in []byte
	}{
		{mpi.CLong, mpi.AsBytes([]int64{1 << 31})},
		{mpi.CLong, mpi.AsBytes([]int64{-1<<31 - 1})},
		{mpi.CUlong, mpi.AsBytes([]uint64{1 << 32})},
	} {
		if _, err := mpi.PackExternal(bad.in, 1, bad.dt, make([]byte, 4), 0); !errors.Is(err, mpi.ErrConversion) {
			t.Errorf("packing % x as %s: %v, want ErrConversion", bad.in, bad.dt, err)
		}
	}
	if p, err := mpi.TypeGetValueIndex(mpi.CLong, mpi.Int32); err != nil || p != mpi.CLongInt {
		t.Errorf("TypeGetValueIndex(CLong, Int32) = %v, %v; want CLongInt", p, err)
	}
}

// TestCLongMatchesInt64: everywhere but external32 a CLong is an Int64:
// point-to-point, collectives and one-sided calls match one with the
// other, and reductions compute on it.
func TestCLongMatchesInt64(t *testing.T) {
	err := mpi.Run(2, func(c *mpi.Comm) error {
		r := c.Rank()
		// Point to point, both ways.
		if r == 0 {
			if err := c.Send(mpi.AsBytes([]int64{1 << 40, -5}), 2, mpi.CLong, 1, 1); err != nil {
				return err
			}
			if err := mpi.Send(c, []int64{-1 << 50}, 1, 2); err != nil {
				return err
			}
		} else {
			got, _, err := mpi.Recv[[]int64](c, 0, 1)
			if err != nil || !slices.Equal(got, []int64{1 << 40, -5}) {
				return fmt.Errorf("Recv[[]int64] of CLong: %v, %v", got, err)
			}
			buf := make([]int64, 1)
			if _, err := c.Recv(mpi.AsBytes(buf), 1, mpi.CLong, 0, 2); err != nil || buf[0] != -1<<50 {
				return fmt.Errorf("Recv as CLong of []int64: %v, %v", buf, err)
			}
		}
		// A reduction with CLong on one rank, Int64 on the other.
		dt := mpi.CLong
		if r == 1 {
			dt = mpi.Int64
		}
		in, out := []int64{int64(r+1) << 33, -3}, make([]int64, 2)
		if err := c.Allreduce(mpi.AsBytes(in), mpi.AsBytes(out), 2, dt, mpi.OpSum); err != nil {
			return fmt.Errorf("Allreduce of %s: %w", dt, err)
		}
		if want := []int64{3 << 33, -6}; !slices.Equal(out, want) {
			return fmt.Errorf("Allreduce of %s: %v, want %v", dt, out, want)
		}
		// One-sided: CLong at the origin, Int64 at the target.
		w, err := mpi.NewWindow[int64](c, 2)
		if err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		if err := w.AccumulateBuf(mpi.AsBytes([]int64{1 << 35, int64(r)}), 2, mpi.CLong, 1-r, 0, 2, mpi.Int64, mpi.OpSum); err != nil {
			return fmt.Errorf("AccumulateBuf CLong onto Int64: %w", err)
		}
		if err := w.Fence(); err != nil {
			return err
		}
		if got, want := w.Local(), []int64{1 << 35, int64(1 - r)}; !slices.Equal(got, want) {
			return fmt.Errorf("window %v, want %v", got, want)
		}
		return w.Free()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCLongFileView: an external32 view of CLong keeps 4 bytes per
// element in the file, as MPI_File_get_type_extent says; reading gives
// the values back sign-extended; a value beyond 32 bits fails the write
// with ErrConversion. A view of bytes written with CLong in memory packs
// them the same way.
func TestCLongFileView(t *testing.T) {
	dir := t.TempDir()
	err := mpi.Run(2, func(c *mpi.Comm) error {
		r := c.Rank()
		name := filepath.Join(dir, "clong")
		f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeRdwr, nil)
		if err != nil {
			return err
		}
		if err := f.SetView(0, mpi.CLong, mpi.CLong, "external32", nil); err != nil {
			return err
		}
		if e, err := f.TypeExtent(mpi.CLong); err != nil || e != 4 {
			return fmt.Errorf("TypeExtent(CLong) in external32: %d, %v; want 4", e, err)
		}
		vals := []int64{int64(r*256 + 1), -2}
		if _, err := f.WriteAtAll(int64(2*r), mpi.AsBytes(vals), 2, mpi.CLong); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if size, err := f.Size(); err != nil || size != 16 {
			return fmt.Errorf("file size %d, %v; want 16", size, err)
		}
		back := make([]int64, 4)
		st, err := f.ReadAtAll(0, mpi.AsBytes(back), 4, mpi.CLong)
		if err != nil || !slices.Equal(back, []int64{1, -2, 257, -2}) || st.Count() != 4 {
			return fmt.Errorf("read back %v (count %d), %v", back, st.Count(), err)
		}
		if _, err := f.WriteAt(9, mpi.AsBytes([]int64{1 << 40}), 1, mpi.CLong); !errors.Is(err, mpi.ErrConversion) {
			return fmt.Errorf("writing 1<<40 as a C long: %v, want ErrConversion", err)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		// A byte view, C longs in memory.
		if err := f.SetView(0, mpi.Byte, mpi.Byte, "external32", nil); err != nil {
			return err
		}
		if r == 1 {
			if _, err := f.WriteAt(16, mpi.AsBytes([]int64{0x01020304}), 1, mpi.CLong); err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		one := make([]int64, 1)
		if _, err := f.ReadAt(12, mpi.AsBytes(one), 1, mpi.CLong); err != nil || one[0] != -2 {
			return fmt.Errorf("reading bytes 12-15 as a C long: %v, %v", one, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
		if r == 0 {
			got, err := os.ReadFile(name)
			want := []byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0, 1, 1, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4}
			if err != nil || !bytes.Equal(got, want) {
				return fmt.Errorf("file % x, %v; want % x", got, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
