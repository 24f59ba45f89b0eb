package mpi

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestCollectiveBufferingChoice checks when a collective write goes
// through two-phase I/O: an interleaved (strided) pattern of small pieces
// does under the automatic setting, on one node or several (a read on
// one node does not); one of pieces of largePiece bytes does not (each piece
// is a large write of its own), a segmented one (each rank one disjoint
// run) does not, romio_cb_write=disable turns it off and enable on. On
// one node, ranks that exchange by messages (tcp here) write pieces of
// directPiece bytes, or few pieces of directSmall bytes, themselves
// (directWrite), and aggregate many short ones; goroutine ranks, which
// aggregate without copies (file_share.go), write their own only pieces
// of directPiece bytes beyond sharedMax bytes in all (directShared). On
// several nodes they aggregate. The file's bytes are checked every time.
func TestCollectiveBufferingChoice(t *testing.T) {
	var n atomic.Int64
	twoPhaseHook = func() { n.Add(1) }
	defer func() { twoPhaseHook = nil }()
	dir := t.TempDir()
	cases := []struct {
		name    string
		strided bool
		piece   int // bytes of one piece of a strided pattern
		pieces  int // pieces of each rank (0: 10)
		hint    string
		perNode int // ranks per (pretend) node; 0: all on one
		want    int64
		tcp     bool // the ranks talk over tcp, not in memory
	}{
		{"strided", true, 1, 0, "automatic", 1, 3, false},
		{"strided-one-node", true, 1, 0, "automatic", 0, 3, false},
		{"strided-one-node-enabled", true, 1, 0, "enable", 0, 3, false},
		{"strided-large", true, largePiece, 0, "automatic", 1, 0, false},
		{"strided-large-enabled", true, largePiece, 0, "enable", 1, 3, false},
		{"segmented", false, 1, 0, "automatic", 1, 0, false},
		{"strided-disabled", true, 1, 0, "disable", 1, 0, false},
		{"segmented-enabled", false, 1, 0, "enable", 1, 3, false},
		{"strided-one-node-long", true, directPiece, directPieces/3 + 1, "automatic", 0, 3, false},
		{"strided-one-node-long-big", true, directPiece, sharedMax/(3*directPiece) + 1, "automatic", 0, 0, false},
		{"strided-one-node-long-big-enabled", true, directPiece, sharedMax/(3*directPiece) + 1, "enable", 0, 3, false},
		{"strided-one-node-short-big", true, directPiece - 1, sharedMax/(3*directPiece) + 2, "automatic", 0, 3, false},
		{"strided-long-nodes", true, directPiece, sharedMax/(3*directPiece) + 1, "automatic", 1, 3, false},
		{"tcp-strided-one-node-long", true, directPiece, directPieces/3 + 1, "automatic", 0, 0, true},
		{"tcp-strided-one-node-long-enabled", true, directPiece, directPieces/3 + 1, "enable", 0, 3, true},
		{"tcp-strided-one-node-few", true, directSmall, directPieces / 3, "automatic", 0, 0, true},
		{"tcp-strided-one-node-many", true, directSmall, directPieces/3 + 1, "automatic", 0, 3, true},
		{"tcp-strided-one-node-few-short", true, directSmall - 1, directPieces / 3, "automatic", 0, 3, true},
	}
	for _, tc := range cases {
		if tc.pieces == 0 {
			tc.pieces = 10
		}
		n.Store(0)
		name := filepath.Join(dir, tc.name)
		cfg := DefaultConfig()
		cfg.RanksPerNode = tc.perNode
		if tc.tcp {
			cfg.Transport = "tcp"
		}
		err := RunConfig(3, cfg, func(c *Comm) error {
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
			data := make([]byte, tc.pieces*tc.piece)
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
		if len(got) != 3*tc.pieces*tc.piece {
			t.Fatalf("%s: the file has %d bytes, want %d", tc.name, len(got), 3*tc.pieces*tc.piece)
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

// TestCollectiveReadChoice: a strided collective read goes through
// two-phase I/O when its ranks span nodes, and reads independently (data
// sieving) when they share one; both read the right bytes.
func TestCollectiveReadChoice(t *testing.T) {
	var n atomic.Int64
	twoPhaseHook = func() { n.Add(1) }
	defer func() { twoPhaseHook = nil }()
	for _, tc := range []struct {
		perNode int
		want    int64
	}{{1, 3}, {0, 0}} {
		name := filepath.Join(t.TempDir(), "f")
		cfg := DefaultConfig()
		cfg.RanksPerNode = tc.perNode
		err := RunConfig(3, cfg, func(c *Comm) error {
			f, err := OpenFile(c, name, ModeCreate|ModeRdwr, nil)
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				b := make([]byte, 30)
				for i := range b {
					b[i] = byte(i)
				}
				if _, err := WriteAt(f, 0, b); err != nil {
					return err
				}
			}
			if err := f.Sync(); err != nil {
				return err
			}
			if err := Barrier(c); err != nil {
				return err
			}
			n.Store(0)
			if err := Barrier(c); err != nil {
				return err
			}
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
			got := make([]byte, 10)
			if _, err := ReadAtAll(f, 0, got); err != nil {
				return err
			}
			for i, b := range got {
				if want := byte(3*i + c.Rank()); b != want {
					return fmt.Errorf("rank %d: byte %d is %d, want %d", c.Rank(), i, b, want)
				}
			}
			return f.Close()
		})
		if err != nil {
			t.Fatalf("%d ranks per node: %v", tc.perNode, err)
		}
		if got := n.Load(); got != tc.want {
			t.Errorf("%d ranks per node: %d ranks read through two-phase I/O, want %d", tc.perNode, got, tc.want)
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

// TestSyncOncePerNode: of the ranks of one node, exactly one flushes the
// file in Sync (File.syncs), and a Sync of 3 ranks that each wrote a
// block leaves every block in the file, read back through another
// descriptor; a read-only file's Sync flushes nothing and still agrees.
func TestSyncOncePerNode(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	var leaders atomic.Int32
	err := runWithin(t, 3, time.Minute, func(c *Comm) error {
		f, err := OpenFile(c, name, ModeCreate|ModeRdwr, nil)
		if err != nil {
			return err
		}
		if f.nodes != 1 {
			return fmt.Errorf("rank %d: %d nodes, want 1", c.Rank(), f.nodes)
		}
		if f.syncs {
			leaders.Add(1)
		}
		block := []byte{byte('a' + c.Rank()), byte('a' + c.Rank())}
		if _, err := f.WriteAt(int64(2*c.Rank()), block, 2, Byte); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		g, err := OpenFile(c, name, ModeRdonly, nil)
		if err != nil {
			return err
		}
		if err := g.Sync(); err != nil {
			return err
		}
		return g.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := leaders.Load(); n != 1 {
		t.Errorf("%d ranks flush the file in Sync, want 1", n)
	}
	if got, err := os.ReadFile(name); err != nil || string(got) != "aabbcc" {
		t.Errorf("file holds %q (%v), want aabbcc", got, err)
	}
}
