package mpi

import (
	"errors"
	"fmt"
)

// failure is a request that failed in a call on many requests.
type failure struct {
	i   int // its index in the call's list
	r   *Request
	err error
}

// inStatus reports the failed requests of a call on many requests (op:
// WaitAll, TestSome, ...) as one *Error, as MPI reports MPI_ERR_IN_STATUS:
// it has the class, rank, communicator, peer and tag of the first
// failure, and every failure, each naming its index, as its cause (so
// errors.Is finds the class of any of them). nil if none failed.
func inStatus(op string, failed []failure) error {
	if len(failed) == 0 {
		return nil
	}
	first := failed[0]
	errs := make([]error, len(failed))
	idx := make([]int, len(failed))
	for k, f := range failed {
		errs[k] = fmt.Errorf("request %d: %w", f.i, f.err)
		idx[k] = f.i
	}
	class := ErrOther
	var inner *Error
	if errors.As(first.err, &inner) {
		class = inner.Class
	}
	msg := fmt.Sprintf("request %d failed", first.i)
	if len(failed) > 1 {
		msg = fmt.Sprintf("requests %v failed", idx)
	}
	e := first.r.c.errorf(op, class, first.r.at(), "%s", msg).(*Error)
	e.Cause = errors.Join(errs...)
	return e
}
