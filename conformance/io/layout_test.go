package io_test

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

func indexedInt32(blocklens, displs []int) (*mpi.Datatype, error) {
	dt, err := mpi.NewIndexed(blocklens, displs, mpi.Int32)
	if err != nil {
		return nil, err
	}
	return dt, dt.Commit()
}

// TestViewLayoutErrors, after MPICH's io/tst_fileview: an etype or a
// filetype with a negative displacement or decreasing displacements is
// refused with ErrIO (MPI_ERR_IO, ROMIO's class) on every rank, and one
// with overlapping regions too unless the file is read-only, where MPI
// allows it.
func TestViewLayoutErrors(t *testing.T) {
	layouts := []struct {
		name             string
		blocklens, disps []int
		readOnlyOK       bool
	}{
		{"negative", []int{1, 1}, []int{-2, 2}, false},
		{"decreasing", []int{1, 1}, []int{3, 0}, false},
		{"overlapping", []int{3, 1}, []int{0, 1}, true},
	}
	runFile(t, 2, "layout", func(c *mpi.Comm, name string) error {
		var e conformance.Errs
		for _, amode := range []int{mpi.ModeCreate | mpi.ModeRdwr, mpi.ModeRdonly} {
			f, err := open(c, name, amode)
			if err != nil {
				return err
			}
			ro := amode == mpi.ModeRdonly
			for _, l := range layouts {
				dt, err := indexedInt32(l.blocklens, l.disps)
				if err != nil {
					return err
				}
				for _, as := range []string{"etype", "filetype"} {
					et := mpi.Int32
					if as == "etype" {
						et = dt
					}
					err := f.SetView(0, et, dt, "native", nil)
					if ro && l.readOnlyOK {
						e.Addf(c, err == nil, "read-only file, %s %s: %v", l.name, as, err)
					} else {
						e.Addf(c, conformance.IsClass(err, mpi.ErrIO), "read-only %v, %s %s: want ErrIO, got %v", ro, l.name, as, err)
					}
				}
				if err := dt.Free(); err != nil {
					return err
				}
			}
			e.Add(f.Close())
		}
		return e.Err()
	})
}

// TestReadOnlyOverlappingView reads through a filetype whose regions
// overlap (ints 0, 1, 2 and then 1 again, extent 3 ints), allowed on a
// read-only file: every tile brings back its ints in type-map order,
// independently and collectively (two-phase forced).
func TestReadOnlyOverlappingView(t *testing.T) {
	const nints, per = 64, 20
	ref := make([]int32, nints)
	for i := range ref {
		ref[i] = int32(i * 3)
	}
	// want: tile k holds ints 3k, 3k+1, 3k+2, 3k+1 of the file.
	want := make([]int32, per)
	for i := range want {
		k, j := i/4, i%4
		want[i] = ref[3*k+[]int{0, 1, 2, 1}[j]]
	}
	for _, coll := range []bool{false, true} {
		mode := "independent"
		if coll {
			mode = "collective"
		}
		t.Run(mode, func(t *testing.T) {
			runFile(t, 2, "overlap", func(c *mpi.Comm, name string) error {
				if c.Rank() == 0 {
					if err := os.WriteFile(name, le32(ref), 0o644); err != nil {
						return err
					}
				}
				if err := c.Barrier(); err != nil {
					return err
				}
				in := mpi.NewInfo()
				_ = in.Set("romio_cb_read", "enable")
				f, err := mpi.OpenFile(c, name, mpi.ModeRdonly, in)
				if err != nil {
					return err
				}
				ft, err := indexedInt32([]int{3, 1}, []int{0, 1})
				if err != nil {
					return err
				}
				if err := f.SetView(0, mpi.Int32, ft, "native", nil); err != nil {
					return err
				}
				got := make([]int32, per)
				var st mpi.Status
				// Rank 1 starts one tile later.
				off := int64(4 * c.Rank())
				if coll {
					st, err = mpi.ReadAtAll(f, off, got)
				} else {
					st, err = mpi.ReadAt(f, off, got)
				}
				if err != nil {
					return err
				}
				w := want
				if c.Rank() == 1 {
					w = make([]int32, per)
					for i := range w {
						k, j := i/4+1, i%4
						w[i] = ref[3*k+[]int{0, 1, 2, 1}[j]]
					}
				}
				if st.Count() != per || !slices.Equal(got, w) {
					return fmt.Errorf("rank %d: read %d ints %v, want %v", c.Rank(), st.Count(), got, w)
				}
				return f.Close()
			})
		})
	}
}

// TestByteEtypeCharFiletype, after MPICH's io/i_hindexed: a filetype of
// MPI_CHAR (Int8) blocks under an etype of MPI_BYTE is a valid view
// (MPI_BYTE is untyped; ROMIO checks only the sizes); each rank writes
// its blocks through it and the file matches the reference.
func TestByteEtypeCharFiletype(t *testing.T) {
	const n, blk, nblk = 2, 5, 4
	runFile(t, n, "bytechar", func(c *mpi.Comm, name string) error {
		r := c.Rank()
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		lens, displs := make([]int, nblk), make([]int, nblk)
		for i := range lens {
			lens[i], displs[i] = blk, (i*n+r)*blk
		}
		ft, err := mpi.NewHindexed(lens, displs, mpi.Int8)
		if err != nil {
			return err
		}
		if err := ft.Commit(); err != nil {
			return err
		}
		if err := f.SetView(0, mpi.Byte, ft, "native", nil); err != nil {
			return err
		}
		data := make([]byte, blk*nblk)
		for i := range data {
			data[i] = byte(r*100 + i)
		}
		if _, err := f.WriteAtAll(0, data, len(data), mpi.Byte); err != nil {
			return err
		}
		got := make([]byte, len(data))
		if _, err := f.ReadAtAll(0, got, len(got), mpi.Byte); err != nil {
			return err
		}
		if !bytes.Equal(got, data) {
			return fmt.Errorf("rank %d: read back %v, want %v", r, got, data)
		}
		if err := f.Close(); err != nil {
			return err
		}
		if r == 0 {
			want := make([]byte, n*blk*nblk)
			for q := 0; q < n; q++ {
				for i := 0; i < blk*nblk; i++ {
					want[(i/blk*n+q)*blk+i%blk] = byte(q*100 + i)
				}
			}
			b, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			if !bytes.Equal(b, want) {
				return fmt.Errorf("file %v, want %v", b, want)
			}
		}
		return nil
	})
}
