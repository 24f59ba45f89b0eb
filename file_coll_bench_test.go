package mpi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
)

// BenchmarkFileStridedColl runs the strided pattern of mpigo bench
// io_strided_{write,read}_coll on 2 goroutine ranks: each rank every
// second piece, 16 pieces per rank per collective call. MPIGO_IO_DIR
// picks the directory (default the test's temp dir), MPIGO_IO_HINTS
// gives hints as key=value,key=value (romio_cb_write=disable, ...).
func BenchmarkFileStridedColl(b *testing.B) {
	dir := os.Getenv("MPIGO_IO_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	const n, pieces = 2, 16
	for _, write := range []bool{true, false} {
		for _, size := range []int{4096, 16384, 65536, 262144} {
			op := "read"
			if write {
				op = "write"
			}
			b.Run(fmt.Sprintf("%s/%d", op, size), func(b *testing.B) {
				name := filepath.Join(dir, fmt.Sprintf("mpigo-bench-coll-%d", os.Getpid()))
				defer os.Remove(name)
				b.SetBytes(int64(n * pieces * size))
				err := mpi.Run(n, func(c *mpi.Comm) error {
					in := mpi.NewInfo()
					for _, kv := range strings.Split(os.Getenv("MPIGO_IO_HINTS"), ",") {
						if k, v, ok := strings.Cut(kv, "="); ok {
							_ = in.Set(k, v)
						}
					}
					f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeRdwr, in)
					if err != nil {
						return err
					}
					defer f.Close()
					ft, err := mpi.NewVector(pieces, size, size*n, mpi.Byte)
					if err != nil {
						return err
					}
					if err := ft.Commit(); err != nil {
						return err
					}
					if err := f.SetView(int64(c.Rank()*size), mpi.Byte, ft, "native", nil); err != nil {
						return err
					}
					buf := make([]byte, pieces*size)
					if _, err := f.WriteAtAll(0, buf, len(buf), mpi.Byte); err != nil {
						return err
					}
					if err := c.Barrier(); err != nil {
						return err
					}
					if c.Rank() == 0 {
						b.ResetTimer()
					}
					for i := 0; i < b.N; i++ {
						if write {
							_, err = f.WriteAtAll(0, buf, len(buf), mpi.Byte)
						} else {
							_, err = f.ReadAtAll(0, buf, len(buf), mpi.Byte)
						}
						if err != nil {
							return err
						}
					}
					return c.Barrier()
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkFileSegmented runs the segmented pattern of mpigo bench
// io_seg_write on 2 goroutine ranks: each call, every rank writes one
// contiguous block of its own, collectively (coll) or not (ind), so the
// difference is what the collective's two steps cost. MPIGO_IO_DIR picks
// the directory (default the test's temp dir).
func BenchmarkFileSegmented(b *testing.B) {
	dir := os.Getenv("MPIGO_IO_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	const n = 2
	for _, coll := range []bool{true, false} {
		for _, size := range []int{4096, 65536, 1 << 20} {
			kind := "ind"
			if coll {
				kind = "coll"
			}
			b.Run(fmt.Sprintf("%s/%d", kind, size), func(b *testing.B) {
				name := filepath.Join(dir, fmt.Sprintf("mpigo-bench-seg-%d", os.Getpid()))
				defer os.Remove(name)
				b.SetBytes(int64(n * size))
				err := mpi.Run(n, func(c *mpi.Comm) error {
					f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeRdwr, nil)
					if err != nil {
						return err
					}
					defer f.Close()
					buf := make([]byte, size)
					if err := c.Barrier(); err != nil {
						return err
					}
					if c.Rank() == 0 {
						b.ResetTimer()
					}
					for i := 0; i < b.N; i++ {
						off := int64((i%64)*n+c.Rank()) * int64(size)
						if coll {
							_, err = f.WriteAtAll(off, buf, size, mpi.Byte)
						} else {
							_, err = f.WriteAt(off, buf, size, mpi.Byte)
						}
						if err != nil {
							return err
						}
					}
					return c.Barrier()
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
