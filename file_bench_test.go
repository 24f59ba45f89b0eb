package mpi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// TestIOBandwidth measures IOR-like patterns (MPIGO_IO_BENCH=1; not part
// of the normal run): total bytes written by n ranks to one file,
// segmented (a contiguous block per rank) and strided (pieces of piece
// bytes interleaved across ranks), collectively (WriteAtAll with
// collective buffering) and independently (WriteAt, no sieving, no
// aggregation), each followed by Sync inside the clock. MPIGO_IO_DIRS
// lists the directories to test (default /dev/shm and the test's temp dir).
func TestIOBandwidth(t *testing.T) {
	if os.Getenv("MPIGO_IO_BENCH") != "1" {
		t.Skip("set MPIGO_IO_BENCH=1 to measure")
	}
	const total = 64 << 20
	dirs := []string{"/dev/shm", t.TempDir()}
	if d := os.Getenv("MPIGO_IO_DIRS"); d != "" {
		dirs = filepath.SplitList(d)
	}
	piece := 4096
	for _, dir := range dirs {
		for _, n := range []int{2, 4} {
			for _, pat := range []string{"segmented", "strided"} {
				for _, mode := range []string{"collective", "independent"} {
					best := time.Duration(1 << 62)
					for rep := 0; rep < 3; rep++ {
						name := filepath.Join(dir, fmt.Sprintf("mpigo-iobench-%d", os.Getpid()))
						var el time.Duration
						err := mpi.Run(n, func(c *mpi.Comm) error {
							in := mpi.NewInfo()
							if mode == "independent" {
								_ = in.Set("romio_cb_write", "disable")
								_ = in.Set("romio_ds_write", "disable")
							}
							f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeWronly|mpi.ModeDeleteOnClose, in)
							if err != nil {
								return err
							}
							per := total / n
							buf := make([]byte, per)
							for i := range buf {
								buf[i] = byte(c.Rank() + i)
							}
							if pat == "strided" {
								blk, err := mpi.NewContiguous(piece, mpi.Byte)
								if err != nil {
									return err
								}
								ft, err := mpi.NewResized(blk, 0, piece*n)
								if err != nil {
									return err
								}
								if err := ft.Commit(); err != nil {
									return err
								}
								if err := f.SetView(int64(c.Rank()*piece), mpi.Byte, ft, "native", nil); err != nil {
									return err
								}
							}
							off := int64(0)
							if pat == "segmented" {
								off = int64(c.Rank() * per)
							}
							if err := c.Barrier(); err != nil {
								return err
							}
							t0 := time.Now()
							if mode == "collective" {
								_, err = f.WriteAtAll(off, buf, per, mpi.Byte)
							} else {
								_, err = f.WriteAt(off, buf, per, mpi.Byte)
							}
							if err != nil {
								return err
							}
							if err := f.Sync(); err != nil {
								return err
							}
							if c.Rank() == 0 {
								el = time.Since(t0)
							}
							return f.Close()
						})
						if err != nil {
							t.Fatal(err)
						}
						best = min(best, el)
					}
					t.Logf("%-20s %d ranks %-9s %-11s %8.0f MB/s", dir, n, pat, mode, float64(total)/best.Seconds()/1e6)
				}
			}
		}
	}
}
