package mpi

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// A real protocol error (a frame no engine can make sense of) fails a job
// of goroutine ranks, and Run returns it as ErrIntern; it does not exit
// the process, as it does for a process started by a launcher; also when
// no rank fails because of it.
func TestProtocolErrorUnderRun(t *testing.T) {
	bogus := wire.Frame{Header: wire.Header{Kind: wire.Fin, SendID: 12345}, From: 1, To: 0}
	for _, tc := range []struct {
		name    string
		waiting bool
	}{{"rank-waiting", true}, {"no-rank-failed", false}} {
		t.Run(tc.name, func(t *testing.T) {
			var j *job
			err := Run(2, func(w *Comm) error {
				if w.Rank() == 0 {
					j = w.p.job
				}
				if w.Rank() == 1 {
					if tc.waiting {
						_, _, err := Recv[int](w, 0, 1) // fails when the job goes down
						return err
					}
					return Barrier(w)
				}
				if !tc.waiting {
					if err := Barrier(w); err != nil {
						return err
					}
					w.p.Deliver(bogus)
					return nil
				}
				w.p.Deliver(bogus)
				return nil
			})
			if !errors.Is(err, ErrIntern) {
				t.Fatalf("Run returned %v, want ErrIntern", err)
			}
			if j == nil || j.Intern.Load() == nil {
				t.Fatal("the job did not record the internal error")
			}
		})
	}
}
