package mpi_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// A rank that fails while rendezvous transfers are in flight must not take
// the process down: late CTS, Fin and Data frames then reach engines that
// the failure has aborted, and they are dropped, not reported as protocol
// errors (which used to abort the job once more, with os.Exit). Run
// returns the failing rank's error. The race is narrow, so the job runs
// many times, for at most a second per transport.
func TestFailureDuringRendezvous(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.EagerLimit = 0
			deadline := time.Now().Add(time.Second)
			jobs := 0
			for ; jobs < 400 && time.Now().Before(deadline); jobs++ {
				failer := jobs % 10
				err := mpi.RunConfig(10, cfg, func(world *mpi.Comm) error {
					r, n := world.Rank(), world.Size()
					buf := make([]byte, 4096)
					for i := range 4 {
						if r == failer && i == 1 {
							return boom
						}
						rs, err := world.Isend(buf, len(buf), mpi.Byte, (r+1)%n, i)
						if err != nil {
							return err
						}
						rr, err := world.Irecv(make([]byte, len(buf)), len(buf), mpi.Byte, (r+n-1)%n, i)
						if err != nil {
							return err
						}
						if err := mpi.WaitAll(rs, rr); err != nil {
							return err
						}
					}
					return nil
				})
				if !errors.Is(err, boom) {
					t.Fatalf("job %d: Run returned %v, want the failing rank's error", jobs, err)
				}
				if errors.Is(err, mpi.ErrIntern) {
					t.Fatalf("job %d: internal error: %v", jobs, err)
				}
			}
			t.Logf("%d jobs", jobs)
		})
	}
}
