package io_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// TestFullDisk: writes to a device with no space (Linux's /dev/full, where
// every write fails with ENOSPC) fail with ErrNoSpace on every rank,
// independent or collective, through aggregators or not, and the error
// names the file, the call and, on a rank whose own part was not the one
// that failed, the rank that failed. Nothing hangs.
func TestFullDisk(t *testing.T) {
	const full = "/dev/full"
	if _, err := os.Stat(full); err != nil {
		t.Skipf("%s: %v (this test needs Linux's full device)", full, err)
	}
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		var e conformance.Errs
		for _, hint := range []string{"enable", "disable"} {
			in := mpi.NewInfo()
			e.Add(in.Set("romio_cb_write", hint))
			f, err := mpi.OpenFile(c, full, mpi.ModeWronly, in)
			if err != nil {
				return fmt.Errorf("open %s: %v", full, err)
			}
			block := make([]byte, 4096)
			_, err = f.WriteAtAll(int64(c.Rank())*4096, block, len(block), mpi.Byte)
			e.Addf(c, conformance.IsClass(err, mpi.ErrNoSpace), "WriteAtAll (romio_cb_write=%s): %v, want ErrNoSpace", hint, err)
			if err != nil {
				msg := err.Error()
				e.Addf(c, strings.Contains(msg, full) && strings.Contains(msg, "WriteAtAll"), "WriteAtAll's error does not name the file and the call: %v", err)
			}
			_, err = mpi.WriteAt(f, int64(c.Rank())*8, []int64{1})
			e.Addf(c, conformance.IsClass(err, mpi.ErrNoSpace), "WriteAt: %v, want ErrNoSpace", err)
			e.Add(f.Close())
		}
		return e.Err()
	})
}

// TestRankDiesInCollectiveWrite: under fault tolerance, a rank that dies
// instead of joining a collective write (two-phase, so the others wait
// for its data) makes every other rank's call fail promptly with
// ErrProcFailed or ErrRevoked naming the file (the file's communicator is
// revoked at the first failure seen, so no rank waits for one that gave
// up); nothing hangs, and the survivors' Close returns.
func TestRankDiesInCollectiveWrite(t *testing.T) {
	dir := t.TempDir()
	errDied := errors.New("simulated failure")
	for _, tr := range []string{"inproc", "shm", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			cfg := mpi.DefaultConfig()
			cfg.FT = true
			cfg.HangReport = 500 * time.Millisecond
			if tr != "inproc" {
				cfg.Transport = tr
			}
			name := fileName(dir, "dies")
			done := make(chan error, 1)
			go func() {
				done <- mpi.RunConfig(4, cfg, func(c *mpi.Comm) error {
					in := mpi.NewInfo()
					if err := in.Set("romio_cb_write", "enable"); err != nil {
						return err
					}
					f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeWronly, in)
					if c.Rank() == 3 {
						return errDied
					}
					// Rank 3 dies once its open has returned: the others
					// see it in the open's last step or in the write,
					// depending on where each was when it died.
					if err == nil {
						block := make([]byte, 1<<16)
						_, err = f.WriteAtAll(int64(c.Rank())<<16, block, len(block), mpi.Byte)
					}
					if !errors.Is(err, mpi.ErrProcFailed) && !errors.Is(err, mpi.ErrRevoked) {
						return fmt.Errorf("rank %d: OpenFile or WriteAtAll with a dead rank: %v, want ErrProcFailed or ErrRevoked", c.Rank(), err)
					}
					if msg := err.Error(); !strings.Contains(msg, filepath.Base(name)) {
						return fmt.Errorf("rank %d: the error does not name the file: %v", c.Rank(), err)
					}
					if f != nil {
						// Close is collective too: it fails, but returns.
						if err := f.Close(); err == nil {
							return fmt.Errorf("rank %d: Close after the failure succeeded", c.Rank())
						}
					}
					return nil
				})
			}()
			select {
			case err := <-done:
				if err == nil || err.Error() != "rank 3: "+errDied.Error() {
					t.Fatalf("job error %v; want only rank 3's simulated failure", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("the job did not end within 60s")
			}
		})
	}
}
