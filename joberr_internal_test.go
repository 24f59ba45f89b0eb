package mpi

import (
	"errors"
	"io"
	"testing"
)

// TestPrimaryErrorsKeepsAnError checks that what Main prints and the exit
// code it chooses treat an *Error as one error, although it unwraps to
// its class and its cause: primaryErrors used to split it into the two,
// printing the class apart from its message, and onlyPeerFailures judged
// an ErrProcFailed by its cause.
func TestPrimaryErrorsKeepsAnError(t *testing.T) {
	e := runErr(ErrOther, io.ErrUnexpectedEOF, "shm transport")
	if got := primaryErrors(e); got != e {
		t.Errorf("primaryErrors(%v) = %q, want the error itself", e, got)
	}
	bare := runErr(ErrArg, nil, "unknown transport")
	if got := primaryErrors(bare); got != bare {
		t.Errorf("primaryErrors(%v) = %q, want the error itself", bare, got)
	}
	lost := &Error{Class: ErrProcFailed, Op: "Recv", Rank: 1, Cause: io.EOF}
	if !onlyPeerFailures(lost) || !onlyPeerFailures(errors.Join(&RankError{Rank: 1, Err: lost}, lost)) {
		t.Errorf("onlyPeerFailures(%v) = false: its class is ErrProcFailed", lost)
	}
	if onlyPeerFailures(e) {
		t.Errorf("onlyPeerFailures(%v) = true", e)
	}
	// A join of a rank's own failure and another's loss keeps the first.
	own := &RankError{Rank: 0, Err: errors.New("rank 0's own error")}
	got := primaryErrors(errors.Join(own, &RankError{Rank: 1, Err: lost}))
	if got == nil || got.Error() != own.Error() {
		t.Errorf("primaryErrors of a join = %v, want %v", got, own)
	}
}
