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
