package mpi

import (
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestCollectiveBufferingChoice checks when a collective write goes
// through two-phase I/O: an interleaved (strided) pattern does under the
// automatic setting, a segmented one (each rank one disjoint run) does
// not, and romio_cb_write=disable turns it off.
func TestCollectiveBufferingChoice(t *testing.T) {
	var n atomic.Int64
	twoPhaseHook = func() { n.Add(1) }
	defer func() { twoPhaseHook = nil }()
	dir := t.TempDir()
	cases := []struct {
		name    string
		strided bool
		hint    string
		want    int64
	}{
		{"strided", true, "automatic", 3},
		{"segmented", false, "automatic", 0},
		{"strided-disabled", true, "disable", 0},
		{"segmented-enabled", false, "enable", 3},
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
				ft, err := NewResized(Byte, 0, 3)
				if err == nil {
					err = ft.Commit()
				}
				if err == nil {
					err = f.SetView(int64(c.Rank()), Byte, ft, "native", nil)
				}
				if err != nil {
					return err
				}
			}
			off := int64(0)
			if !tc.strided {
				off = int64(10 * c.Rank())
			}
			if _, err := WriteAtAll(f, off, make([]byte, 10)); err != nil {
				return err
			}
			return f.Close()
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
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
