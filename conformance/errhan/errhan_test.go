package errhan_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// A communicator's handler sees every failed call on it; errors classify
// with errors.Is and ErrorClass, and name the call and the rank (MPICH
// errhan/errfatal, adderr, commcall, errstring).
func TestHandlers(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		var seen []error
		h := mpi.NewErrHandler(func(_ *mpi.Comm, err error) { seen = append(seen, err) })
		d, err := c.Dup()
		if err != nil {
			return err
		}
		d.SetErrHandler(h)
		err = d.Send(nil, 0, mpi.Byte, 7, 0) // no rank 7
		if !errors.Is(err, mpi.ErrRank) || len(seen) != 1 || seen[0] != err {
			return fmt.Errorf("handler: err %v, seen %v", err, seen)
		}
		if mpi.ErrorClass(err) != mpi.ErrRank {
			return fmt.Errorf("ErrorClass: %v", mpi.ErrorClass(err))
		}
		var e *mpi.Error
		if !errors.As(err, &e) || e.Op != "Comm.Send" && e.Op != "Send" || !strings.Contains(err.Error(), "rank") {
			return fmt.Errorf("error names: %+v", e)
		}
		// The handler is per communicator: c still returns errors.
		if err := c.Send(nil, 0, mpi.Byte, 7, 0); !errors.Is(err, mpi.ErrRank) || len(seen) != 1 {
			return fmt.Errorf("c's error reached d's handler: %v %d", err, len(seen))
		}
		// CallErrHandler passes an error through it.
		if got := d.CallErrHandler(mpi.ErrOther); got != mpi.ErrOther || len(seen) != 2 {
			return fmt.Errorf("CallErrHandler: %v %d", got, len(seen))
		}
		return nil
	})
}

// User error classes and codes (MPI_Add_error_class, _code, _string).
func TestUserErrorClasses(t *testing.T) {
	class := mpi.AddErrorClass("conformance class")
	code, err := mpi.AddErrorCode(class, "conformance code")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(code, class) || mpi.ErrorClass(code) != class {
		t.Fatalf("code's class: %v", mpi.ErrorClass(code))
	}
	if err := mpi.AddErrorString(code, "renamed"); err != nil {
		t.Fatal(err)
	}
	if mpi.ErrorString(code) != "renamed" {
		t.Fatalf("ErrorString: %q", mpi.ErrorString(code))
	}
}

// Regression (issue 14): a rank that fails under Run while rendezvous
// transfers are in flight makes Run return its error; the late protocol
// frames that reach the aborted engines never end the process.
func TestFailingRankDoesNotExit(t *testing.T) {
	boom := errors.New("boom")
	for _, tr := range conformance.Transports() {
		t.Run(tr.Name, func(t *testing.T) {
			cfg := tr.Config
			cfg.EagerLimit = 0
			for job := range 20 {
				failer := job % 6
				tr := conformance.Transport{Name: tr.Name, Config: cfg}
				err := conformance.RunOne(tr, 6, func(w *mpi.Comm) error {
					r, n := w.Rank(), w.Size()
					buf := make([]byte, 4096)
					for i := range 3 {
						if r == failer && i == 1 {
							return boom
						}
						rs, err := w.Isend(buf, len(buf), mpi.Byte, (r+1)%n, i)
						if err != nil {
							return err
						}
						rr, err := w.Irecv(make([]byte, len(buf)), len(buf), mpi.Byte, (r+n-1)%n, i)
						if err != nil {
							return err
						}
						if err := mpi.WaitAll(rs, rr); err != nil {
							return err
						}
					}
					return nil
				})
				if !errors.Is(err, boom) || errors.Is(err, mpi.ErrIntern) {
					t.Fatalf("job %d: Run returned %v, want the failing rank's error", job, err)
				}
			}
		})
	}
}

// Abort under Run ends the job, not the process, and Run reports the
// code.
func TestAbortUnderRun(t *testing.T) {
	conformanceRunExpectAbort(t)
}

func conformanceRunExpectAbort(t *testing.T) {
	for _, tr := range conformance.Transports() {
		err := conformance.RunOne(tr, 3, func(w *mpi.Comm) error {
			if w.Rank() == 2 {
				mpi.Abort(w, 5)
			}
			_, _, err := mpi.Recv[int](w, 2, 0) // never sent
			return err
		})
		if code, ok := mpi.ExitCode(err); !ok || code != 5 {
			t.Errorf("%s: Run returned %v, want Abort's code 5", tr.Name, err)
		}
	}
}
