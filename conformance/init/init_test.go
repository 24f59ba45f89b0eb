package init_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Inside Run the library is initialized and not finalized; the version,
// thread level, processor name and clocks are available (MPICH
// init/version, finalized, init/exitst*, util/wtime).
func TestEnvironment(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if !mpi.Initialized() || mpi.Finalized() {
			return fmt.Errorf("Initialized %v Finalized %v inside Run", mpi.Initialized(), mpi.Finalized())
		}
		if v, s := mpi.GetVersion(); v != 4 || s != 1 {
			return fmt.Errorf("GetVersion: %d.%d", v, s)
		}
		if mpi.GetLibraryVersion() == "" {
			return fmt.Errorf("empty library version")
		}
		if mpi.QueryThread() != mpi.ThreadMultiple {
			return fmt.Errorf("QueryThread: %v", mpi.QueryThread())
		}
		name, err := mpi.GetProcessorName()
		if err != nil || name == "" {
			return fmt.Errorf("GetProcessorName: %q %v", name, err)
		}
		t0 := mpi.Wtime()
		time.Sleep(2 * time.Millisecond)
		if dt := mpi.Wtime() - t0; dt < 0.001 || dt > 5 {
			return fmt.Errorf("Wtime advanced %v s over 2 ms", dt)
		}
		if tick := mpi.Wtick(); tick <= 0 || tick > 0.01 {
			return fmt.Errorf("Wtick: %v", tick)
		}
		if c.World() == nil || c.Self().Size() != 1 {
			return fmt.Errorf("World/Self")
		}
		return nil
	})
}

// Run may be called again after it returned, and a rank's error comes
// back from Run (init/exitst2 in spirit).
func TestRunAgainAndErrors(t *testing.T) {
	for range 3 {
		conformance.Run(t, 2, func(c *mpi.Comm) error { return mpi.Barrier(c) })
	}
	for _, tr := range conformance.Transports() {
		err := conformance.RunOne(tr, 2, func(c *mpi.Comm) error {
			if c.Rank() == 1 {
				return fmt.Errorf("rank 1 says no")
			}
			return nil
		})
		if err == nil {
			t.Errorf("%s: Run returned nil for a failing rank", tr.Name)
		}
	}
}
