package mpi_test

import (
	"path/filepath"
	"testing"

	"github.com/mpigo/mpi"
)

// TestCollectiveFileAccessAllocs: a blocking collective read or write of
// a contiguous view allocates nothing: its transfer record is the
// file's, and the queue's road, the agreement and the first step
// allocate nothing.
// The least of three runs of 1000 calls, since AllocsPerRun counts the
// whole process's allocations.
func TestCollectiveFileAccessAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	name := filepath.Join(t.TempDir(), "allocs")
	err := mpi.Run(1, func(c *mpi.Comm) error {
		f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeRdwr, nil)
		if err != nil {
			return err
		}
		defer f.Close()
		buf := make([]byte, 4096)
		for _, tc := range []struct {
			name string
			op   func() (mpi.Status, error)
		}{
			{"WriteAtAll", func() (mpi.Status, error) { return f.WriteAtAll(0, buf, len(buf), mpi.Byte) }},
			{"ReadAtAll", func() (mpi.Status, error) { return f.ReadAtAll(0, buf, len(buf), mpi.Byte) }},
		} {
			least := 1e9
			for range 3 {
				var err error
				n := testing.AllocsPerRun(1000, func() {
					if _, e := tc.op(); e != nil {
						err = e
					}
				})
				if err != nil {
					return err
				}
				least = min(least, n)
			}
			if least > 0 {
				t.Errorf("%s allocates %v objects per call, want none", tc.name, least)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
