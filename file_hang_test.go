package mpi_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// TestOpenFileIsNoHang: a rank that holds a file open (rank 0 serves the
// shared file pointer on a goroutine of its own, parked in a receive)
// and computes outside MPI for longer than the hang threshold is not
// blocked in MPI, and is not reported hung. mpi4py's test_io under
// mpigo run -n 1 was stopped as hung this way; a single rank, and two
// whose rank 1 waits in a Barrier, both failed before the fix.
func TestOpenFileIsNoHang(t *testing.T) {
	for _, n := range []int{1, 2} {
		cfg := mpi.DefaultConfig()
		cfg.HangReport = 200 * time.Millisecond
		name := filepath.Join(t.TempDir(), "f")
		err := mpi.RunConfig(n, cfg, func(c *mpi.Comm) error {
			f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeRdwr|mpi.ModeDeleteOnClose, nil)
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				time.Sleep(5 * cfg.HangReport) // computing, outside MPI
			}
			if err := mpi.Barrier(c); err != nil {
				return err
			}
			return f.Close()
		})
		if err != nil {
			t.Errorf("%d ranks: %v", n, err)
		}
	}
}

// TestOpenWindowIsNoHang: so with a window open, whose server goroutine
// waits in a receive on every rank. A job whose ranks compute outside MPI
// for longer than the hang threshold between creating a window and
// freeing it was stopped as hung (MPICH's rma/linked_list_bench_* under
// load, whose ranks only touch each other's windows directly), over
// every transport.
func TestOpenWindowIsNoHang(t *testing.T) {
	for _, tr := range []string{"inproc", "shm", "tcp"} {
		cfg := mpi.DefaultConfig()
		cfg.Transport = tr
		cfg.HangReport = 200 * time.Millisecond
		err := mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
			w, err := mpi.NewWindow[int64](c, 4)
			if err != nil {
				return err
			}
			time.Sleep(5 * cfg.HangReport) // every rank computing, outside MPI
			return w.Free()
		})
		if err != nil {
			t.Errorf("%s: %v", tr, err)
		}
	}
}
