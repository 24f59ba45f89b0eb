package mpi

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestCollectiveBufferingChoice checks when a collective write goes
// through two-phase I/O: an interleaved (strided) pattern of small pieces
// does under the automatic setting, one of pieces of largePiece bytes
// does not (each piece is a large write of its own), a segmented one
// (each rank one disjoint run) does not, romio_cb_write=disable turns it
// off and enable on. The file's bytes are checked every time.
func TestCollectiveBufferingChoice(t *testing.T) {
	var n atomic.Int64
	twoPhaseHook = func() { n.Add(1) }
	defer func() { twoPhaseHook = nil }()
	dir := t.TempDir()
	cases := []struct {
		name    string
		strided bool
		piece   int // bytes of one piece of a strided pattern
		hint    string
		want    int64
	}{
		{"strided", true, 1, "automatic", 3},
		{"strided-large", true, largePiece, "automatic", 0},
		{"strided-large-enabled", true, largePiece, "enable", 3},
		{"segmented", false, 1, "automatic", 0},
		{"strided-disabled", true, 1, "disable", 0},
		{"segmented-enabled", false, 1, "enable", 3},
	}
	for _, tc := range cases {
		n.Store(0)
		name := filepath.Join(dir, tc.name)
		err := Run(3, func(c *Comm) error {
			in := NewInfo()
			_ = in.Set("romio_cb_write", tc.hint)
			f, err := OpenFile(c, name, ModeCreate|ModeWronly, in)
			if err != nil {
				return err
			}
			if tc.strided {
				// Rank r's pieces are r, r+3, r+6, ... of the file.
				ft, err := NewVector(1, tc.piece, 3*tc.piece, Byte)
				if err == nil {
					ft, err = NewResized(ft, 0, 3*tc.piece)
				}
				if err == nil {
					err = ft.Commit()
				}
				if err == nil {
					err = f.SetView(int64(c.Rank()*tc.piece), Byte, ft, "native", nil)
				}
				if err != nil {
					return err
				}
			}
			off := int64(0)
			if !tc.strided {
				off = int64(10 * c.Rank())
			}
			data := make([]byte, 10*tc.piece)
			for i := range data {
				data[i] = byte(c.Rank() + 1)
			}
			if _, err := WriteAtAll(f, off, data); err != nil {
				return err
			}
			return f.Close()
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 30*tc.piece {
			t.Fatalf("%s: the file has %d bytes, want %d", tc.name, len(got), 30*tc.piece)
		}
		for i, b := range got {
			want := byte(i/10 + 1) // segmented: rank r's 10 bytes at 10r
			if tc.strided {
				want = byte(i/tc.piece%3 + 1)
			}
			if b != want {
				t.Fatalf("%s: byte %d of the file is %d, want %d", tc.name, i, b, want)
			}
		}
		if got := n.Load(); got != tc.want {
			t.Errorf("%s: %d ranks went through two-phase I/O, want %d", tc.name, got, tc.want)
		}
	}
}

// BenchmarkFileWriteAt measures a small independent typed write, the
// per-call overhead of the MPI-IO layer over a pwrite.
func BenchmarkFileWriteAt(b *testing.B) {
	name := filepath.Join(b.TempDir(), "bench")
	err := Run(1, func(c *Comm) error {
		f, err := OpenFile(c, name, ModeCreate|ModeRdwr, nil)
		if err != nil {
			return err
		}
		vals := make([]float64, 8)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := WriteAt(f, 0, vals); err != nil {
				return err
			}
		}
		b.StopTimer()
		return f.Close()
	})
	if err != nil {
		b.Fatal(err)
	}
}
