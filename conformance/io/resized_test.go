package io_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/mpigo/mpi"
)

// resizedCase is a filetype of int32s at byte displacements displs,
// resized to lb and extent (twice when twice is set, as MPICH's
// io/resized2 does), read and written through a view at disp.
type resizedCase struct {
	name        string
	displs      func(r int) []int // rank r's int32s, bytes from the tile's origin
	lb, extent  int
	disp        int
	twice       bool
	wantRefused bool
}

// resizedRef is the file n ranks leave when each writes per int32s
// (rank r's i-th is r*1000+i) through c's view, built byte by byte from
// MPI's definition: tile k starts at disp + k*extent and holds the
// int32s at disp + k*extent + displs[j], whatever the lower bound.
func resizedRef(c resizedCase, n, per int) []byte {
	var out []byte
	for r := 0; r < n; r++ {
		d := c.displs(r)
		for i := 0; i < per; i++ {
			off := c.disp + i/len(d)*c.extent + d[i%len(d)]
			if end := off + 4; end > len(out) {
				out = append(out, make([]byte, end-len(out))...)
			}
			binary.NativeEndian.PutUint32(out[off:], uint32(r*1000+i))
		}
	}
	return out
}

func resizedFiletype(c resizedCase, r int) (*mpi.Datatype, error) {
	d := c.displs(r)
	ones := make([]int, len(d))
	for i := range ones {
		ones[i] = 1
	}
	ft, err := mpi.NewHindexed(ones, d, mpi.Int32)
	if err != nil {
		return nil, err
	}
	if ft, err = mpi.NewResized(ft, c.lb, c.extent); err != nil {
		return nil, err
	}
	if c.twice {
		if ft, err = mpi.NewResized(ft, c.lb, c.extent); err != nil {
			return nil, err
		}
	}
	return ft, ft.Commit()
}

// TestResizedFiletypes: a filetype whose lower bound and extent were set
// by NewResized (MPI_Type_create_resized) tiles the file every extent
// bytes from the displacement, its data at the type map's displacements
// within each tile: a lower bound above the data (MPICH io/resized: an
// int with lb 4 and extent 12 puts the ints at bytes 0, 12, 24), a
// negative one, and data past the extent all place the bytes where MPI
// says, written and read independently and collectively; so do tiles
// that interleave without sharing a byte. A filetype whose tiles would
// share bytes is refused on every rank of a writable file.
func TestResizedFiletypes(t *testing.T) {
	const n, per = 2, 10
	cases := []resizedCase{
		{name: "lb-above-data", displs: func(r int) []int { return []int{4 * r} }, lb: 4, extent: 12},
		{name: "lb-above-data-twice", displs: func(r int) []int { return []int{4 * r} }, lb: 4, extent: 12, twice: true},
		{name: "lb-past-all-data", displs: func(r int) []int { return []int{4 * r, 8 + 4*r} }, lb: 20, extent: 16, disp: 8},
		{name: "negative-lb", displs: func(r int) []int { return []int{4 * r} }, lb: -8, extent: 8},
		{name: "data-past-extent", displs: func(r int) []int { return []int{16 + 4*r} }, lb: 0, extent: 8},
		{name: "gaps", displs: func(r int) []int { return []int{8 + 4*r, 20 + 4*r} }, lb: 4, extent: 40, disp: 4},
		// Tiles interleave (rank r's ints at 4r and 24+4r, extent 16:
		// tile 1 starts before tile 0's last int) without sharing a byte.
		{name: "interleaved-tiles", displs: func(r int) []int { return []int{4 * r, 24 + 4*r} }, lb: 0, extent: 16},
		{name: "overlapping-tiles", displs: func(r int) []int { return []int{0, 12 + 4*r} }, lb: 0, extent: 8, wantRefused: true},
	}
	for _, tc := range cases {
		for _, coll := range []bool{false, true} {
			mode := "independent"
			if coll {
				mode = "collective"
			}
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				runFile(t, n, "resized", func(c *mpi.Comm, name string) error {
					in := mpi.NewInfo()
					_ = in.Set("romio_cb_write", "enable")
					_ = in.Set("romio_cb_read", "enable")
					f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeRdwr, in)
					if err != nil {
						return err
					}
					r := c.Rank()
					ft, err := resizedFiletype(tc, r)
					if err != nil {
						return err
					}
					err = f.SetView(int64(tc.disp), mpi.Int32, ft, "native", nil)
					if tc.wantRefused {
						if err == nil {
							return fmt.Errorf("rank %d: SetView accepted a filetype whose tiles overlap", r)
						}
						return f.Close()
					}
					if err != nil {
						return err
					}
					vals := make([]int32, per)
					for i := range vals {
						vals[i] = int32(r*1000 + i)
					}
					// Two calls, the second at an offset within a tile,
					// so that offsets are mapped through the tiling too.
					h := per/2 + 1
					for _, part := range [][2]int{{0, h}, {h, per}} {
						if coll {
							_, err = mpi.WriteAtAll(f, int64(part[0]), vals[part[0]:part[1]])
						} else {
							_, err = mpi.WriteAt(f, int64(part[0]), vals[part[0]:part[1]])
						}
						if err != nil {
							return err
						}
					}
					if err := f.Sync(); err != nil {
						return err
					}
					if err := c.Barrier(); err != nil {
						return err
					}
					got := make([]int32, per)
					var st mpi.Status
					if coll {
						st, err = mpi.ReadAtAll(f, 0, got)
					} else {
						st, err = mpi.ReadAt(f, 0, got)
					}
					if err != nil {
						return err
					}
					if st.Count() != per || !slices.Equal(got, vals) {
						return fmt.Errorf("rank %d: read back %d elements %v, want %v", r, st.Count(), got, vals)
					}
					if err := f.Close(); err != nil {
						return err
					}
					if err := c.Barrier(); err != nil {
						return err
					}
					if r == 0 {
						b, err := os.ReadFile(name)
						if err != nil {
							return err
						}
						if want := resizedRef(tc, n, per); !bytes.Equal(b, want) {
							return fmt.Errorf("file differs from the reference:\n got %v\nwant %v", b, want)
						}
					}
					return nil
				})
			})
		}
	}
}
