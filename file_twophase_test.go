package mpi

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
)

// TestTwoPhaseRounds writes and reads strided patterns through two-phase
// I/O (forced by romio_cb_write and romio_cb_read) with many rounds:
// cb_buffer_size from a few KiB, unaligned, so that round and domain
// boundaries fall inside pieces; pieces that tile the file or leave
// holes (short holes are sieved, long ones written run by run, and a
// write-only file never reads them); views whose stream is not in file
// order; one to three aggregators. The file's bytes must be those that
// independent writes of the same views give over the same old contents,
// and a collective read must give every rank its bytes back.
func TestTwoPhaseRounds(t *testing.T) {
	var entered atomic.Int64
	twoPhaseHook = func() { entered.Add(1) }
	defer func() { twoPhaseHook = nil }()
	const n = 3
	cases := []struct {
		name    string
		piece   int   // bytes of one piece
		gap     int   // bytes of hole after each piece
		pieces  int   // pieces per rank
		cb      int64 // cb_buffer_size; 0: the default
		nodes   int   // cb_nodes; 0: the default (one per node)
		wronly  bool
		shuffle bool // tiles that interleave: the stream is out of file order
	}{
		{name: "tiling default", piece: 1000, pieces: 7},
		{name: "tiling 4KiB rounds", piece: 1000, pieces: 40, cb: 4096},
		{name: "tiling rounds mid-piece", piece: 4096, pieces: 9, cb: 3000, nodes: 2},
		{name: "one-byte rounds", piece: 5, pieces: 6, cb: 1, nodes: 3},
		{name: "short holes sieved", piece: 100, gap: 20, pieces: 50, cb: 4096},
		{name: "long holes run by run", piece: 20000, gap: 30000, pieces: 4, cb: 50000, nodes: 2},
		{name: "holes write-only", piece: 100, gap: 20, pieces: 30, cb: 2000, wronly: true},
		{name: "stream out of file order", piece: 300, pieces: 8, cb: 1024, nodes: 2, shuffle: true},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, perNode := range []int{0, 1} {
				entered.Store(0)
				names := [2]string{filepath.Join(dir, tc.name+"-coll"), filepath.Join(dir, tc.name+"-ind")}
				cfg := DefaultConfig()
				cfg.RanksPerNode = perNode
				err := RunConfig(n, cfg, func(c *Comm) error {
					return twoPhaseCase(c, names, tc.piece, tc.gap, tc.pieces, tc.cb, tc.nodes, tc.wronly, tc.shuffle)
				})
				if err != nil {
					t.Fatalf("%d ranks per node: %v", perNode, err)
				}
				coll, err := os.ReadFile(names[0])
				if err != nil {
					t.Fatal(err)
				}
				ind, err := os.ReadFile(names[1])
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(coll, ind) {
					i := 0
					for i < min(len(coll), len(ind)) && coll[i] == ind[i] {
						i++
					}
					t.Fatalf("%d ranks per node: the two-phase file (%d bytes) differs from the independent one (%d bytes) from byte %d", perNode, len(coll), len(ind), i)
				}
				// Write and read, every rank.
				if got := entered.Load(); got != 2*n {
					t.Errorf("%d ranks per node: %d ranks went through two-phase I/O, want %d", perNode, got, 2*n)
				}
			}
		})
	}
}

// twoPhaseCase is one rank's part of TestTwoPhaseRounds: the same view
// and data written collectively to names[0] and independently to
// names[1], both filled with old bytes first, then read back
// collectively from names[0].
func twoPhaseCase(c *Comm, names [2]string, piece, gap, pieces int, cb int64, nodes int, wronly, shuffle bool) error {
	n, r := c.Size(), c.Rank()
	unit := piece + gap
	span := n * unit * pieces
	if r == 0 {
		old := make([]byte, span+unit)
		for i := range old {
			old[i] = byte(0xA0 + i%7)
		}
		for _, name := range names {
			if err := os.WriteFile(name, old, 0o644); err != nil {
				return err
			}
		}
	}
	if err := Barrier(c); err != nil {
		return err
	}
	// Rank r's pieces: r, r+n, r+2n, ... of unit bytes each, the first
	// piece bytes of each written. Shuffled: rank r's slots 0, 3, 2, 5,
	// 4, 7, ... in stream order, by a filetype of two blocks, slots 0 and
	// 3, resized to two slots (its tiles interleave, sharing no byte).
	var ft *Datatype
	var err error
	if shuffle {
		ft, err = NewHindexed([]int{piece, piece}, []int{0, 3 * n * unit}, Byte)
		if err == nil {
			ft, err = NewResized(ft, 0, 2*n*unit)
		}
	} else {
		ft, err = NewVector(1, piece, n*unit, Byte)
		if err == nil {
			ft, err = NewResized(ft, 0, n*unit)
		}
	}
	if err == nil {
		err = ft.Commit()
	}
	if err != nil {
		return err
	}
	data := make([]byte, piece*pieces)
	for i := range data {
		data[i] = byte(r*37 + i*11 + i/251)
	}
	amode := ModeRdwr
	if wronly {
		amode = ModeWronly
	}
	for i, name := range names {
		in := NewInfo()
		if i == 0 {
			_ = in.Set("romio_cb_write", "enable")
		} else {
			_ = in.Set("romio_cb_write", "disable")
			_ = in.Set("romio_ds_write", "disable")
		}
		if cb > 0 {
			_ = in.Set("cb_buffer_size", strconv.FormatInt(cb, 10))
		}
		if nodes > 0 {
			_ = in.Set("cb_nodes", strconv.Itoa(nodes))
		}
		f, err := OpenFile(c, name, amode, in)
		if err != nil {
			return err
		}
		if err := f.SetView(int64(r*unit), Byte, ft, "native", nil); err != nil {
			return err
		}
		if i == 0 {
			_, err = f.WriteAtAll(0, data, len(data), Byte)
		} else {
			_, err = f.WriteAt(0, data, len(data), Byte)
		}
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	in := NewInfo()
	_ = in.Set("romio_cb_read", "enable")
	if cb > 0 {
		_ = in.Set("cb_buffer_size", strconv.FormatInt(cb, 10))
	}
	if nodes > 0 {
		_ = in.Set("cb_nodes", strconv.Itoa(nodes))
	}
	f, err := OpenFile(c, names[0], ModeRdonly, in)
	if err != nil {
		return err
	}
	if err := f.SetView(int64(r*unit), Byte, ft, "native", nil); err != nil {
		return err
	}
	got := make([]byte, len(data))
	st, err := f.ReadAtAll(0, got, len(got), Byte)
	if err != nil {
		return err
	}
	if st.Count() != len(data) || !bytes.Equal(got, data) {
		return fmt.Errorf("rank %d: ReadAtAll read %d bytes, want %d, or not the ones written", r, st.Count(), len(data))
	}
	return f.Close()
}

// TestTwoPhaseReadPastEnd: a two-phase read that runs past the end of
// the file, in windows of 256 bytes, counts the bytes before the end and
// reads them right, on every rank.
func TestTwoPhaseReadPastEnd(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	content := make([]byte, 1050)
	for i := range content {
		content[i] = byte(i*7 + 1)
	}
	if err := os.WriteFile(name, content, 0o644); err != nil {
		t.Fatal(err)
	}
	const n, piece = 3, 100
	err := Run(n, func(c *Comm) error {
		in := NewInfo()
		_ = in.Set("romio_cb_read", "enable")
		_ = in.Set("cb_buffer_size", "256")
		f, err := OpenFile(c, name, ModeRdonly, in)
		if err != nil {
			return err
		}
		r := c.Rank()
		ft, err := NewVector(1, piece, n*piece, Byte)
		if err == nil {
			ft, err = NewResized(ft, 0, n*piece)
		}
		if err == nil {
			err = ft.Commit()
		}
		if err == nil {
			err = f.SetView(int64(r*piece), Byte, ft, "native", nil)
		}
		if err != nil {
			return err
		}
		got := make([]byte, 10*piece)
		st, err := f.ReadAtAll(0, got, len(got), Byte)
		if err != nil {
			return err
		}
		var want []byte
		for k := 0; k < 10; k++ {
			lo := (k*n + r) * piece
			if lo >= len(content) {
				break
			}
			want = append(want, content[lo:min(lo+piece, len(content))]...)
		}
		if st.Count() != len(want) || !bytes.Equal(got[:len(want)], want) {
			return fmt.Errorf("rank %d: read %d bytes, want %d, or not the file's", r, st.Count(), len(want))
		}
		return f.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSieveOrDirect: an independent strided access is sieved when its
// pieces and holes are short and moves each piece by itself when they
// are long (sieveSpan); either way, a write leaves the holes' old bytes
// and a read gives the pieces back, up to the end of the file.
func TestSieveOrDirect(t *testing.T) {
	for _, tc := range []struct {
		name       string
		piece, gap int
	}{
		{"short pieces, sieved", 1000, 500},
		{"pieces of a few KiB: read sieved, written one call each", 3000, 1000},
		{"long pieces, one call each", 40000, 30000},
		{"long holes", 100, sieveSpan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "f")
			const pieces = 6
			unit := tc.piece + tc.gap
			old := make([]byte, unit*pieces)
			for i := range old {
				old[i] = byte(0xC0 + i%5)
			}
			if err := os.WriteFile(name, old, 0o644); err != nil {
				t.Fatal(err)
			}
			want := append([]byte(nil), old...)
			data := make([]byte, tc.piece*pieces)
			for i := range data {
				data[i] = byte(i*13 + i/97)
				k := i / tc.piece
				want[k*unit+i%tc.piece] = data[i]
			}
			err := Run(1, func(c *Comm) error {
				f, err := OpenFile(c, name, ModeRdwr, nil)
				if err != nil {
					return err
				}
				ft, err := NewVector(1, tc.piece, unit, Byte)
				if err == nil {
					ft, err = NewResized(ft, 0, unit)
				}
				if err := byteView(f, ft, err); err != nil {
					return err
				}
				if _, err := f.WriteAt(0, data, len(data), Byte); err != nil {
					return err
				}
				// One piece more than the file holds: the read stops at its end.
				got := make([]byte, len(data)+tc.piece)
				st, err := f.ReadAt(0, got, len(got), Byte)
				if err != nil {
					return err
				}
				if st.Count() != len(data) || !bytes.Equal(got[:len(data)], data) {
					return fmt.Errorf("read %d bytes, want %d, or not the ones written", st.Count(), len(data))
				}
				return f.Close()
			})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(name); !bytes.Equal(got, want) {
				t.Fatalf("the file's bytes are not the pieces over the old bytes")
			}
		})
	}
}

// TestSievedReadHoles: a sieved read puts each piece straight into its
// place and the holes into scratch (readSieved), with holes of every
// length up to the scratch's (junkMax), and the end of the file in a
// hole or in the middle of a piece.
func TestSievedReadHoles(t *testing.T) {
	// Holes of 200, 0, 1, 399, junkMax (the longest a group of sieved
	// pieces has: fileio.Groups cuts at longer ones), 100 and 100.
	displs := []int{0, 300, 400, 501, 1000, 1100 + junkMax, 1300 + junkMax, 1500 + junkMax}
	const piece = 100
	var want []byte
	file := make([]byte, displs[len(displs)-1]+piece)
	for i := range file {
		file[i] = byte(i*7 + i/251)
	}
	for _, d := range displs {
		want = append(want, file[d:d+piece]...)
	}
	for _, tc := range []struct {
		name string
		size int // the file's length
		n    int // the bytes the read gives
	}{
		{"whole", len(file), len(want)},
		{"end in a hole", displs[5] - 10, 5 * piece},
		{"end in a piece", displs[6] + 40, 6*piece + 40},
		{"end in the long hole", displs[4] + piece + junkMax/2, 5 * piece},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(name, file[:tc.size], 0o644); err != nil {
				t.Fatal(err)
			}
			err := Run(1, func(c *Comm) error {
				f, err := OpenFile(c, name, ModeRdonly, nil)
				if err != nil {
					return err
				}
				defer f.Close()
				ft, err := NewIndexedBlock(piece, displs, Byte)
				if err := byteView(f, ft, err); err != nil {
					return err
				}
				got := make([]byte, len(want))
				st, err := f.ReadAt(0, got, len(got), Byte)
				if err != nil {
					return err
				}
				if st.Count() != tc.n || !bytes.Equal(got[:tc.n], want[:tc.n]) {
					return fmt.Errorf("read %d bytes, want %d, or not the file's", st.Count(), tc.n)
				}
				if !bytes.Equal(got[tc.n:], make([]byte, len(got)-tc.n)) {
					return fmt.Errorf("bytes past the end of the file were written into the buffer")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// byteView commits ft, made with error err, and sets it as f's filetype
// over bytes.
func byteView(f *File, ft *Datatype, err error) error {
	if err == nil {
		err = ft.Commit()
	}
	if err == nil {
		err = f.SetView(0, Byte, ft, "native", nil)
	}
	return err
}
